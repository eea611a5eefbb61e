#include "evict/topk_select.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/strfmt.h"
#include "evict/tensor_checks.h"

namespace kvs::evict {

namespace {

struct Ranked {
  float score;
  int64_t position;
};

// "a ranks before b" (a function object, so that the std algorithms inline it).
struct RanksBefore {
  bool operator()(const Ranked& a, const Ranked& b) const {
    return a.score > b.score || (a.score == b.score && a.position < b.position);
  }
};

}  // namespace

// Candidates that beat the running threshold go to a buffer; whenever it holds 2 * count, the
// `count` best stay (nth_element under the total order) and the threshold becomes the worst of
// them. A scan in position order never lets a later equal score displace an earlier one, so '>'
// suffices. Linear in m, with few data-dependent branches (a heap's sift costs more).
void rank_top_row(const float* scores, int64_t m, int64_t count, int64_t* out) {
  if (count == 0) return;
  const auto c = static_cast<size_t>(count);
  std::vector<Ranked> buffer;
  buffer.reserve(2 * c);
  const auto keep_best = [&] {
    std::nth_element(buffer.begin(), buffer.begin() + (count - 1), buffer.end(), RanksBefore{});
    buffer.resize(c);
  };
  bool full = false;
  float threshold = 0;
  for (int64_t i = 0; i < m; ++i) {
    if (!full || scores[i] > threshold) {
      buffer.push_back({scores[i], i});
      if (buffer.size() == 2 * c) {
        keep_best();
        threshold = buffer.back().score;
        full = true;
      }
    }
  }
  if (buffer.size() > c) keep_best();
  std::sort(buffer.begin(), buffer.end(), RanksBefore{});
  for (size_t i = 0; i < c; ++i) out[i] = buffer[i].position;
}

at::Tensor rank_top(const at::Tensor& scores, int64_t count) {
  check_float_tensor(scores, "scores", 2, "[rows, tokens]");
  const int64_t rows = scores.size(0), m = scores.size(1);
  if (count < 0 || count > m) {
    throw error_at("top-k",
                   strfmt("cannot select %lld of %lld tokens", (long long)count, (long long)m));
  }
  if (scores.is_cuda()) {
    // A stable descending sort keeps equal scores in position order: the same ranking rule.
    const at::Tensor order =
        std::get<1>(scores.to(at::kFloat).sort(/*stable=*/true, /*dim=*/1, /*descending=*/true));
    return order.narrow(1, 0, count).contiguous();
  }
  const at::Tensor s = scores.to(at::kFloat).contiguous();
  at::Tensor out = at::empty({rows, count}, at::kLong);
  const float* sp = s.data_ptr<float>();
  int64_t* op = out.data_ptr<int64_t>();
  at::parallel_for(0, rows, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) rank_top_row(sp + r * m, m, count, op + r * count);
  });
  return out;
}

at::Tensor select_topk(const at::Tensor& scores, int64_t count) {
  return std::get<0>(rank_top(scores, count).sort(1));
}

}  // namespace kvs::evict
