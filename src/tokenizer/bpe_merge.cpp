#include "tokenizer/bpe_merge.h"

#include <cstring>
#include <queue>


namespace kvs::tokenizer {

namespace {

constexpr int32_t kNoRank = MergeRule::kNoRank;

// A part that is no token can only be a single byte a merge list's vocabulary lacks (SmolLM2 has
// no token for some control bytes): dropped, as HF's BPE without an unk_token and llama.cpp do.
void emit(const ByteTokenTable& table, std::string_view bytes, std::vector<int32_t>& ids) {
  const int32_t id = table.find(bytes);
  if (id >= 0) ids.push_back(id);
}

}  // namespace

MergeRule::MergeRule(const ByteTokenTable& table) : table_(&table) {}

MergeRule::MergeRule(const ByteTokenTable& table,
                     const std::vector<std::pair<int32_t, int32_t>>& merges, bool keep_whole_tokens)
    : table_(&table), by_list_(true), keep_whole_tokens_(keep_whole_tokens) {
  pair_rank_.reserve(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank)
    pair_rank_.emplace(pair_key(merges[rank].first, merges[rank].second),
                       static_cast<int32_t>(rank));
}

void bpe_merge_short(const MergeRule& rule, std::string_view piece, std::vector<int32_t>& ids) {
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
    parts[k] = {static_cast<uint32_t>(k), k + 2 <= n ? rule.rank(piece, k, k + 1, k + 2) : kNoRank};

  while (count > 2) {
    size_t best = 0;
    for (size_t k = 1; k + 1 < count; ++k)
      if (parts[k].rank < parts[best].rank) best = k;
    if (parts[best].rank == kNoRank) break;
    // Parts best and best+1 become one, ending where part best+2 starts.
    parts[best].rank = best + 3 < count ? rule.rank(piece, parts[best].start,
                                                    parts[best + 2].start, parts[best + 3].start)
                                        : kNoRank;
    if (best > 0)
      parts[best - 1].rank =
          rule.rank(piece, parts[best - 1].start, parts[best].start, parts[best + 2].start);
    std::memmove(&parts[best + 1], &parts[best + 2], (count - best - 2) * sizeof(Part));
    --count;
  }
  for (size_t k = 0; k + 1 < count; ++k)
    emit(rule.table(), piece.substr(parts[k].start, parts[k + 1].start - parts[k].start), ids);
}

void bpe_merge_long(const MergeRule& rule, std::string_view piece, std::vector<int32_t>& ids) {
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
    const int32_t rank = rule.rank(piece, left, right, right_end);
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
  for (uint32_t k = 0; k != kNone; k = next[k])
    emit(rule.table(), piece.substr(k, end_of(k) - k), ids);
}

void bpe_encode_piece(const MergeRule& rule, std::string_view piece, std::vector<int32_t>& ids) {
  if (piece.empty()) return;
  if (rule.keeps_whole_tokens()) {
    const int32_t whole = rule.table().find(piece);
    if (whole >= 0) {
      ids.push_back(whole);
      return;
    }
  }
  if (piece.size() <= kShortPieceBytes)
    bpe_merge_short(rule, piece, ids);
  else
    bpe_merge_long(rule, piece, ids);
}

}  // namespace kvs::tokenizer
