#include <gtest/gtest.h>

#include <random>

#include "core/rng.h"
#include "test_support.h"
#include "tokenizer/bpe_merge.h"
#include "tokenizer/tiktoken_reader.h"

namespace {

using kvs::tokenizer::ByteTokenTable;

ByteTokenTable table_with(const std::vector<std::string>& merged) {
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) tokens.emplace_back(1, char(b));
  tokens.insert(tokens.end(), merged.begin(), merged.end());
  return ByteTokenTable(tokens);
}

std::vector<int32_t> encode_piece(const ByteTokenTable& t, const std::string& piece) {
  std::vector<int32_t> ids;
  kvs::tokenizer::bpe_encode_piece(t, piece, ids);
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

// The array loop (short pieces) and the heap loop (long pieces) must agree everywhere.
TEST(BpeMerge, ShortAndLongLoopsAgreeOnLlama3) {
  const auto def = kvs::tokenizer::read_tiktoken_bpe(kvs::test::llama3_model_path());
  const ByteTokenTable table(def.tokens);
  std::mt19937_64 gen(3);
  const std::string alphabet = "aeiouxyzlmnst  \n'.,0123456789\xC3\xA9\xE6\x9D\xB1";
  for (int trial = 0; trial < 400; ++trial) {
    std::string piece;
    const auto length = 1 + kvs::bounded_draw(gen, kvs::tokenizer::kShortPieceBytes);
    while (piece.size() < length) piece += alphabet[kvs::bounded_draw(gen, alphabet.size())];
    piece.resize(length);
    std::vector<int32_t> a, b;
    kvs::tokenizer::bpe_merge_short(table, piece, a);
    kvs::tokenizer::bpe_merge_long(table, piece, b);
    ASSERT_EQ(a, b) << "piece: " << piece;
  }
}

}  // namespace
