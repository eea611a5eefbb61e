// Byte-pair merging of one pre-tokenized piece: starting from single bytes, repeatedly merge the
// adjacent pair of lowest rank (leftmost on ties) until no adjacent pair may merge. MergeRule says
// which pairs may merge and their ranks: tiktoken's rule or a GPT-2/HF merge list.
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tokenizer/byte_token_table.h"

namespace kvs::tokenizer {

// Pieces up to this many bytes merge by rescanning a small array (tiktoken's loop, fastest for
// the short pieces of ordinary text); longer ones use a heap so they stay O(n log n).
constexpr size_t kShortPieceBytes = 128;

class MergeRule {
 public:
  static constexpr int32_t kNoRank = INT32_MAX;

  // tiktoken's rule (Llama-3): two parts merge when their bytes together are a token, ranked by
  // that token's id; a piece that is a token stays whole.
  explicit MergeRule(const ByteTokenTable& table);
  // A merge list (GPT-2, HF BPE, GGUF): only the listed (left id, right id) pairs merge, ranked
  // by their position in the list (a pair listed twice keeps its first). keep_whole_tokens is HF's ignore_merges: a piece that is a
  // token stays whole instead of being merged up from its bytes. The ids must be tokens of
  // `table` and each pair must join into a token (the readers check this).
  MergeRule(const ByteTokenTable& table, const std::vector<std::pair<int32_t, int32_t>>& merges,
            bool keep_whole_tokens);

  // Rank of merging piece[begin, middle) with piece[middle, end), or kNoRank.
  int32_t rank(std::string_view piece, size_t begin, size_t middle, size_t end) const {
    if (!by_list_) {
      const int32_t id = table_->find(piece.substr(begin, end - begin));
      return id < 0 ? kNoRank : id;
    }
    const int32_t left = table_->find(piece.substr(begin, middle - begin));
    const int32_t right = table_->find(piece.substr(middle, end - middle));
    if (left < 0 || right < 0) return kNoRank;
    const auto it = pair_rank_.find(pair_key(left, right));
    return it == pair_rank_.end() ? kNoRank : it->second;
  }

  const ByteTokenTable& table() const { return *table_; }
  bool keeps_whole_tokens() const { return keep_whole_tokens_; }

 private:
  static uint64_t pair_key(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  }

  const ByteTokenTable* table_;
  bool by_list_ = false;
  bool keep_whole_tokens_ = true;
  std::unordered_map<uint64_t, int32_t> pair_rank_;  // pair_key(left, right) -> rank
};

// Appends the ids of one pre-tokenized piece. Under tiktoken's rule every single byte must be a
// token (make_bpe_tokenizer checks this); a byte a merge list's vocabulary lacks is dropped.
void bpe_encode_piece(const MergeRule& rule, std::string_view piece, std::vector<int32_t>& ids);

// The two merge loops on their own, for tests that check they agree.
void bpe_merge_short(const MergeRule& rule, std::string_view piece, std::vector<int32_t>& ids);
void bpe_merge_long(const MergeRule& rule, std::string_view piece, std::vector<int32_t>& ids);

}  // namespace kvs::tokenizer
