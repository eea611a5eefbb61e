#include "tokenizer/bpe_merge.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <queue>

#include "core/error.h"

namespace kvs::tokenizer {

namespace {

constexpr int32_t kNoRank = INT32_MAX;

int32_t rank_of(const ByteTokenTable& table, std::string_view bytes) {
  const int32_t id = table.find(bytes);
  return id < 0 ? kNoRank : id;
}

void emit(const ByteTokenTable& table, std::string_view bytes, std::vector<int32_t>& ids) {
  const int32_t id = table.find(bytes);
  // Unreachable with a validated table (all single bytes exist, merges only form tokens).
  if (id < 0) throw Error("bpe: internal error: a merged part is not a token");
  ids.push_back(id);
}

}  // namespace

void bpe_merge_short(const ByteTokenTable& table, std::string_view piece,
                     std::vector<int32_t>& ids) {
  // parts[k].start: where part k begins; parts[k].rank: rank of merging part k with part k+1.
  // The last entry is a sentinel holding the end of the piece.
  struct Part {
    uint32_t start;
    int32_t rank;
  };
  const size_t n = piece.size();
  Part parts[kShortPieceBytes + 1];
  size_t count = n + 1;
  for (size_t k = 0; k <= n; ++k)
    parts[k] = {static_cast<uint32_t>(k),
                k + 2 <= n ? rank_of(table, piece.substr(k, 2)) : kNoRank};

  // Rank of merging part k with its next part, once part k+1 has been merged into part k.
  auto rank_after_merge = [&](size_t k) {
    if (k + 3 >= count) return kNoRank;
    return rank_of(table, piece.substr(parts[k].start, parts[k + 3].start - parts[k].start));
  };

  while (count > 2) {
    size_t best = 0;
    for (size_t k = 1; k + 1 < count; ++k)
      if (parts[k].rank < parts[best].rank) best = k;
    if (parts[best].rank == kNoRank) break;
    parts[best].rank = rank_after_merge(best);
    if (best > 0) parts[best - 1].rank = rank_after_merge(best - 1);
    std::memmove(&parts[best + 1], &parts[best + 2], (count - best - 2) * sizeof(Part));
    --count;
  }
  for (size_t k = 0; k + 1 < count; ++k)
    emit(table, piece.substr(parts[k].start, parts[k + 1].start - parts[k].start), ids);
}

void bpe_merge_long(const ByteTokenTable& table, std::string_view piece,
                    std::vector<int32_t>& ids) {
  // Parts form a linked list indexed by their first byte; a candidate merge of (left, right) is
  // stale once either part has changed, which `right_end` (the end of right when queued) detects.
  const auto n = static_cast<uint32_t>(piece.size());
  constexpr uint32_t kNone = UINT32_MAX;
  std::vector<uint32_t> next(n), prev(n);
  std::vector<bool> alive(n, true);
  for (uint32_t k = 0; k < n; ++k) {
    next[k] = k + 1 < n ? k + 1 : kNone;
    prev[k] = k > 0 ? k - 1 : kNone;
  }
  auto end_of = [&](uint32_t k) { return next[k] == kNone ? n : next[k]; };

  struct Candidate {
    int32_t rank;
    uint32_t left;
    uint32_t right;
    uint32_t right_end;
    bool operator>(const Candidate& o) const {
      return rank != o.rank ? rank > o.rank : left > o.left;  // lowest rank, then leftmost
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> queue;
  auto push = [&](uint32_t left) {
    if (left == kNone || next[left] == kNone) return;
    const uint32_t right = next[left];
    const uint32_t right_end = end_of(right);
    const int32_t rank = rank_of(table, piece.substr(left, right_end - left));
    if (rank != kNoRank) queue.push({rank, left, right, right_end});
  };
  for (uint32_t k = 0; k + 1 < n; ++k) push(k);

  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    if (!alive[c.left] || next[c.left] != c.right || end_of(c.right) != c.right_end) continue;
    alive[c.right] = false;
    next[c.left] = next[c.right];
    if (next[c.left] != kNone) prev[next[c.left]] = c.left;
    push(prev[c.left]);
    push(c.left);
  }
  for (uint32_t k = 0; k != kNone; k = next[k]) emit(table, piece.substr(k, end_of(k) - k), ids);
}

void bpe_encode_piece(const ByteTokenTable& table, std::string_view piece,
                      std::vector<int32_t>& ids) {
  if (piece.empty()) return;
  const int32_t whole = table.find(piece);
  if (whole >= 0) {
    ids.push_back(whole);
    return;
  }
  if (piece.size() <= kShortPieceBytes)
    bpe_merge_short(table, piece, ids);
  else
    bpe_merge_long(table, piece, ids);
}

}  // namespace kvs::tokenizer
