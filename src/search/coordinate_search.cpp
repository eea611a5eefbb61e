#include "search/coordinate_search.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace kvs::search {

namespace {

// The current state and which of its 2P neighbour moves are still untried.
class Neighbourhood {
 public:
  explicit Neighbourhood(int coordinates) : untried_(2 * coordinates, true) {}

  // Upcoming moves in cycle order from the cursor, assuming none is accepted.
  std::vector<Move> upcoming(int limit) const {
    std::vector<Move> moves;
    const int slots = static_cast<int>(untried_.size());
    for (int k = 0; k < slots && static_cast<int>(moves.size()) < limit; ++k) {
      const int slot = (cursor_ + k) % slots;
      if (untried_[slot]) moves.push_back(Move{slot / 2, slot % 2 == 0 ? +1 : -1});
    }
    return moves;
  }

  void rejected(const Move& m) {
    const int slot = slot_of(m);
    untried_[slot] = false;
    cursor_ = (slot + 1) % static_cast<int>(untried_.size());
  }

  // A new current state: all its neighbours are untried except the way back.
  void accepted(const Move& m) {
    untried_.assign(untried_.size(), true);
    const int back = slot_of(Move{m.coordinate, -m.direction});
    untried_[back] = false;
    cursor_ = (2 * m.coordinate + 2) % static_cast<int>(untried_.size());
  }

 private:
  static int slot_of(const Move& m) { return 2 * m.coordinate + (m.direction > 0 ? 0 : 1); }

  std::vector<bool> untried_;
  int cursor_ = 0;
};

bool same_latent(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::fabs(a[i] - b[i]) > 1e-9) return false;
  return true;
}

}  // namespace

SearchResult coordinate_search(const std::vector<double>& warm_start, const SearchSettings& settings,
                               const BatchEvaluator& evaluate, const StateSink& sink,
                               const std::vector<EvaluatedState>& recorded) {
  if (warm_start.empty()) throw Error("coordinate search: empty latent vector");
  if (settings.max_evals < 1) throw Error("coordinate search: max_evals must be >= 1");
  if (!(settings.step > 0)) throw Error("coordinate search: step must be positive");
  SearchResult result;
  const int coordinates = static_cast<int>(warm_start.size());

  // Scores for the next states in sequential order: a recorded state is replayed (one at a time,
  // so no speculation runs past a recorded acceptance); everything after is evaluated.
  auto score_batch = [&](const std::vector<std::vector<double>>& latents) {
    const size_t order = result.states.size();
    if (order < recorded.size()) {
      const EvaluatedState& r = recorded[order];
      if (latents.size() != 1 || !same_latent(r.latent, latents[0]))
        throw Error("resume: recorded state " + std::to_string(r.order) +
                    " does not match the search (different settings or code?)");
      return std::vector<double>{r.dev_score};
    }
    const std::vector<double> scores = evaluate(latents);
    if (scores.size() != latents.size())
      throw Error("coordinate search: the evaluator returned the wrong number of scores");
    ++result.batches;
    return scores;
  };
  auto emit = [&](EvaluatedState state) {
    state.order = static_cast<int>(result.states.size());
    if (static_cast<size_t>(state.order) >= recorded.size()) sink(state);
    result.states.push_back(std::move(state));
  };

  std::vector<double> current = warm_start;
  double current_score = score_batch({current})[0];
  emit(EvaluatedState{0, current, Move{}, current_score, true, current_score});

  Neighbourhood hood(coordinates);
  while (static_cast<int>(result.states.size()) < settings.max_evals) {
    const int remaining = settings.max_evals - static_cast<int>(result.states.size());
    const bool replaying = result.states.size() < recorded.size();
    const int width = replaying ? 1 : std::min(std::max(1, settings.speculation), remaining);
    const std::vector<Move> moves = hood.upcoming(width);
    if (moves.empty()) {
      result.converged = true;
      break;
    }
    std::vector<std::vector<double>> latents;
    for (const Move& m : moves) {
      std::vector<double> next = current;
      next[m.coordinate] += m.direction * settings.step;
      latents.push_back(std::move(next));
    }
    const std::vector<double> scores = score_batch(latents);
    for (size_t i = 0; i < moves.size(); ++i) {
      const bool improves = scores[i] > current_score + settings.tau;
      if (improves) {
        current = latents[i];
        current_score = scores[i];
        hood.accepted(moves[i]);
      } else {
        hood.rejected(moves[i]);
      }
      emit(EvaluatedState{0, latents[i], moves[i], scores[i], improves, current_score});
      if (improves) {
        result.discarded += static_cast<int>(moves.size() - i - 1);
        break;
      }
    }
  }
  if (!result.converged && hood.upcoming(1).empty()) result.converged = true;
  result.best_latent = current;
  result.best_score = current_score;
  return result;
}

}  // namespace kvs::search
