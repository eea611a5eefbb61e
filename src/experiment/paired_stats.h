// Statistics for paired comparisons of methods from recorded per-question scores (points, 0-100):
// a mean with its bootstrap interval, a macro average over datasets, a paired comparison of two
// methods on the same questions (difference, interval, wins / losses / ties, exact sign test) and
// Holm's correction over a family of comparisons. Pure functions, torch-free. The bootstrap draws
// from std::mt19937_64 through core/rng.h, so its intervals are identical on every machine.
#pragma once

#include <cstdint>
#include <vector>

namespace kvs::experiment {

// A percentile bootstrap: `resamples` resamples of the questions drawn with `seed`; the interval
// is the 2.5th and 97.5th percentiles of the resampled statistic (numpy's default, linear
// interpolation between order statistics).
struct Bootstrap {
  uint64_t seed = 0;
  int64_t resamples = 10000;
};

// An estimate with its 95% bootstrap interval and what it was computed from.
struct Estimate {
  double value = 0;
  double low = 0, high = 0;
  int64_t n = 0;  // questions (over every dataset for a macro average)
  Bootstrap bootstrap;
};

// The mean of `scores` with its interval over the questions.
Estimate mean_with_interval(const std::vector<double>& scores, const Bootstrap& bootstrap = {});

// The macro average (the mean of the datasets' means). Its bootstrap is stratified: each resample
// draws each dataset's questions from that dataset only, so every dataset keeps its weight.
Estimate macro_average(const std::vector<std::vector<double>>& datasets,
                       const Bootstrap& bootstrap = {});

// Method A against method B on the same questions (a[i] and b[i] answer question i).
struct PairedComparison {
  double mean_a = 0, mean_b = 0;
  Estimate difference;  // mean of a[i] - b[i]; the bootstrap resamples question indices, paired
  int64_t wins = 0, losses = 0, ties = 0;  // a[i] > b[i], a[i] < b[i], equal (within kTieTolerance)
  double p = 1;                            // exact two-sided sign test over the non-tied pairs
};

// Two scores closer than this count as a tie: recorded scores of one scorer are exact, so this only
// absorbs rounding in scores a caller computed itself.
constexpr double kTieTolerance = 1e-9;

PairedComparison compare_paired(const std::vector<double>& a, const std::vector<double>& b,
                                const Bootstrap& bootstrap = {});

// The exact two-sided sign test: P(X <= min) + P(X >= max) for X ~ Binomial(wins + losses, 1/2),
// capped at 1; 1 when there is no non-tied pair. Accurate to about 1e-13 for n up to several
// thousand (a scaled product, no log-gamma).
double sign_test_p(int64_t wins, int64_t losses);

// Holm's step-down correction of a family of p-values at `alpha`.
struct HolmResult {
  std::vector<double> adjusted;  // per input p-value, in input order: monotone in p, capped at 1
  std::vector<bool> rejected;    // adjusted <= alpha: the comparison survives the correction
};

HolmResult holm(const std::vector<double>& p_values, double alpha = 0.05);

}  // namespace kvs::experiment
