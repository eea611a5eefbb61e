// r_kv: importance minus redundancy (Cai et al., arXiv 2505.24133; reference Zefan-Cai/R-KV,
// rkv/compression/r1_kv.py and rkv/utils.py; not in kvpress), the published score closest to the
// paper's diverse one. Per KV head, over the prefix [0, n - W):
//   importance A_i: the W window queries' logits q.k / sqrt(d), the max over the group's query
//     heads BEFORE the softmax, a softmax over the prefix keys only, the mean over the W rows,
//     then max-pooling (kernel, stride 1, -inf padding);
//   redundancy R_i: with unit keys u = k / (||k|| + 1e-8) and C = u u^T over all n keys, diagonal
//     0, each row i zeroes its last entry above `threshold` (the most recent near-duplicate is
//     kept: R-KV's "last" direction; entry 0 where none is); R = softmax over all n of C's column
//     means, cut to the prefix;
//   s_i = mix_lambda A_i - (1 - mix_lambda) R_i.
// The W window positions are always kept: B = the top B - W of the prefix + the window.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>
#include <vector>

#include "evict/method.h"

namespace kvs::evict {
namespace {

// [kv_heads, n - W]: the importance of the prefix keys.
at::Tensor importance(const at::Tensor& queries, const at::Tensor& keys, int64_t kernel) {
  const int64_t kv_heads = keys.size(0), n = keys.size(1), d = keys.size(2);
  const int64_t window = queries.size(1), group = queries.size(0) / kv_heads;
  const at::Tensor prefix = keys.narrow(1, 0, n - window);
  // [kv_heads, group * W, n - W] logits, the group's max per window row.
  const at::Tensor logits =
      at::matmul(queries.reshape({kv_heads, group * window, d}), prefix.transpose(1, 2)) /
      std::sqrt(double(d));
  const at::Tensor grouped = std::get<0>(logits.view({kv_heads, group, window, n - window}).max(1));
  const at::Tensor mean = at::softmax(grouped, -1).mean(at::IntArrayRef{1});  // [kv_heads, n - W]
  if (kernel <= 1) return mean;
  return at::max_pool1d(mean.unsqueeze(0), {kernel}, {1}, {kernel / 2}).squeeze(0);
}

// Columns of the cosine matrix computed at a time, from the last: the rows still looking for
// their last near-duplicate against a block of keys.
constexpr int64_t kColumnBlock = 256;

// For each row i of one head's unit keys [n, d]: the column of its last near-duplicate (the
// largest j whose cosine with key i is above the threshold, the diagonal counting as 0; column 0
// where there is none, as R-KV's argmax of an all-false row gives) and the cosine there (the entry
// the rule zeroes). The cosines are computed in blocks of columns from the end for the rows still
// looking: where near-duplicates are common, most rows find theirs in the first block, and the
// n x n matrix is never held.
std::pair<at::Tensor, at::Tensor> last_duplicates(const at::Tensor& unit, double threshold) {
  const int64_t n = unit.size(0);
  const auto limit = static_cast<float>(threshold);  // compared in float, as ATen's c > threshold
  std::vector<int64_t> last(n, -1), pending(n);
  std::vector<float> cosine(n, 0.0f);
  std::iota(pending.begin(), pending.end(), int64_t{0});
  for (int64_t c1 = n; c1 > 0 && !pending.empty(); c1 -= kColumnBlock) {
    const int64_t c0 = std::max<int64_t>(0, c1 - kColumnBlock), cols = c1 - c0;
    const auto count = static_cast<int64_t>(pending.size());
    const at::Tensor rows = at::from_blob(pending.data(), {count}, at::kLong);
    const at::Tensor block =
        at::matmul(unit.index_select(0, rows), unit.narrow(0, c0, cols).t()).contiguous();
    const float* b = block.data_ptr<float>();
    at::parallel_for(0, count, 64, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        const int64_t i = pending[p];
        for (int64_t j = c1 - 1; j >= c0; --j) {
          const float c = j == i ? 0.0f : b[p * cols + j - c0];
          if (c > limit) {
            last[i] = j;
            cosine[i] = c;
            break;
          }
        }
      }
    });
    pending.erase(
        std::remove_if(pending.begin(), pending.end(), [&](int64_t i) { return last[i] >= 0; }),
        pending.end());
  }
  if (!pending.empty()) {  // none above the threshold: column 0 is zeroed (the diagonal is 0)
    const auto count = static_cast<int64_t>(pending.size());
    const at::Tensor rows = at::from_blob(pending.data(), {count}, at::kLong);
    const at::Tensor first = at::mv(unit.index_select(0, rows), unit[0]).contiguous();
    for (int64_t p = 0; p < count; ++p) {
      const int64_t i = pending[p];
      last[i] = 0;
      cosine[i] = i == 0 ? 0.0f : first.data_ptr<float>()[p];
    }
  }
  return {at::tensor(last, at::kLong), at::tensor(cosine, at::kFloat)};
}

