// Rank-ordered byte-pair merging (tiktoken's semantics): starting from single bytes, repeatedly
// merge the adjacent pair whose concatenation is the token of lowest rank (leftmost on ties)
// until no adjacent pair forms a token.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/byte_token_table.h"

namespace kvs::tokenizer {

// Pieces up to this many bytes merge by rescanning a small array (tiktoken's loop, fastest for
// the short pieces of ordinary text); longer ones use a heap so they stay O(n log n).
constexpr size_t kShortPieceBytes = 128;

// Appends the ids of one pre-tokenized piece. A piece that is a token itself is that token. Every
// single byte must be a token (make_bpe_tokenizer checks this).
void bpe_encode_piece(const ByteTokenTable& table, std::string_view piece,
                      std::vector<int32_t>& ids);

// The two merge loops on their own, for tests that check they agree.
void bpe_merge_short(const ByteTokenTable& table, std::string_view piece,
                     std::vector<int32_t>& ids);
void bpe_merge_long(const ByteTokenTable& table, std::string_view piece, std::vector<int32_t>& ids);

}  // namespace kvs::tokenizer
