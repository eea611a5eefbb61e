#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "core/rng.h"
#include "test_support.h"
#include "tokenizer/bpe_merge.h"
#include "tokenizer/tiktoken_reader.h"

namespace {

using kvs::tokenizer::ByteTokenTable;
using kvs::tokenizer::MergeRule;

ByteTokenTable table_with(const std::vector<std::string>& merged) {
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) tokens.emplace_back(1, char(b));
  tokens.insert(tokens.end(), merged.begin(), merged.end());
  return ByteTokenTable(tokens);
}

std::vector<int32_t> encode_piece(const ByteTokenTable& t, const std::string& piece) {
  std::vector<int32_t> ids;
  kvs::tokenizer::bpe_encode_piece(MergeRule(t), piece, ids);
  return ids;
}

std::vector<int32_t> encode_with_list(const ByteTokenTable& t,
                                      const std::vector<std::pair<int32_t, int32_t>>& merges,
                                      bool keep_whole_tokens, const std::string& piece) {
  std::vector<int32_t> ids;
  kvs::tokenizer::bpe_encode_piece(MergeRule(t, merges, keep_whole_tokens), piece, ids);
  return ids;
}

TEST(ByteTokenTable, FindsEveryTokenAndNothingElse) {
  const auto t = table_with({"ab", "bc", "abc"});
  for (int32_t id = 0; id < t.size(); ++id) EXPECT_EQ(t.find(t.token(id)), id);
  EXPECT_EQ(t.find("abcd"), -1);
  EXPECT_EQ(t.find(""), -1);
}

TEST(BpeMerge, LowestRankFirstThenWholeTokens) {
  const auto t = table_with({"ab", "bc", "abc", "cd"});            // ranks 256..259
  EXPECT_EQ(encode_piece(t, "abc"), (std::vector<int32_t>{258}));  // a whole token stays whole
  // ab (256) merges before bc (257) and cd (259); then ab+c forms abc (258) before c+d.
  EXPECT_EQ(encode_piece(t, "abcd"), (std::vector<int32_t>{258, 'd'}));
  EXPECT_EQ(encode_piece(t, "bcd"), (std::vector<int32_t>{257, 'd'}));
  EXPECT_EQ(encode_piece(t, "xcd"), (std::vector<int32_t>{'x', 259}));
}

TEST(BpeMerge, TiesGoToTheLeftmostPair) {
  const auto t = table_with({"aa"});
  EXPECT_EQ(encode_piece(t, "aaa"), (std::vector<int32_t>{256, 'a'}));
}

// A merge list: only listed pairs merge, by list position, whatever the merged token's id.
TEST(BpeMerge, MergeListRanksPairsByPosition) {
  const auto t = table_with({"ab", "bc", "abc", "cd"});  // ids 256..259
  // bc before ab: the list, not the ids, orders them.
  const std::vector<std::pair<int32_t, int32_t>> list = {{'b', 'c'}, {'a', 'b'}, {'a', 257}};
  EXPECT_EQ(encode_with_list(t, list, false, "abc"), (std::vector<int32_t>{258}));  // a + bc
  // ab+c is not listed, though "abc" is a token; c+d is not listed, though "cd" is a token.
  EXPECT_EQ(encode_with_list(t, {{'a', 'b'}}, false, "abc"), (std::vector<int32_t>{256, 'c'}));
  EXPECT_EQ(encode_with_list(t, list, false, "bcd"), (std::vector<int32_t>{257, 'd'}));
  // HF's ignore_merges keeps a piece that is a token whole instead of merging it up.
  EXPECT_EQ(encode_with_list(t, {}, true, "cd"), (std::vector<int32_t>{259}));
  EXPECT_EQ(encode_with_list(t, {{'a', 'b'}}, false, "cd"), (std::vector<int32_t>{'c', 'd'}));
  // Ties (the same pair twice) go to the leftmost.
  const auto aa = table_with({"aa"});
  EXPECT_EQ(encode_with_list(aa, {{'a', 'a'}}, false, "aaa"), (std::vector<int32_t>{256, 'a'}));
}

// The array loop (short pieces) and the heap loop (long pieces) must agree everywhere, under
// both rules.
TEST(BpeMerge, ShortAndLongLoopsAgreeOnLlama3) {
  const auto def = kvs::tokenizer::read_tiktoken_bpe(kvs::test::llama3_model_path());
  const ByteTokenTable table(def.tokens);
  const MergeRule rule(table);
  std::mt19937_64 gen(3);
  const std::string alphabet = "aeiouxyzlmnst  \n'.,0123456789\xC3\xA9\xE6\x9D\xB1";
  for (int trial = 0; trial < 400; ++trial) {
    std::string piece;
    const auto length = 1 + kvs::bounded_draw(gen, kvs::tokenizer::kShortPieceBytes);
    while (piece.size() < length) piece += alphabet[kvs::bounded_draw(gen, alphabet.size())];
    piece.resize(length);
    std::vector<int32_t> a, b;
    kvs::tokenizer::bpe_merge_short(rule, piece, a);
    kvs::tokenizer::bpe_merge_long(rule, piece, b);
    ASSERT_EQ(a, b) << "piece: " << piece;
  }
}

TEST(BpeMerge, ShortAndLongLoopsAgreeOnAMergeList) {
  // Every pair of single letters merges, then pairs of pairs, ranked by a shuffled list.
  std::vector<std::string> merged;
  std::vector<std::pair<int32_t, int32_t>> list;
  const std::string letters = "abcd";
  for (char x : letters)
    for (char y : letters) {
      list.emplace_back(x, y);
      merged.push_back(std::string{x, y});
    }
  for (size_t i = 0; i < 16; ++i)
    for (size_t j = 0; j < 16; ++j) {
      list.emplace_back(256 + static_cast<int32_t>(i), 256 + static_cast<int32_t>(j));
      merged.push_back(merged[i] + merged[j]);
    }
  std::mt19937_64 gen(5);
  std::shuffle(list.begin(), list.end(), gen);
  const auto table = table_with(merged);
  const MergeRule rule(table, list, false);
  for (int trial = 0; trial < 200; ++trial) {
    std::string piece;
    const auto length = 1 + kvs::bounded_draw(gen, kvs::tokenizer::kShortPieceBytes);
    while (piece.size() < length) piece += letters[kvs::bounded_draw(gen, letters.size())];
    std::vector<int32_t> a, b;
    kvs::tokenizer::bpe_merge_short(rule, piece, a);
    kvs::tokenizer::bpe_merge_long(rule, piece, b);
    ASSERT_EQ(a, b) << "piece: " << piece;
  }
}

}  // namespace