// [kv_heads, n]: the redundancy of every key. The column sums of C = U U^T are U (sum of the unit
// keys): O(n d); the diagonal and each row's zeroed entry are subtracted after.
at::Tensor redundancy(const at::Tensor& keys, double threshold) {
  const int64_t kv_heads = keys.size(0), n = keys.size(1);
  const at::Tensor unit = (keys / (keys.norm(2, {-1}, true) + 1e-8)).contiguous();
  at::Tensor sums = at::empty({kv_heads, n}, keys.options());
  for (int64_t h = 0; h < kv_heads; ++h) {
    const at::Tensor u = unit[h];
    // The search walks rows on the host (a cache on a GPU lends it a copy of the unit keys).
    const auto [last, cosine] = last_duplicates(u.to(at::kCPU), threshold);
    sums[h] = at::mv(u, u.sum(0)) - (u * u).sum(-1);
    sums[h].index_add_(0, last.to(u.device()), -cosine.to(u.device()));
  }
  return at::softmax(sums / double(n), -1);  // column means, over all n
}

const Param<int64_t> kWindow = integer_param("window", 8, 1, "observation window W, always kept");
const Param<int64_t> kKernel =
    integer_param("kernel", 7, 1, "max-pooling kernel of the importance");
const Param<double> kMixLambda = number_param("mix_lambda", 0.07, 0, "weight of the importance");
const Param<double> kThreshold =
    number_param("threshold", 0.5, -1, "cosine above which a later key is a near-duplicate");

class RKv final : public Method {
 public:
  const MethodInfo& info() const override {
    static const MethodInfo info{
        .name = "r_kv",
        .summary = "window attention (group max before softmax, max-pooled) minus key redundancy",
        .paper = "2505.24133",
        .code = "Zefan-Cai/R-KV rkv/compression/r1_kv.py",
        .budget = "selected tokens + the W window",
        .checked = "tests/evict/test_rkv_reference.py",
        .params = {kWindow.spec, kKernel.spec, kMixLambda.spec, kThreshold.spec},
        .needs = kNeedsWindowQueries,
        .budget_free = true};
    return info;
  }
  int64_t observation_window(const Params& params) const override { return params.get(kWindow); }
  int64_t always_kept(const Params& params) const override { return params.get(kWindow); }
  at::Tensor scores(const LayerView& view, const Params& params) const override {
    const at::Tensor keys = view.keys.to(at::kFloat);
    const at::Tensor queries = view.window_queries.to(at::kFloat);
    const int64_t kv_heads = keys.size(0), n = keys.size(1), window = queries.size(1);
    const double lambda = params.get(kMixLambda);
    const at::Tensor a = importance(queries, keys, params.get(kKernel));
    const at::Tensor r = redundancy(keys, params.get(kThreshold)).narrow(1, 0, n - window);
    at::Tensor score =
        at::full({kv_heads, n}, std::numeric_limits<float>::infinity(), keys.options());
    score.narrow(1, 0, n - window).copy_(lambda * a - (1 - lambda) * r);
    return score;
  }
};

const RKv method;
const MethodRegistration registration(method);

}  // namespace
}  // namespace kvs::evict
