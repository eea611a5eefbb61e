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

#include <algorithm>
#include <cmath>
#include <limits>

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

// Rows of the cosine matrix computed at a time: [kv_heads, rows, n] floats within 64 MiB, so the
// n x n matrix (7.8 GB per layer at 15.6k tokens) is never held.
constexpr int64_t kRedundancyBytes = int64_t{64} << 20;

// [kv_heads, n]: the redundancy of every key, its column means accumulated over blocks of rows
// (every rule above is row-local).
at::Tensor redundancy(const at::Tensor& keys, double threshold) {
  const int64_t kv_heads = keys.size(0), n = keys.size(1);
  const at::Tensor unit = keys / (keys.norm(2, {-1}, true) + 1e-8);
  const int64_t block = std::max<int64_t>(1, kRedundancyBytes / (4 * kv_heads * n));
  const at::Tensor columns = at::arange(n, keys.options().dtype(at::kLong));
  at::Tensor sums = at::zeros({kv_heads, n}, keys.options());
  for (int64_t r0 = 0; r0 < n; r0 += block) {
    const int64_t rows = std::min(block, n - r0);
    at::Tensor c = at::matmul(unit.narrow(1, r0, rows), unit.transpose(1, 2));  // [kv, rows, n]
    c.diagonal(r0, 1, 2).zero_();  // row r0 + j, column r0 + j
    // Per row, the last column above the threshold (0 where none is): its entry is zeroed.
    const at::Tensor last = at::where(c > threshold, columns, at::zeros_like(columns)).amax(-1);
    c.scatter_(-1, last.unsqueeze(-1), 0.0);
    sums.add_(c.sum(1));
  }
  return at::softmax(sums / double(n), -1);  // column means, over all n
}

class RKv final : public Method {
 public:
  const MethodInfo& info() const override {
    static const MethodInfo info = method_info(
        "r_kv", "window attention (group max before softmax, max-pooled) minus key redundancy",
        "2505.24133", "Zefan-Cai/R-KV rkv/compression/r1_kv.py", "",
        "selected tokens + the W window", "tests/evict/test_rkv_reference.py",
        {integer_param("window", 8, 1, "observation window W, always kept"),
         integer_param("kernel", 7, 1, "max-pooling kernel of the importance"),
         number_param("mix_lambda", 0.07, 0, "weight of the importance"),
         number_param("threshold", 0.5, -1, "cosine above which a later key is a near-duplicate")},
        kNeedsWindowQueries);
    return info;
  }
  at::Tensor scores(const LayerView& view, const MethodParams& params) const override {
    const at::Tensor keys = view.keys.to(at::kFloat);
    const at::Tensor queries = view.window_queries.to(at::kFloat);
    const int64_t kv_heads = keys.size(0), n = keys.size(1), window = queries.size(1);
    const double lambda = params.at("mix_lambda");
    const at::Tensor a = importance(queries, keys, static_cast<int64_t>(params.at("kernel")));
    const at::Tensor r = redundancy(keys, params.at("threshold")).narrow(1, 0, n - window);
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
