// The diversity-aware greedy admission's CPU loops (evict/greedy_select.h states the rule): the
// admission of one row's candidates (an eager and a lazy loop), and the candidates' preparation
// (their s~ and unit keys). Each is written once, as bodies inlined into two twins: one built for
// baseline x86-64 (the scalar level) and one with AVX2; cpu::at_least(Level::Avx2) picks the twin
// at each call, so KVS_CPU=scalar runs the baseline twin on any machine. No FMA: the twins round
// identically, whichever one runs. Torch-free: evict/greedy_select.cpp is their ATen glue.
#pragma once

#include <cstdint>
#include <vector>

namespace kvs::cpu {

inline constexpr float kMinDenominator = 1e-12f;  // clamps max s and key norms away from 0

// The candidates' unit keys as the admission reads them: keys(c) is candidate c's, at
// unit + c * d. Either all given, or (with head_keys) each normalised into `unit` from the head's
// keys when first read: the lazy loop reads only those it refreshes or admits (about a third of
// 4 x count on the bench's inputs).
class CandidateKeys {
 public:
  CandidateKeys(float* unit, int64_t d, const float* head_keys = nullptr,
                const int64_t* ranked = nullptr, uint8_t* ready = nullptr)
      : unit_(unit), d_(d), head_keys_(head_keys), ranked_(ranked), ready_(ready) {}

  const float* operator()(int64_t c);

 private:
  float* unit_;  // written only where head_keys_ is given
  int64_t d_;
  const float* head_keys_;
  const int64_t* ranked_;
  uint8_t* ready_;
};

// Scratch space of one row, reused across the rows a thread handles.
struct RowWorkspace {
  std::vector<float> corr;         // max(0, max cos) against the admitted keys folded in so far
  std::vector<int64_t> remaining;  // eager loop: candidates not admitted, ascending
  std::vector<int64_t> seen;       // lazy loop: admitted keys corr[i] accounts for; -1: admitted
  std::vector<float> bound;        // lazy loop: each candidate's objective at its last refresh
  std::vector<float> best_after;   // lazy loop: the largest score from each candidate on
};

// Admits `count` of the row's `candidates` (rank order, s~ in `score`): picked[t] is the
// candidate index admitted t-th. lambda2 < 0 runs the lazy loop, > 0 the eager one, 0 the rank
// order itself.
void admit_row(CandidateKeys& keys, const float* score, int64_t candidates, int64_t d,
               int64_t count, float lambda2, int64_t* picked, RowWorkspace& ws);

// s~ of one row's candidates (in rank order): score / the row's max (the first candidate's).
void normalise_scores(const float* scores, const int64_t* ranked, int64_t width, float* normalized);

// The unit keys of candidates [0, first) of a head's keys, into unit (c * d each), marking them
// ready: the ones the admission will read, normalised in one sweep.
void normalise_first_keys(const float* head_keys, const int64_t* ranked, int64_t first, int64_t d,
                          float* unit, uint8_t* ready);

// How many of the candidates' keys to normalise before the admission: all for the eager loop,
// none at lambda2 = 0 (no key is read); the lazy loop about 1.5 x count.
int64_t keys_read_up_front(float lambda2, int64_t count, int64_t width);

}  // namespace kvs::cpu
