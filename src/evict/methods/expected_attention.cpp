// expected_attention: the attention future queries are expected to pay each key (Devoto et al.,
// arXiv 2510.00636; kvpress's ExpectedAttentionPress). Per query head, the mean mu and the biased
// covariance S of the queries before RoPE over positions t >= n_sink are rotated by the RoPE
// matrix averaged over the next F positions n .. n + F - 1 (half-split layout: R_p = diag(cos_p)
// + diag(sin_p) P, P = [[0, -I], [I, 0]]): mu' = R mu, S' = R S R^T. Then, over keys i >= n_sink,
// z_i = mu' . k_i / sqrt(d) + k_i^T S' k_i / (2 d), e = softmax(z), averaged over the KV head's
// group, and s_i = (e_i + epsilon) ||v_i|| with use_vnorm. The n_sink first keys are always kept.
// While decoding (decoding.h) the statistics come from the buffered steps' queries (the first
// n_sink rows left out, as kvpress does with its buffer) and the future positions start at the
// next position the model writes; kvpress 0.5.5 starts them at the buffer's length instead
// (apply_avg_rope's q_len), positions a long decode has left behind.
// kvpress's registry entry "expected_attention" wraps this press in AdaKV with epsilon 1e-2; this
// is the press itself, with its own defaults.
#include <ATen/ATen.h>

#include <cmath>
#include <limits>

#include "evict/method.h"

namespace kvs::evict {
namespace {

// The RoPE rotation averaged over positions first .. first + count - 1, [d, d]: the rotation is
// linear in cos and sin, so it is the rotation of the averaged tables.
at::Tensor averaged_rotation(const at::Tensor& inv_freq, int64_t first, int64_t count, int64_t d) {
  const at::Tensor positions = at::arange(first, first + count, inv_freq.options());
  const at::Tensor angles = at::outer(positions, inv_freq);  // [count, d / 2]
  const at::Tensor cos = at::cat({angles.cos(), angles.cos()}, 1).mean(0);
  const at::Tensor sin = at::cat({angles.sin(), angles.sin()}, 1).mean(0);
  const int64_t half = d / 2;
  at::Tensor p = at::zeros({d, d}, inv_freq.options());
  p.narrow(0, half, half).narrow(1, 0, half).copy_(at::eye(half, inv_freq.options()));
  p.narrow(0, 0, half).narrow(1, half, half).copy_(-at::eye(half, inv_freq.options()));
  return at::diag(cos) + sin.unsqueeze(1) * p;
}

const Param<int64_t> kFuturePositions =
    integer_param("n_future_positions", 512, 1, "future positions the RoPE is averaged over");
const Param<int64_t> kSinks =
    integer_param("n_sink", 4, 0, "first tokens always kept, left out of the statistics");
const Param<bool> kUseCovariance =
    boolean_param("use_covariance", true, "add the queries' covariance term");
const Param<bool> kUseVnorm = boolean_param("use_vnorm", true, "multiply by the value's L2 norm");
const Param<double> kEpsilon =
    number_param("epsilon", 0.0, 0.0, "added to the expected attention before the norm");

class ExpectedAttention final : public Method {
 public:
  const MethodInfo& info() const override {
    static const MethodInfo info{
        .name = "expected_attention",
        .summary = "the attention expected from future queries' statistics",
        .paper = "2510.00636",
        .code = "NVIDIA/kvpress expected_attention_press.py",
        .kvpress = "ExpectedAttentionPress",
        .budget = "kept tokens, the n_sink first included",
        .checked = kKvpressCheck,
        .params = {kFuturePositions.spec, kSinks.spec, kUseCovariance.spec, kUseVnorm.spec,
                   kEpsilon.spec},
        .needs = kNeedsPreRopeQueries | kNeedsValues,
        .budget_free = true};
    return info;
  }
  int64_t always_kept(const Params& params) const override { return params.get(kSinks); }
  // Its statistics leave out the first n_sink query rows.
  int64_t decoding_query_rows(const Params& params) const override {
    return params.get(kSinks) + 1;
  }
  at::Tensor scores(const LayerView& view, const Params& params) const override {
    const int64_t kv_heads = view.keys.size(0), n = view.keys.size(1), d = view.keys.size(2);
    const int64_t sink = params.get(kSinks);
    const int64_t heads = view.pre_rope_queries.size(0), group = heads / kv_heads;
    const int64_t rows = view.pre_rope_queries.size(1);                       // n in a prefill
    const at::Tensor q = view.pre_rope_queries.narrow(1, sink, rows - sink);  // [heads, m, d]
    const at::Tensor mean = q.mean(1, true);                               // [heads, 1, d]
    const at::Tensor rotation = averaged_rotation(
        view.rope_inv_freq.to(at::kFloat), view.next_position, params.get(kFuturePositions), d);
    const at::Tensor mu = at::matmul(mean, rotation.t());  // [heads, 1, d]
    // [heads, m, d], the group's heads next to each other: query head h reads KV head h / group.
    const at::Tensor keys = view.keys.narrow(1, sink, n - sink).repeat_interleave(group, 0);
    at::Tensor z = at::matmul(mu, keys.transpose(1, 2)).squeeze(1) / std::sqrt(double(d));
    if (params.get(kUseCovariance)) {
      const at::Tensor centered = q - mean;
      const at::Tensor cov = at::matmul(centered.transpose(1, 2), centered) / double(rows - sink);
      const at::Tensor rotated = at::matmul(rotation, at::matmul(cov, rotation.t()));
      z = z + (at::matmul(keys, rotated) * keys).sum(-1) / double(d) / 2.0;
    }
    at::Tensor s = at::softmax(z, -1).view({kv_heads, group, n - sink}).mean(1);
    if (params.get(kUseVnorm))
      s = (s + params.get(kEpsilon)) * view.values.narrow(1, sink, n - sink).norm(2, {-1});
    const at::Tensor sinks =
        at::full({kv_heads, sink}, std::numeric_limits<float>::infinity(), s.options());
    return at::cat({sinks, s}, 1);
  }
};

const ExpectedAttention method;
const MethodRegistration registration(method);

}  // namespace
}  // namespace kvs::evict
