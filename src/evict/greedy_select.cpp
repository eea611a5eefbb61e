#include "evict/greedy_select.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/strfmt.h"
#include "cpu/features.h"
#include "cpu/parallel_tasks.h"
#include "evict/tensor_checks.h"
#include "evict/topk_select.h"

#ifdef KVS_WITH_KERNELS
#include "cuda/evict_kernels.h"
#endif

#include "cpu/greedy_admission.h"

namespace kvs::evict {

using cpu::CandidateKeys;
using cpu::kMinDenominator;
using cpu::RowWorkspace;

namespace {

void check_admission_inputs(const at::Tensor& unit_keys, const at::Tensor& scores,
                            const at::Tensor& candidates, const at::Tensor& counts,
                            const at::Tensor& lambda2) {
  check_float_tensor(unit_keys, "unit_keys", 3, "[rows, candidates, head_dim]");
  check_float_tensor(scores, "candidate scores", 2, "[rows, candidates]");
  const int64_t rows = unit_keys.size(0), width = unit_keys.size(1);
  if (scores.size(0) != rows || scores.size(1) != width) {
    throw error_at("candidate scores", "shape " + shape_string(scores) +
                                           " does not match unit_keys " + shape_string(unit_keys));
  }
  for (const auto& [t, name] : {std::pair<const at::Tensor&, const char*>{candidates, "candidates"},
                                {counts, "counts"},
                                {lambda2, "lambda2"}}) {
    if (t.dim() != 1 || t.size(0) != rows) {
      throw error_at(name,
                     strfmt("expected [%lld], got %s", (long long)rows, shape_string(t).c_str()));
    }
  }
  const at::Tensor c = candidates.cpu(), k = counts.cpu();
  if ((c < 0).any().item<bool>() || (c > width).any().item<bool>() || (k < 0).any().item<bool>() ||
      (k > c).any().item<bool>()) {
    throw error_at("counts",
                   "every row needs 0 <= count <= candidates <= " + std::to_string(width));
  }
}

}  // namespace

at::Tensor admit_greedy(const at::Tensor& unit_keys, const at::Tensor& scores,
                        const at::Tensor& candidates, const at::Tensor& counts,
                        const at::Tensor& lambda2) {
  check_admission_inputs(unit_keys, scores, candidates, counts, lambda2);
#ifdef KVS_WITH_KERNELS
  if (unit_keys.is_cuda())
    return kernels::greedy_admit_cuda(unit_keys, scores, candidates, counts, lambda2);
#endif
  // The CPU loop (also for device tensors when the kernels are not built).
  const int64_t rows = unit_keys.size(0), width = unit_keys.size(1), d = unit_keys.size(2);
  const at::Tensor keys = unit_keys.to(at::kFloat).cpu().contiguous();
  const at::Tensor s = scores.to(at::kFloat).cpu().contiguous();
  const at::Tensor c = candidates.to(at::kLong).cpu().contiguous();
  const at::Tensor k = counts.to(at::kLong).cpu().contiguous();
  const at::Tensor l2 = lambda2.to(at::kFloat).cpu().contiguous();
  const int64_t max_count = rows ? k.max().item<int64_t>() : 0;
  at::Tensor picked = at::full({rows, max_count}, -1, at::kLong);
  float* kp = keys.data_ptr<float>();  // read only: CandidateKeys without head keys writes none
  const float* sp = s.data_ptr<float>();
  const int64_t* cp = c.data_ptr<int64_t>();
  const int64_t* np = k.data_ptr<int64_t>();
  const float* lp = l2.data_ptr<float>();
  int64_t* pp = picked.data_ptr<int64_t>();
  cpu::for_each_task(
      rows, [] { return RowWorkspace{}; },
      [&](int64_t r, RowWorkspace& workspace) {
        CandidateKeys unit(kp + r * width * d, d);
        cpu::admit_row(unit, sp + r * width, cp[r], d, np[r], lp[r], pp + r * max_count, workspace);
      });
  return picked.to(unit_keys.device());
}

namespace {

// The CPU path, fused per row: rank the candidates, normalise their scores and the keys the
// admission will read into the thread's workspace (any other as it first reads it), admit, and
// write the admitted positions in ascending order. No tensor of candidate keys is materialised.
void select_greedy_cpu(const at::Tensor& scores, const at::Tensor& keys, int64_t count,
                       float lambda2, int64_t width, at::Tensor& out) {
  const int64_t rows = scores.size(0), m = scores.size(1);
  const int64_t n = keys.size(1), d = keys.size(2), group = rows / keys.size(0);
  const at::Tensor s = scores.to(at::kFloat).contiguous();
  const at::Tensor k = keys.to(at::kFloat).contiguous();
  const float* sp = s.data_ptr<float>();
  const float* kp = k.data_ptr<float>();
  int64_t* op = out.data_ptr<int64_t>();
  // Rows by the next free thread: their admissions differ in length.
  struct Workspace {
    RowWorkspace admission;
    std::vector<int64_t> ranked, picked;
    std::vector<float> unit, normalized;
    std::vector<uint8_t> ready;
  };
  const auto make_workspace = [&] {
    return Workspace{{},
                     std::vector<int64_t>(static_cast<size_t>(width)),
                     std::vector<int64_t>(static_cast<size_t>(count)),
                     std::vector<float>(static_cast<size_t>(width * d)),
                     std::vector<float>(static_cast<size_t>(width)),
                     std::vector<uint8_t>(static_cast<size_t>(width))};
  };
  cpu::for_each_task(rows, make_workspace, [&](int64_t r, Workspace& ws) {
    const float* row = sp + r * m;
    const float* head_keys = kp + (r / group) * n * d;
    rank_top_row(row, m, width, ws.ranked.data());
    cpu::normalise_scores(row, ws.ranked.data(), width, ws.normalized.data());
    std::fill(ws.ready.begin(), ws.ready.end(), 0);
    cpu::normalise_first_keys(head_keys, ws.ranked.data(),
                              cpu::keys_read_up_front(lambda2, count, width), d, ws.unit.data(),
                              ws.ready.data());
    CandidateKeys unit(ws.unit.data(), d, head_keys, ws.ranked.data(), ws.ready.data());
    cpu::admit_row(unit, ws.normalized.data(), width, d, count, lambda2, ws.picked.data(),
                   ws.admission);
    int64_t* positions = op + r * count;
    for (int64_t t = 0; t < count; ++t) positions[t] = ws.ranked[ws.picked[t]];
    std::sort(positions, positions + count);
  });
}

}  // namespace

at::Tensor select_greedy(const at::Tensor& scores, const at::Tensor& keys, int64_t count,
                         double lambda2, int64_t candidate_factor) {
  check_float_tensor(scores, "scores", 2, "[rows, tokens]");
  check_float_tensor(keys, "keys", 3, "[kv_heads, n, head_dim]");
  const int64_t rows = scores.size(0), m = scores.size(1);
  const int64_t kv_heads = keys.size(0), n = keys.size(1), d = keys.size(2);
  if (kv_heads == 0 || rows % kv_heads != 0 || m > n) {
    throw error_at("greedy selection",
                   "scores " + shape_string(scores) + " do not fit keys " + shape_string(keys));
  }
  if (count < 0 || count > m) {
    throw error_at("greedy selection",
                   strfmt("cannot select %lld of %lld tokens", (long long)count, (long long)m));
  }
  if (candidate_factor < 1) throw error_at("greedy selection", "candidate_factor must be >= 1");
  const int64_t width = std::min(m, candidate_factor * count);
  if (scores.is_cpu()) {
    at::Tensor out = at::empty({rows, count}, at::kLong);
    if (count > 0) select_greedy_cpu(scores, keys, count, static_cast<float>(lambda2), width, out);
    return out;
  }

  // Device tensors: the same steps as tensor operations, then the admission kernel.
  const at::Tensor ranked = rank_top(scores, width);  // [rows, width], rank order
  if (count == 0) return ranked.narrow(1, 0, 0);
  const at::Tensor s = scores.to(at::kFloat);
  const at::Tensor denominator = s.amax(1, /*keepdim=*/true).clamp_min(kMinDenominator);
  const at::Tensor normalized = s.gather(1, ranked).div(denominator);
  // Row r's candidate keys from KV head r / group, normalised once.
  const int64_t group = rows / kv_heads;
  const at::Tensor head = at::arange(rows, ranked.options()).div(group, "floor").unsqueeze(1);
  const at::Tensor flat = (head * n + ranked).reshape({-1});
  at::Tensor unit =
      keys.reshape({kv_heads * n, d}).index_select(0, flat).to(at::kFloat).view({rows, width, d});
  unit = unit / at::linalg_vector_norm(unit, 2, {2}, /*keepdim=*/true).clamp_min(kMinDenominator);

  const auto row_options = at::TensorOptions().dtype(at::kLong).device(scores.device());
  const at::Tensor picked = admit_greedy(unit, normalized, at::full({rows}, width, row_options),
                                         at::full({rows}, count, row_options),
                                         at::full({rows}, lambda2, row_options.dtype(at::kFloat)));
  return std::get<0>(ranked.gather(1, picked).sort(1));
}

}  // namespace kvs::evict
