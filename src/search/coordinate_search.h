// The paper's first-improvement coordinate search over a latent vector (the a-space parameters of
// the lambda1 and lambda2 profiles, lambda1's first), as a pure algorithm over a batch evaluator.
//
// Sequential definition (the reference the batched form must reproduce exactly):
//   - evaluation 1 is the warm start (the Global setting); it is the current state.
//   - moves cycle over coordinates 0..P-1, trying +step then -step on each. A move whose dev score
//     beats the current score by more than tau is accepted and becomes the current state; the
//     opposite move on the same coordinate is then skipped (it leads back to a worse state).
//   - the search ends after max_evals evaluations (the warm start counts), or when every neighbour
//     of the current state has been tried without improvement (a local optimum).
// Because one prefill serves many policies, run() may evaluate the next `speculation` moves in one
// batch, assuming none is accepted; results past the first accepted move are discarded, so the
// recorded states, their order and the evaluation count are exactly the sequential search's.
#pragma once

#include <functional>
#include <vector>

namespace kvs::search {

struct SearchSettings {
  double step = 0.3;
  double tau = 0.1;
  int max_evals = 14;
  int speculation = 12;  // moves evaluated per batch (1 = strictly sequential)
};

struct Move {
  int coordinate = -1;  // -1: the warm start
  int direction = 0;    // +1 or -1
};

struct EvaluatedState {
  int order = 0;  // 0-based position in the sequential search
  std::vector<double> latent;
  Move move;
  double dev_score = 0;
  bool accepted = false;     // became the current state (the warm start is accepted)
  double best_so_far = 0;    // the current state's score after this evaluation
};

// Scores a batch of latent vectors (dev split); returns one score per vector, in order.
using BatchEvaluator = std::function<std::vector<double>(const std::vector<std::vector<double>>&)>;
// Called once per sequentially-evaluated state, in order, before the search goes on (recording).
using StateSink = std::function<void(const EvaluatedState&)>;

struct SearchResult {
  std::vector<EvaluatedState> states;
  std::vector<double> best_latent;
  double best_score = 0;
  int batches = 0;          // evaluator calls
  int discarded = 0;        // speculative evaluations past an accepted move
  bool converged = false;   // stopped at a local optimum rather than the budget
};

// `recorded`: states of an interrupted run, in order; they are replayed (not re-evaluated) after
// checking that the search reaches the same latent vectors, and not passed to `sink` again.
SearchResult coordinate_search(const std::vector<double>& warm_start, const SearchSettings& settings,
                               const BatchEvaluator& evaluate, const StateSink& sink,
                               const std::vector<EvaluatedState>& recorded = {});

}  // namespace kvs::search
