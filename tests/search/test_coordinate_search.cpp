#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "core/error.h"
#include "search/coordinate_search.h"

namespace {

using kvs::search::EvaluatedState;
using kvs::search::SearchSettings;

// A scripted dev score: a smooth bump plus a deterministic ripple, so that some moves improve by
// more than tau and others do not.
double scripted_score(const std::vector<double>& a, int variant) {
  double s = 50;
  for (size_t i = 0; i < a.size(); ++i) {
    const double target = 0.3 * (static_cast<int>((i * 7 + variant) % 5) - 2);
    s -= 4 * (a[i] - target) * (a[i] - target);
    s += 0.07 * std::sin(13 * a[i] + variant + static_cast<double>(i));
  }
  return s;
}

struct RefState {
  std::vector<double> latent;
  int coordinate, direction;
  double score;
  bool accepted;
};

// The sequential search written plainly from the definition: cycle coordinates, + before -,
// accept on > tau, skip the way back after an acceptance, stop at the budget or when every
// neighbour of the current state has been tried.
std::vector<RefState> reference_search(std::vector<double> cur, const SearchSettings& s, int variant) {
  const int P = static_cast<int>(cur.size());
  std::vector<RefState> out;
  double cur_score = scripted_score(cur, variant);
  out.push_back({cur, -1, 0, cur_score, true});
  std::vector<bool> tried(2 * P, false);
  int pos = 0;
  while (static_cast<int>(out.size()) < s.max_evals) {
    int k = 0;
    while (k < 2 * P && tried[(pos + k) % (2 * P)]) ++k;
    if (k == 2 * P) break;
    const int slot = (pos + k) % (2 * P);
    const int c = slot / 2, d = slot % 2 == 0 ? 1 : -1;
    std::vector<double> cand = cur;
    cand[c] += d * s.step;
    const double sc = scripted_score(cand, variant);
    const bool acc = sc > cur_score + s.tau;
    out.push_back({cand, c, d, sc, acc});
    if (acc) {
      cur = cand;
      cur_score = sc;
      std::fill(tried.begin(), tried.end(), false);
      tried[2 * c + (d > 0 ? 1 : 0)] = true;  // the way back
      pos = (2 * c + 2) % (2 * P);
    } else {
      tried[slot] = true;
      pos = (slot + 1) % (2 * P);
    }
  }
  return out;
}

kvs::search::SearchResult run(const std::vector<double>& warm, const SearchSettings& s, int variant,
                              std::vector<EvaluatedState>* sunk,
                              const std::vector<EvaluatedState>& recorded = {}, int* evaluated = nullptr) {
  return kvs::search::coordinate_search(
      warm, s,
      [&](const std::vector<std::vector<double>>& batch) {
        std::vector<double> out;
        for (const auto& a : batch) out.push_back(scripted_score(a, variant));
        if (evaluated) *evaluated += static_cast<int>(batch.size());
        return out;
      },
      [&](const EvaluatedState& st) { sunk->push_back(st); }, recorded);
}

TEST(CoordinateSearch, BatchedEqualsSequentialReference) {
  for (int variant = 0; variant < 12; ++variant) {
    for (int max_evals : {1, 2, 7, 14, 34}) {
      SearchSettings s;
      s.max_evals = max_evals;
      const std::vector<double> warm = {0, 0, 0, std::asinh(-0.15), std::asinh(-0.15), std::asinh(-0.15)};
      const auto ref = reference_search(warm, s, variant);
      for (int spec : {1, 2, 5, 12, 40}) {
        s.speculation = spec;
        std::vector<EvaluatedState> sunk;
        const auto result = run(warm, s, variant, &sunk);
        ASSERT_EQ(result.states.size(), ref.size()) << "variant " << variant << " spec " << spec;
        ASSERT_EQ(sunk.size(), ref.size());
        for (size_t i = 0; i < ref.size(); ++i) {
          EXPECT_EQ(result.states[i].order, static_cast<int>(i));
          EXPECT_EQ(result.states[i].latent, ref[i].latent);
          EXPECT_EQ(result.states[i].move.coordinate, ref[i].coordinate);
          EXPECT_EQ(result.states[i].move.direction, ref[i].direction);
          EXPECT_EQ(result.states[i].dev_score, ref[i].score);
          EXPECT_EQ(result.states[i].accepted, ref[i].accepted);
          EXPECT_EQ(sunk[i].latent, ref[i].latent);
        }
      }
    }
  }
}

TEST(CoordinateSearch, AcceptsOnlyImprovementsAboveTau) {
  // Every move improves by exactly 0.1: with tau = 0.1 nothing is accepted.
  SearchSettings s;
  s.tau = 0.1;
  s.max_evals = 14;
  std::vector<EvaluatedState> sunk;
  const auto result = kvs::search::coordinate_search(
      {0, 0, 0}, s,
      [](const std::vector<std::vector<double>>& batch) {
        std::vector<double> out;
        for (const auto& a : batch) out.push_back((a[0] != 0 || a[1] != 0 || a[2] != 0) ? 10.1 : 10.0);
        return out;
      },
      [&](const EvaluatedState& st) { sunk.push_back(st); });
  EXPECT_EQ(result.states.size(), 7u);  // warm start + 6 neighbours, then a local optimum
  EXPECT_TRUE(result.converged);
  for (size_t i = 1; i < result.states.size(); ++i) EXPECT_FALSE(result.states[i].accepted);
  EXPECT_EQ(result.best_score, 10.0);
}

TEST(CoordinateSearch, BestSoFarIsMonotoneAndTracksAcceptedStates) {
  SearchSettings s;
  s.max_evals = 30;
  std::vector<EvaluatedState> sunk;
  const auto result = run({0, 0, 0, 0}, s, 3, &sunk);
  double best = result.states[0].dev_score;
  for (const auto& st : result.states) {
    if (st.accepted) best = st.dev_score;
    EXPECT_EQ(st.best_so_far, best);
  }
  EXPECT_EQ(result.best_score, best);
}

TEST(CoordinateSearch, ResumeReplaysRecordedStatesWithoutReevaluating) {
  SearchSettings s;
  s.max_evals = 14;
  s.speculation = 4;
  const std::vector<double> warm = {0, 0, 0, 0, 0, 0};
  std::vector<EvaluatedState> full_sunk;
  const auto full = run(warm, s, 5, &full_sunk);
  for (size_t cut : {size_t{1}, size_t{5}, full.states.size()}) {
    const std::vector<EvaluatedState> recorded(full.states.begin(), full.states.begin() + cut);
    std::vector<EvaluatedState> sunk;
    int evaluated = 0;
    const auto resumed = run(warm, s, 5, &sunk, recorded, &evaluated);
    ASSERT_EQ(resumed.states.size(), full.states.size());
    EXPECT_EQ(sunk.size(), full.states.size() - cut);  // recorded states are not recorded again
    for (size_t i = 0; i < full.states.size(); ++i)
      EXPECT_EQ(resumed.states[i].latent, full.states[i].latent);
    if (cut == full.states.size()) {
      EXPECT_EQ(evaluated, 0);
    }
  }
}

TEST(CoordinateSearch, ResumeRejectsForeignRecords) {
  SearchSettings s;
  std::vector<EvaluatedState> recorded(1);
  recorded[0].latent = {1, 2, 3};
  std::vector<EvaluatedState> sunk;
  EXPECT_THROW(run({0, 0, 0}, s, 0, &sunk, recorded), kvs::Error);
}

}  // namespace
