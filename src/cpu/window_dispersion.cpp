#include "cpu/window_dispersion.h"

#include <cmath>
#include <vector>

#include "cpu/parallel_tasks.h"

namespace kvs::cpu {

WindowDispersion window_dispersion(const float* attention, const float* logits, int64_t heads,
                                   int64_t window, int64_t n, double gamma, float* indicator) {
  const int64_t prefix = n - window;
  std::vector<WindowDispersion> per_head(heads);  // summed in head order: the same each run
  for_each_task(
      heads, [&] { return std::vector<double>(2 * prefix); },
      [&](int64_t h, std::vector<double>& columns) {
        double* mean = columns.data();
        double* variance = columns.data() + prefix;
        std::fill(columns.begin(), columns.end(), 0.0);
        double entropy = 0;
        for (int64_t t = 0; t < window; ++t) {
          const float* a = attention + (h * window + t) * n;
          const float* s = logits + (h * window + t) * n;
          int64_t top = 0;
          for (int64_t j = 1; j < n; ++j) top = a[j] > a[top] ? j : top;
          const double lse = double(s[top]) - std::log(double(a[top]));
          double weighted = 0, total = 0;
          for (int64_t i = 0; i < prefix; ++i) {
            mean[i] += a[i];
            weighted += double(a[i]) * double(s[i]);
            total += a[i];
          }
          entropy += lse * total - weighted;  // -sum a (s - lse)
        }
        for (int64_t i = 0; i < prefix; ++i) mean[i] /= double(window);
        for (int64_t t = 0; t < window; ++t) {
          const float* a = attention + (h * window + t) * n;
          for (int64_t i = 0; i < prefix; ++i) variance[i] += (a[i] - mean[i]) * (a[i] - mean[i]);
        }
        double variance_sum = 0;
        float* out = indicator + h * prefix;
        for (int64_t i = 0; i < prefix; ++i) {
          const double v = variance[i] / double(window - 1);
          variance_sum += v;
          out[i] = static_cast<float>(mean[i] + gamma * v);
        }
        per_head[h] = {entropy, variance_sum};
      });
  WindowDispersion sum;
  for (const WindowDispersion& h : per_head) {
    sum.entropy += h.entropy;
    sum.variance += h.variance;
  }
  return sum;
}

}  // namespace kvs::cpu
