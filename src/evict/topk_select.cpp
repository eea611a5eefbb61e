#include "evict/topk_select.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <vector>

#include "core/error.h"
#include "core/strfmt.h"
#include "evict/tensor_checks.h"

namespace kvs::evict {

namespace {

// A score's bits as an unsigned number in the scores' order: -0 counts as +0 (they compare
// equal), and NaN ranks above every number, as torch's sort (the CUDA path) has it.
inline uint32_t ordered_bits(float score) {
  if (score != score) return 0xFFFFFFFFu;
  const float s = score + 0.0f;  // -0 + 0 = +0
  uint32_t bits;
  std::memcpy(&bits, &s, sizeof bits);
  return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}

// The score whose ordered_bits these are (a NaN for NaN's code).
inline float score_of(uint32_t ordered) {
  const uint32_t bits = (ordered & 0x80000000u) ? (ordered & 0x7FFFFFFFu) : ~ordered;
  float s;
  std::memcpy(&s, &bits, sizeof s);
  return s;
}

// A position's rank as one integer, a larger key ranking first: the score's ordered bits, then
// the position's complement, so that equal scores rank the lower position first. One integer
// comparison instead of a two-key one is what makes the selections below cheap.
inline uint64_t rank_key(float score, int64_t position) {
  return (uint64_t{ordered_bits(score)} << 32) | (0xFFFFFFFFu - static_cast<uint32_t>(position));
}

inline int64_t position_of(uint64_t key) { return 0xFFFFFFFFu - static_cast<uint32_t>(key); }

using Keys = std::vector<uint64_t>;

// Leaves the `count` largest keys (unordered) at the front of `keys`, and only those.
void keep_largest(Keys& keys, int64_t count) {
  std::nth_element(keys.begin(), keys.begin() + (count - 1), keys.end(), std::greater<uint64_t>());
  keys.resize(static_cast<size_t>(count));
}

constexpr int64_t kBlock = 16;  // scores tested at once before any one is looked at

typedef float Quad __attribute__((vector_size(16)));  // one SSE register
typedef int32_t QuadMask __attribute__((vector_size(16)));

// Bit j set where p[j] is not at or below `floor` (not below it, with OrEqual), for j < kBlock:
// NaN, which ranks first, always passes, and a NaN floor passes everything. Four vector
// comparisons, so the many blocks that hold no contender cost a few cycles, and the others are
// visited only at their hits.
template <bool OrEqual>
inline uint32_t beyond_mask(const float* p, float floor) {
  const Quad f = {floor, floor, floor, floor};
  const QuadMask weights = {1, 2, 4, 8};
  QuadMask bits = {};
  for (int q = 0; q < 4; ++q) {
    Quad v;
    std::memcpy(&v, p + 4 * q, sizeof v);
    const QuadMask hit = OrEqual ? ~(v < f) : ~(v <= f);
    bits |= (hit & weights) << (4 * q);
  }
  return static_cast<uint32_t>(bits[0] | bits[1] | bits[2] | bits[3]);
}

// Any row: keys that beat the running threshold go to the buffer; whenever it holds 2 * count,
// the `count` best stay and the threshold becomes the worst of them. A scan in position order
// never lets a later equal score displace an earlier one, so "not at or below" on the scores
// suffices (a NaN threshold lets all through), and a block's scores are compared at once, only
// those beyond the threshold offered. Linear in m.
void keep_best_by_scan(const float* scores, int64_t m, int64_t count, Keys& buffer) {
  buffer.clear();
  const auto c = static_cast<size_t>(count);
  bool full = false;
  float threshold = 0;  // the worst kept score, once full
  const auto offer = [&](int64_t i) {
    if (full && scores[i] <= threshold) return;
    buffer.push_back(rank_key(scores[i], i));
    if (buffer.size() == 2 * c) {
      keep_largest(buffer, count);
      threshold = score_of(static_cast<uint32_t>(buffer.back() >> 32));  // the count-th best
      full = true;
    }
  };
  int64_t i = 0;
  while (i < m) {
    if (!full || i + kBlock > m) {
      offer(i++);
      continue;
    }
    for (uint32_t hits = beyond_mask<false>(scores + i, threshold); hits != 0; hits &= hits - 1)
      offer(i + __builtin_ctz(hits));  // offer() compares again: a refill may raise the threshold
    i += kBlock;
  }
  if (buffer.size() > c) keep_largest(buffer, count);
}

constexpr int64_t kSampleStride = 16;  // every 16th score judges where the row's cut lies

// How many of a row's positions the sampled cut aims to collect: twice those kept, and a margin
// of 8 sampled scores' worth.
constexpr int64_t cut_reach(int64_t count) { return 2 * count + 8 * kSampleStride; }

// Long rows with few kept: the sample's k-th best score T, with k chosen so that about
// cut_reach(count) positions of a row score >= T, is a cut the best `count` cannot fall
// below once that many do; the row is then swept once for the positions at or above T. Returns
// false (buffer undefined) where the sample misjudged the row and fewer than `count` reached T.
bool keep_best_by_sampled_cut(const float* scores, int64_t m, int64_t count, Keys& buffer,
                              std::vector<float>& sample) {
  const int64_t samples = (m + kSampleStride - 1) / kSampleStride;
  const int64_t k = std::min(samples, cut_reach(count) / kSampleStride);
  sample.resize(static_cast<size_t>(samples));
  for (int64_t j = 0; j < samples; ++j) sample[j] = scores[j * kSampleStride];
  keep_best_by_scan(sample.data(), samples, k, buffer);
  const float cut =
      score_of(static_cast<uint32_t>(*std::min_element(buffer.begin(), buffer.end()) >> 32));
  buffer.clear();
  // !(s < cut), in floats, is ordered_bits(s) >= ordered_bits(cut): -0 counts as +0, a NaN score
  // passes, and a NaN cut passes all.
  int64_t i = 0;
  for (; i + kBlock <= m; i += kBlock) {
    for (uint32_t hits = beyond_mask<true>(scores + i, cut); hits != 0; hits &= hits - 1) {
      const int64_t e = i + __builtin_ctz(hits);
      buffer.push_back(rank_key(scores[e], e));
    }
  }
  for (; i < m; ++i) {
    if (!(scores[i] < cut)) buffer.push_back(rank_key(scores[i], i));
  }
  if (static_cast<int64_t>(buffer.size()) < count) return false;
  // Every position outside the buffer scores below the cut, so below all `count` it keeps.
  keep_largest(buffer, count);
  return true;
}

}  // namespace

void rank_top_row(const float* scores, int64_t m, int64_t count, int64_t* out) {
  if (count == 0) return;
  if (m > int64_t{std::numeric_limits<uint32_t>::max()}) {
    throw error_at("top-k", strfmt("a row of %lld tokens is too long to rank", (long long)m));
  }
  Keys buffer;
  buffer.reserve(static_cast<size_t>(cut_reach(count)));
  std::vector<float> sample;
  // The cut pays for its sample where it collects at most a quarter of the row.
  const bool sample_cut = cut_reach(count) * 4 <= m;
  if (!sample_cut || !keep_best_by_sampled_cut(scores, m, count, buffer, sample)) {
    keep_best_by_scan(scores, m, count, buffer);
  }
  std::sort(buffer.begin(), buffer.end(), std::greater<uint64_t>());
  for (int64_t i = 0; i < count; ++i) out[i] = position_of(buffer[static_cast<size_t>(i)]);
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
