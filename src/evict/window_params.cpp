#include "evict/window_params.h"

namespace kvs::evict {

const WindowParams& window_params() {
  static const WindowParams params{
      integer_param("window", 8, 1, "observation window W: the last W prompt tokens, kept"),
      integer_param("kernel", 7, 1, "pooling kernel along the tokens (odd)"),
      choice_param("pooling", "max", {"max", "avg", "none"},
                   "max, avg (kvpress's, zero padding counted) or none"),
      choice_param("granularity", "query_head", {"query_head", "kv_head"},
                   "query_head (K/V repeated per query head) or kv_head (kvpress's)"),
      choice_param("group_reduce", "mean", {"mean", "max"}, "kv_head: mean or max over the group"),
      choice_param("schedule", "uniform", {"uniform", "pyramid"}, "uniform or pyramid budgets"),
      integer_param("beta", 20, 1, "pyramid: the smallest layer selects (B - W) / beta"),
      boolean_param("redistribute", false, "pyramid: total equal to the uniform one"),
      boolean_param("mean", true, "score term: the mean attention mu"),
      boolean_param("dispersion", false, "score term: lambda1 x the standard deviation sigma"),
      profile_param("lambda1", Profile::global(0.0),
                    "dispersion coefficient: a profile (global, segments, curve) over depth"),
      boolean_param("corr", true, "objective term: lambda2 x the redundancy corr(i, S)"),
      profile_param("lambda2", Profile::global_lambda(kGlobalLambda2),
                    "redundancy coefficient, a profile as lambda1 (default: lambda2 = -0.15)"),
      integer_param("candidate_factor", 4, 1, "greedy candidates: the top factor x B_sel tokens")};
  return params;
}

BudgetSpec window_budget_spec(const Params& params, int64_t budget) {
  const WindowParams& w = window_params();
  BudgetSpec spec;
  spec.schedule = parse_schedule(params.get(w.schedule), "schedule");
  spec.budget = budget;
  spec.window = params.get(w.window);
  spec.beta = params.get(w.beta);
  spec.redistribute = params.get(w.redistribute);
  return spec;
}

double lambda1_at(const Params& params, int64_t layer, int64_t num_layers) {
  const WindowParams& w = window_params();
  return params.get(w.dispersion) ? params.get(w.lambda1).lambda_at(layer, num_layers) : 0.0;
}

double lambda2_at(const Params& params, int64_t layer, int64_t num_layers) {
  const WindowParams& w = window_params();
  if (!params.has(w.corr) || !params.get(w.corr)) return 0.0;
  return params.get(w.lambda2).lambda_at(layer, num_layers);
}

Profile profile_or_zero(const Params& params, const Param<Profile>& which) {
  return params.has(which) ? params.get(which) : Profile::global(0.0);
}

}  // namespace kvs::evict
