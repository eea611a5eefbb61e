#include "cpu/lag_statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "cpu/parallel_tasks.h"

namespace kvs::cpu {

void lag_chunk_scores(const float* states, int64_t heads, int64_t n, int64_t d, int64_t first,
                      int64_t chunks, int64_t lag, float* out) {
  const int64_t scored = chunks - 1;
  for_each_task(
      heads * scored, [&] { return std::vector<float>(3 * d); },
      [&](int64_t task, std::vector<float>& bounds) {
        const int64_t h = task / scored, c = task % scored;
        const float* chunk = states + (h * n + first + c * lag) * d;
        const float* reference = chunk + lag * d;
        float* low = bounds.data();
        float* range = bounds.data() + d;
        float* x = bounds.data() + 2 * d;  // a row rescaled
        std::copy(reference, reference + d, low);
        std::copy(reference, reference + d, range);  // the maximum, until the range below
        for (int64_t r = 1; r < lag; ++r) {
          const float* row = reference + r * d;
          for (int64_t e = 0; e < d; ++e) {
            low[e] = std::min(low[e], row[e]);
            range[e] = std::max(range[e], row[e]);
          }
        }
        for (int64_t e = 0; e < d; ++e) range[e] -= low[e];
        float* scores = out + task * lag;
        float top = -std::numeric_limits<float>::infinity();
        bool nan = false;
        for (int64_t r = 0; r < lag; ++r) {
          const float* row = chunk + r * d;
          for (int64_t e = 0; e < d; ++e) x[e] = (row[e] - low[e]) / range[e];
          double sum = 0;
          for (int64_t e = 0; e < d; ++e) sum += x[e];
          const double mean = sum / double(d);
          double squares = 0;
          for (int64_t e = 0; e < d; ++e) squares += (x[e] - mean) * (x[e] - mean);
          scores[r] = static_cast<float>(std::sqrt(squares / double(d - 1)));
          nan = nan || std::isnan(scores[r]);
          top = std::max(top, scores[r]);
        }
        if (nan) {  // softmax over a chunk holding NaN: NaN throughout
          std::fill(scores, scores + lag, std::numeric_limits<float>::quiet_NaN());
          return;
        }
        double total = 0;
        for (int64_t r = 0; r < lag; ++r) {
          scores[r] = std::exp(scores[r] - top);
          total += scores[r];
        }
        for (int64_t r = 0; r < lag; ++r) scores[r] = static_cast<float>(scores[r] / total);
      });
}

}  // namespace kvs::cpu
