#include "cpu/greedy_admission.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "cpu/features.h"

// The admission loop is dominated by float dot products. Its three loops are written once, as
// bodies inlined into two twins: one built for baseline x86-64 (the scalar level) and one with
// AVX2, and cpu::at_least(Level::Avx2) picks the twin at each call (admit_row,
// normalise_first_keys), so KVS_CPU=scalar runs the baseline twin on any machine. No FMA: the
// twins round identically, whichever one runs.
#define KVS_TWIN_BODY __attribute__((always_inline)) inline
#if defined(__x86_64__) && defined(__GNUC__)
#define KVS_AVX2_TWIN __attribute__((target("avx2")))
#else
#define KVS_AVX2_TWIN
#endif

namespace kvs::cpu {

namespace {

// Eight float lanes (GCC/Clang vector extension): one AVX register, or two SSE ones.
typedef float Lanes __attribute__((vector_size(32)));

// By reference: returning an AVX-sized value would tie the function to one ABI.
inline void load_lanes(Lanes& v, const float* p) { std::memcpy(&v, p, sizeof v); }

inline float sum_lanes(const Lanes& a) {
  return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

// Lane-wise products summed in a fixed order, so every clone and dot8 round identically.
inline float dot(const float* a, const float* b, int64_t d) {
  Lanes acc = {}, va, vb;
  int64_t i = 0;
  for (; i + 8 <= d; i += 8) {
    load_lanes(va, a + i);
    load_lanes(vb, b + i);
    acc += va * vb;
  }
  float sum = sum_lanes(acc);
  for (; i < d; ++i) sum += a[i] * b[i];
  return sum;
}

typedef int32_t LaneIndex __attribute__((vector_size(32)));  // lane numbers for shuffles

// [x0+x1, x2+x3, y0+y1, y2+y3, x4+x5, x6+x7, y4+y5, y6+y7]: AVX's hadd in portable form.
inline void pair_sums(Lanes& out, const Lanes& x, const Lanes& y) {
  const LaneIndex even = {0, 2, 8, 10, 4, 6, 12, 14}, odd = {1, 3, 9, 11, 5, 7, 13, 15};
  out = __builtin_shuffle(x, y, even) + __builtin_shuffle(x, y, odd);
}

// x against eight vectors in one sweep (x is read once, and the eight products' lanes are summed
// together); each result is the same float as dot(x, y[k]).
inline void dot8(const float* x, const float* const y[8], int64_t d, Lanes& out) {
  Lanes acc[8] = {}, xv, yv;
  int64_t i = 0;
  for (; i + 8 <= d; i += 8) {
    load_lanes(xv, x + i);
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) {
      load_lanes(yv, y[k] + i);
      acc[k] += xv * yv;
    }
  }
  // sum_lanes's tree for all eight at once. After two rounds of pair sums, lane k of `low` holds
  // (a0 + a1) + (a2 + a3) of product k (k < 4) and lane k + 4 its (a4 + a5) + (a6 + a7); `high`
  // holds the same for products 4-7. The tree's last addition adds the two halves.
  Lanes p01, p23, p45, p67, low, high;
  pair_sums(p01, acc[0], acc[1]);
  pair_sums(p23, acc[2], acc[3]);
  pair_sums(p45, acc[4], acc[5]);
  pair_sums(p67, acc[6], acc[7]);
  pair_sums(low, p01, p23);
  pair_sums(high, p45, p67);
  const LaneIndex first = {0, 1, 2, 3, 8, 9, 10, 11}, second = {4, 5, 6, 7, 12, 13, 14, 15};
  out = __builtin_shuffle(low, high, first) + __builtin_shuffle(low, high, second);
  for (int k = 0; k < 8; ++k) {
    for (int64_t e = i; e < d; ++e) out[k] += x[e] * y[k][e];
  }
}

// A key divided by its L2 norm (clamped away from 0).
inline void normalise_key(const float* key, int64_t d, float* unit) {
  const float norm = std::max(std::sqrt(dot(key, key, d)), kMinDenominator);
  for (int64_t e = 0; e < d; ++e) unit[e] = key[e] / norm;
}

}  // namespace

inline const float* CandidateKeys::operator()(int64_t c) {
  if (head_keys_ != nullptr && !ready_[c]) {
    normalise_key(head_keys_ + ranked_[c] * d_, d_, unit_ + c * d_);
    ready_[c] = 1;
  }
  return unit_ + c * d_;
}

namespace {

// lambda2 > 0: each admission updates corr of every remaining candidate (eight per sweep of the
// admitted key) and finds the next argmax in the same pass. Strict '>' in ascending candidate
// index is the tie rule.
KVS_TWIN_BODY void admit_eager_body(CandidateKeys& keys, const float* score, int64_t candidates,
                                    int64_t d, int64_t count, float lambda2, int64_t* picked,
                                    RowWorkspace& ws) {
  float* corr = ws.corr.data();
  std::fill(corr, corr + candidates, 0.0f);
  auto& remaining = ws.remaining;
  remaining.resize(static_cast<size_t>(candidates));
  for (int64_t i = 0; i < candidates; ++i) remaining[static_cast<size_t>(i)] = i;
  int64_t best = 0;
  for (int64_t i = 1; i < candidates; ++i) {
    if (score[i] > score[best]) best = i;
  }
  for (int64_t t = 0; t < count; ++t) {
    picked[t] = best;
    remaining.erase(std::lower_bound(remaining.begin(), remaining.end(), best));
    if (t + 1 == count) break;
    const float* admitted = keys(best);
    int64_t next = -1;
    float next_objective = 0;
    const auto consider = [&](int64_t i, float cosine) {
      corr[i] = std::max(corr[i], cosine);
      const float objective = score[i] + lambda2 * corr[i];
      if (next < 0 || objective > next_objective) {
        next = i;
        next_objective = objective;
      }
    };
    const size_t size = remaining.size();
    size_t r = 0;
    for (; r + 8 <= size; r += 8) {
      const int64_t* i = remaining.data() + r;
      const float* others[8];
      for (int k = 0; k < 8; ++k) others[k] = keys(i[k]);
      Lanes cosines;
      dot8(admitted, others, d, cosines);
      for (int k = 0; k < 8; ++k) consider(i[k], cosines[k]);
    }
    for (; r < size; ++r) consider(remaining[r], dot(admitted, keys(remaining[r]), d));
    best = next;
  }
}

// The largest of eight lanes (max is exact, so the order of the comparisons does not matter).
inline float max_lane(const Lanes& v) {
  const LaneIndex swap_halves = {4, 5, 6, 7, 0, 1, 2, 3}, swap_pairs = {2, 3, 0, 1, 6, 7, 4, 5},
                  swap_neighbours = {1, 0, 3, 2, 5, 4, 7, 6};
  Lanes m = v, other = __builtin_shuffle(m, swap_halves);
  m = m > other ? m : other;
  other = __builtin_shuffle(m, swap_pairs);
  m = m > other ? m : other;
  other = __builtin_shuffle(m, swap_neighbours);
  m = m > other ? m : other;
  return m[0];
}

// The first candidate from `from` on whose bound beats `best_objective`, or `candidates` if none
// can: a sweep of the bounds eight at a time, which also stops where the suffix maximum of the
// scores (which no bound exceeds) falls to the best, checked once per block of 16.
inline int64_t next_contender(const float* bound, const float* best_after, int64_t from,
                              int64_t candidates, float best_objective) {
  int64_t i = from;
  for (; i < candidates && i % 8 != 0; ++i) {
    if (bound[i] > best_objective) return i;
  }
  Lanes limit, block;
  for (int k = 0; k < 8; ++k) limit[k] = best_objective;
  for (; i + 8 <= candidates; i += 8) {
    if (i % 16 == 0 && !(best_after[i] > best_objective)) return candidates;
    load_lanes(block, bound + i);
    const LaneIndex above = block > limit;
    uint64_t words[4];
    std::memcpy(words, &above, sizeof words);
    if ((words[0] | words[1] | words[2] | words[3]) == 0) continue;
    for (int k = 0;; ++k) {
      if (bound[i + k] > best_objective) return i + k;
    }
  }
  for (; i < candidates; ++i) {
    if (bound[i] > best_objective) return i;
  }
  return candidates;
}

// lambda2 < 0: corr only grows as keys are admitted, so an objective computed from a stale corr
// is an upper bound of the current one (lazy greedy), and no objective exceeds its score. Each
// admission scans the candidates in index order (rank order: scores descending) and stops where
// no later score can beat the best objective found so far (a suffix maximum of the scores, so
// any order is correct). A candidate is refreshed against the keys admitted since its last
// refresh only while its bound still beats that best; a later candidate that merely equals it
// loses the tie, as in the eager loop. The bounds are kept in one array (-inf once admitted), so
// the many candidates that cannot win are passed over in a tight sweep. Same dot products, same
// floats: the result equals admit_eager_body's bit for bit, without a heap's sifting.
KVS_TWIN_BODY void admit_lazy_body(CandidateKeys& keys, const float* score, int64_t candidates,
                                   int64_t d, int64_t count, float lambda2, int64_t* picked,
                                   RowWorkspace& ws) {
  if (count == 0) return;
  float* corr = ws.corr.data();
  int64_t* seen = ws.seen.data();
  float* bound = ws.bound.data();            // score + lambda2 * corr; -inf once admitted
  float* best_after = ws.best_after.data();  // best_after[i] = max score over candidates >= i
  std::fill(corr, corr + candidates, 0.0f);
  std::fill(seen, seen + candidates, 0);
  for (int64_t i = 0; i < candidates; ++i) bound[i] = score[i] + lambda2 * corr[i];
  best_after[candidates - 1] = score[candidates - 1];
  for (int64_t i = candidates - 2; i >= 0; --i)
    best_after[i] = std::max(score[i], best_after[i + 1]);
  int64_t first_open = 0;  // the lowest candidate not admitted
  for (int64_t t = 0; t < count; ++t) {
    while (seen[first_open] < 0) ++first_open;
    int64_t best = -1;
    float best_objective = 0;
    for (int64_t i = first_open; i < candidates; ++i) {
      if (best >= 0) {
        i = next_contender(bound, best_after, i, candidates, best_objective);
        if (i == candidates) break;
      }
      float objective = bound[i];
      int64_t j = seen[i];
      const float* key = j < t ? keys(i) : nullptr;  // read only where it is refreshed
      while (j < t && (best < 0 || objective > best_objective)) {
        if (j + 8 <= t) {
          const float* admitted[8];
          for (int k = 0; k < 8; ++k) admitted[k] = keys(picked[j + k]);
          Lanes cosines;
          dot8(key, admitted, d, cosines);
          corr[i] = std::max(corr[i], max_lane(cosines));
          j += 8;
        } else {
          corr[i] = std::max(corr[i], dot(key, keys(picked[j]), d));
          ++j;
        }
        objective = score[i] + lambda2 * corr[i];
      }
      seen[i] = j;
      bound[i] = objective;
      if (j == t && (best < 0 || objective > best_objective)) {
        best = i;
        best_objective = objective;
      }
    }
    picked[t] = best;
    seen[best] = -1;
    bound[best] = -std::numeric_limits<float>::infinity();
  }
}

// The admission (lambda2 < 0: the lazy loop, else the eager one) in its AVX2 twin; admit_row
// calls the bodies directly for the baseline twin (see KVS_TWIN_BODY above).
KVS_AVX2_TWIN void admit_avx2(CandidateKeys& keys, const float* score, int64_t candidates,
                              int64_t d, int64_t count, float lambda2, int64_t* picked,
                              RowWorkspace& ws) {
  if (lambda2 < 0.0f)
    admit_lazy_body(keys, score, candidates, d, count, lambda2, picked, ws);
  else
    admit_eager_body(keys, score, candidates, d, count, lambda2, picked, ws);
}

}  // namespace

void admit_row(CandidateKeys& keys, const float* score, int64_t candidates, int64_t d,
               int64_t count, float lambda2, int64_t* picked, RowWorkspace& ws) {
  ws.corr.resize(static_cast<size_t>(candidates));
  ws.seen.resize(static_cast<size_t>(candidates));
  ws.bound.resize(static_cast<size_t>(candidates));
  ws.best_after.resize(static_cast<size_t>(candidates));
  if (lambda2 == 0.0f) {
    // The objective is s~ itself, which the candidates' rank order already sorts (ties to the
    // lower index): the admission order is the candidate order.
    for (int64_t t = 0; t < count; ++t) picked[t] = t;
  } else if (cpu::at_least(cpu::Level::Avx2)) {
    admit_avx2(keys, score, candidates, d, count, lambda2, picked, ws);
  } else if (lambda2 < 0.0f) {
    admit_lazy_body(keys, score, candidates, d, count, lambda2, picked, ws);
  } else {
    admit_eager_body(keys, score, candidates, d, count, lambda2, picked, ws);
  }
}
// s~ of one row's candidates (in rank order): score / the row's max (the first candidate's).
void normalise_scores(const float* scores, const int64_t* ranked, int64_t width,
                      float* normalized) {
  const float denominator = std::max(scores[ranked[0]], kMinDenominator);
  for (int64_t c = 0; c < width; ++c) normalized[c] = scores[ranked[c]] / denominator;
}

namespace {

// The unit keys of candidates [0, first): the ones the admission will read, normalised in one
// sweep. The keys lie scattered over the head's n keys, mostly outside the caches: each one is
// requested a few candidates ahead of its use.
KVS_TWIN_BODY void normalise_first_keys_body(const float* head_keys, const int64_t* ranked,
                                             int64_t first, int64_t d, float* unit,
                                             uint8_t* ready) {
  constexpr int64_t kAhead = 4;
  const auto prefetch = [&](int64_t c) {
    const char* key = reinterpret_cast<const char*>(head_keys + ranked[c] * d);
    for (int64_t byte = 0; byte < d * int64_t{sizeof(float)}; byte += 64)
      __builtin_prefetch(key + byte);
  };
  for (int64_t c = 0; c < std::min(first, kAhead); ++c) prefetch(c);
  for (int64_t c = 0; c < first; ++c) {
    if (c + kAhead < first) prefetch(c + kAhead);
    normalise_key(head_keys + ranked[c] * d, d, unit + c * d);
    ready[c] = 1;
  }
}

KVS_AVX2_TWIN void normalise_first_keys_avx2(const float* head_keys, const int64_t* ranked,
                                             int64_t first, int64_t d, float* unit,
                                             uint8_t* ready) {
  normalise_first_keys_body(head_keys, ranked, first, d, unit, ready);
}
}  // namespace

void normalise_first_keys(const float* head_keys, const int64_t* ranked, int64_t first, int64_t d,
                          float* unit, uint8_t* ready) {
  if (cpu::at_least(cpu::Level::Avx2))
    normalise_first_keys_avx2(head_keys, ranked, first, d, unit, ready);
  else
    normalise_first_keys_body(head_keys, ranked, first, d, unit, ready);
}

// How many of the candidates' keys to normalise before the admission: all for the eager loop,
// none at lambda2 = 0 (no key is read). The lazy loop reads nearly all of the first 1.5 x count
// and few beyond (on the bench's inputs: 154 of the 163 keys it reads of 440 at count 110); the
// others are normalised as it reads them.
int64_t keys_read_up_front(float lambda2, int64_t count, int64_t width) {
  if (lambda2 > 0.0f) return width;
  if (lambda2 < 0.0f) return std::min(width, count + count / 2);
  return 0;
}

}  // namespace kvs::cpu
