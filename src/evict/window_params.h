// The parameters of the window-statistics methods (snapkv, pyramidkv and the paper's diverse
// score, window_scoring.h), declared once: the handles their files, the score (score.h), the
// search's profile families and the experiment specs read and set. Torch-free.
#pragma once

#include <cstdint>
#include <string>

#include "evict/budget.h"
#include "evict/params.h"

namespace kvs::evict {

struct WindowParams {
  Param<int64_t> window;            // W: the last W prompt tokens observe and are kept
  Param<int64_t> kernel;            // pooling kernel along the tokens (odd)
  Param<std::string> pooling;       // max | avg | none
  Param<std::string> granularity;   // query_head | kv_head
  Param<std::string> group_reduce;  // kv_head: mean | max over the query-head group
  Param<std::string> schedule;      // uniform | pyramid
  Param<int64_t> beta;              // pyramid: the smallest layer selects (B - W) / beta
  Param<bool> redistribute;         // pyramid: the total equal to the uniform one
  Param<bool> mean;                 // the score's terms (docs/reference.md §1, Table 3)
  Param<bool> dispersion;
  Param<Profile> lambda1;  // the dispersion coefficient's profile over depth
  // The greedy admission's (diverse only):
  Param<bool> corr;
  Param<Profile> lambda2;           // the redundancy coefficient's profile over depth
  Param<int64_t> candidate_factor;  // candidates: the top factor x B_sel tokens
};

// The score-term switches of the ablations (docs/reference.md §1, Table 3), as a spec or a run
// request states them: s = [mean] mu + [dispersion] lambda1 sigma; objective s~ + [corr] lambda2
// corr.
struct ScoreTerms {
  bool mean = true;
  bool dispersion = true;
  bool corr = false;
  bool operator==(const ScoreTerms& o) const {
    return mean == o.mean && dispersion == o.dispersion && corr == o.corr;
  }
};

// The handles (built on first use, so that every file may read them from its own statics).
const WindowParams& window_params();

// The paper's default Global redundancy coefficient (lambda2 = -0.15).
inline constexpr double kGlobalLambda2 = -0.15;

// A declaration with another default (snapkv's uniform schedule, diverse's dispersion term).
template <class T>
ParamSpec with_default(const Param<T>& param, T fallback) {
  ParamSpec spec = param.spec;
  spec.fallback = std::move(fallback);
  return spec;
}

// The policy's layer schedule as budget.h computes it, at budget B.
BudgetSpec window_budget_spec(const Params& params, int64_t budget);
// The coefficients a layer uses; 0 where the term is off (lambda2: or not declared).
double lambda1_at(const Params& params, int64_t layer, int64_t num_layers);
double lambda2_at(const Params& params, int64_t layer, int64_t num_layers);
// The profile of a coefficient, or the zero profile where the method does not declare it (what
// the search records for every policy).
Profile profile_or_zero(const Params& params, const Param<Profile>& which);

}  // namespace kvs::evict
