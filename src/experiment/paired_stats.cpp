#include "experiment/paired_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>

#include "core/error.h"
#include "core/rng.h"

namespace kvs::experiment {

namespace {

void check_scores(const std::vector<double>& scores, const std::string& what) {
  if (scores.empty()) throw Error(what + ": no scores (empty input)");
  for (size_t i = 0; i < scores.size(); ++i)
    if (!std::isfinite(scores[i]))
      throw Error(what + ": score " + std::to_string(i) + " is not a finite number");
}

void check_bootstrap(const Bootstrap& bootstrap) {
  if (bootstrap.resamples < 1)
    throw Error("bootstrap resamples must be at least 1 (got " +
                std::to_string(bootstrap.resamples) + ")");
}

double mean_of(const std::vector<double>& x) {
  return std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(x.size());
}

// The mean of x over n indices drawn with replacement.
double resampled_mean(const std::vector<double>& x, std::mt19937_64& gen) {
  const uint64_t n = x.size();
  double sum = 0;
  for (uint64_t i = 0; i < n; ++i) sum += x[bounded_draw(gen, n)];
  return sum / static_cast<double>(n);
}

// The q-quantile of sorted values, interpolated linearly between order statistics (numpy's
// default).
double quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  if (lo + 1 >= sorted.size()) return sorted.back();
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[lo + 1] - sorted[lo]);
}

// The estimate `value` with the 95% percentile interval of its resampled values.
Estimate with_interval(double value, std::vector<double> resampled, int64_t n,
                       const Bootstrap& bootstrap) {
  std::sort(resampled.begin(), resampled.end());
  Estimate e;
  e.value = value;
  e.low = quantile(resampled, 0.025);
  e.high = quantile(resampled, 0.975);
  e.n = n;
  e.bootstrap = bootstrap;
  return e;
}

}  // namespace

Estimate mean_with_interval(const std::vector<double>& scores, const Bootstrap& bootstrap) {
  check_scores(scores, "mean");
  check_bootstrap(bootstrap);
  std::mt19937_64 gen(bootstrap.seed);
  std::vector<double> means(static_cast<size_t>(bootstrap.resamples));
  for (double& m : means) m = resampled_mean(scores, gen);
  return with_interval(mean_of(scores), std::move(means), static_cast<int64_t>(scores.size()),
                       bootstrap);
}

Estimate macro_average(const std::vector<std::vector<double>>& datasets,
                       const Bootstrap& bootstrap) {
  if (datasets.empty()) throw Error("macro average: no datasets (empty input)");
  for (size_t d = 0; d < datasets.size(); ++d)
    check_scores(datasets[d], "macro average, dataset " + std::to_string(d));
  check_bootstrap(bootstrap);
  const double count = static_cast<double>(datasets.size());
  double value = 0;
  int64_t n = 0;
  for (const auto& scores : datasets) {
    value += mean_of(scores) / count;
    n += static_cast<int64_t>(scores.size());
  }
  // Stratified: each resample redraws every dataset's questions from that dataset, in order.
  std::mt19937_64 gen(bootstrap.seed);
  std::vector<double> macros(static_cast<size_t>(bootstrap.resamples));
  for (double& m : macros) {
    m = 0;
    for (const auto& scores : datasets) m += resampled_mean(scores, gen) / count;
  }
  return with_interval(value, std::move(macros), n, bootstrap);
}

PairedComparison compare_paired(const std::vector<double>& a, const std::vector<double>& b,
                                const Bootstrap& bootstrap) {
  check_scores(a, "paired comparison, method A");
  check_scores(b, "paired comparison, method B");
  if (a.size() != b.size())
    throw Error("paired comparison: method A has " + std::to_string(a.size()) +
                " scores and method B " + std::to_string(b.size()) +
                " (both must score the same questions)");
  PairedComparison c;
  c.mean_a = mean_of(a);
  c.mean_b = mean_of(b);
  std::vector<double> diff(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    diff[i] = a[i] - b[i];
    if (std::fabs(diff[i]) <= kTieTolerance) {
      diff[i] = 0;  // a tie contributes nothing, so identical methods give exactly [0, 0]
      ++c.ties;
    } else {
      ++(diff[i] > 0 ? c.wins : c.losses);
    }
  }
  c.difference = mean_with_interval(diff, bootstrap);  // resampling differences = paired indices
  c.p = sign_test_p(c.wins, c.losses);
  return c;
}

double sign_test_p(int64_t wins, int64_t losses) {
  if (wins < 0 || losses < 0) throw Error("sign test: negative counts");
  const int64_t n = wins + losses;
  const int64_t m = std::min(wins, losses);
  if (n == 0 || 2 * m >= n)
    return 1.0;  // all tied, or equal counts: the two tails cover everything
  // C(n, m) / 2^n as v * 2^e: the product of (n - m + i) / i, renormalised by frexp (exact) at
  // every step, so nothing overflows or underflows until the final ldexp.
  double v = 1;
  int e = 0;
  for (int64_t i = 1; i <= m; ++i) {
    v = v * static_cast<double>(n - m + i) / static_cast<double>(i);
    int k = 0;
    v = std::frexp(v, &k);
    e += k;
  }
  // P(X <= m) / P(X = m) = sum over k <= m of C(n, k) / C(n, m), added smallest first.
  std::vector<double> ratios{1.0};
  for (int64_t k = m; k > 0 && ratios.back() > 1e-20; --k)
    ratios.push_back(ratios.back() * static_cast<double>(k) / static_cast<double>(n - k + 1));
  const double sum = std::accumulate(ratios.rbegin(), ratios.rend(), 0.0);
  return std::min(1.0, std::ldexp(v * sum, e - static_cast<int>(n) + 1));  // + 1: both tails
}

HolmResult holm(const std::vector<double>& p_values, double alpha) {
  if (p_values.empty()) throw Error("Holm correction: no p-values (empty input)");
  for (size_t i = 0; i < p_values.size(); ++i)
    if (!(p_values[i] >= 0 && p_values[i] <= 1))
      throw Error("Holm correction: p-value " + std::to_string(i) + " is not in [0, 1]");
  const size_t m = p_values.size();
  std::vector<size_t> order(m);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return p_values[x] < p_values[y]; });
  HolmResult r;
  r.adjusted.resize(m);
  r.rejected.resize(m);
  double running = 0;  // step-down: an adjusted p-value never falls below a smaller p's
  for (size_t j = 0; j < m; ++j) {
    running = std::max(running, std::min(1.0, static_cast<double>(m - j) * p_values[order[j]]));
    r.adjusted[order[j]] = running;
    r.rejected[order[j]] = running <= alpha;
  }
  return r;
}

}  // namespace kvs::experiment
