#include <gtest/gtest.h>

#include "core/error.h"
#include "test_support.h"
#include "tokenizer/tiktoken_reader.h"

namespace {

using kvs::test::error_of;
using kvs::test::llama3;

const std::string kFffd = "\xEF\xBF\xBD";

nlohmann::json llama3_cases() {
  return kvs::test::read_json(kvs::test::fixtures_dir() + "/tokenizers/llama-3.1/cases.json");
}

TEST(Llama3Tokenizer, EveryReferenceCaseEncodesAndDecodesExactly) {
  const auto cases = llama3_cases();
  ASSERT_GE(cases.at("encode").size(), 10u);
  for (const auto& c : cases.at("encode")) {
    const auto text = c.at("text").get<std::string>();
    const auto expected = c.at("ids").get<std::vector<int32_t>>();
    const auto ids = llama3().encode(text);
    EXPECT_EQ(ids, expected) << "text: " << text;
    EXPECT_EQ(llama3().decode(expected), text);
  }
}

TEST(Llama3Tokenizer, SpecialTokensMatchTheReference) {
  const auto cases = llama3_cases();
  const auto& tok = llama3();
  EXPECT_EQ(tok.bos_id(), cases.at("bos_id").get<int32_t>());
  EXPECT_EQ(tok.eos_ids(), cases.at("eos_ids").get<std::vector<int32_t>>());
  const int32_t first = cases.at("special_tokens_start").get<int32_t>();
  EXPECT_EQ(tok.vocab_size(), first + cases.at("num_special_tokens").get<int32_t>());
  for (const auto& [name, id] : cases.at("special_tokens_named").items())
    EXPECT_EQ(tok.special_token_id(name), id.get<int32_t>()) << name;
  // Meta's tokenizer.py numbers the reserved tokens from 2 after the 11 named ones.
  EXPECT_EQ(tok.special_token_id("<|reserved_special_token_2|>"), 128011);
  EXPECT_EQ(tok.special_token_id("<|reserved_special_token_246|>"), 128255);
  EXPECT_EQ(tok.special_token_id("<|step_id|>"), 128005);
  EXPECT_FALSE(tok.special_token_id("<|reserved_special_token_247|>"));
  EXPECT_FALSE(tok.special_token_id("hello"));
}

TEST(Llama3Tokenizer, SpecialTokenTextIsPlainTextUnlessAsked) {
  const auto& tok = llama3();
  // tiktoken's encode_ordinary of "<|eot_id|>"
  EXPECT_EQ(tok.encode("<|eot_id|>"), (std::vector<int32_t>{27, 91, 68, 354, 851, 91, 29}));
  EXPECT_EQ(tok.encode_with_special("<|eot_id|>"), (std::vector<int32_t>{128009}));
  EXPECT_EQ(tok.encode_with_special("Hello, world!<|eot_id|><|eot_id|>user"),
            (std::vector<int32_t>{9906, 11, 1917, 0, 128009, 128009, 882}));
  EXPECT_EQ(tok.encode_with_special("<|eot_id"), tok.encode("<|eot_id"));
}

TEST(Llama3Tokenizer, DecodeWithAndWithoutSpecialTokens) {
  const auto& tok = llama3();
  const std::vector<int32_t> ids{128000, 9906, 11, 1917, 0, 128009};
  EXPECT_EQ(tok.decode(ids, true), "Hello, world!");
  EXPECT_EQ(tok.decode(ids, false), "<|begin_of_text|>Hello, world!<|eot_id|>");
  EXPECT_THROW(tok.decode({128256}), kvs::Error);
  EXPECT_THROW(tok.decode({-1}), kvs::Error);
}

TEST(Llama3Tokenizer, CharactersCutBetweenTokensDecodeAsPythonDoes) {
  const auto& tok = llama3();
  // "🙂" is two tokens: F0 9F | 99 82 (ids from tiktoken).
  EXPECT_EQ(tok.encode("\xF0\x9F\x99\x82"), (std::vector<int32_t>{9468, 19044}));
  EXPECT_EQ(tok.decode({9468}), kFffd);           // one truncated sequence: one U+FFFD
  EXPECT_EQ(tok.decode({19044}), kFffd + kFffd);  // two stray continuation bytes
  EXPECT_EQ(tok.decode({9468, 19044}), "\xF0\x9F\x99\x82");
}

TEST(Llama3Tokenizer, InvalidUtf8InputEncodesAsReplacementCharacter) {
  const auto& tok = llama3();
  EXPECT_EQ(tok.encode("a\xFF"
                       "b"),
            tok.encode("a" + kFffd + "b"));
}

TEST(Llama3Tokenizer, LongPiecesEncodeAndRoundTrip) {
  const auto& tok = llama3();
  const std::string letters(5000, 'x');
  const std::string spaces(3000, ' ');
  for (const auto& text : {letters, spaces + "a", "a" + spaces + "b"})
    EXPECT_EQ(tok.decode(tok.encode(text)), text);
}

class TiktokenFileErrors : public ::testing::Test {
 protected:
  kvs::test::ScratchDir dir;
  std::string load_error(const std::string& content) {
    const auto path = dir.write("tokenizer.model", content);
    return error_of([&] { kvs::tokenizer::load_tiktoken(path); });
  }
};

TEST_F(TiktokenFileErrors, SmallFileLoadsWithSpecialsAfterTheLastRank) {
  const auto path = dir.write("tokenizer.model", kvs::test::small_tiktoken({"ab", "abc"}));
  const auto tok = kvs::tokenizer::load_tiktoken(path);
  EXPECT_EQ(tok->bos_id(), 258);
  EXPECT_EQ(tok->vocab_size(), 258 + 256);
  EXPECT_EQ(tok->encode("abc ab"), (std::vector<int32_t>{257, ' ', 256}));
}

TEST_F(TiktokenFileErrors, MalformedLineNamesFileAndLine) {
  auto text = kvs::test::small_tiktoken({});
  text += "YWI=\n";  // no rank: line 257
  const auto message = load_error(text);
  EXPECT_NE(message.find("tokenizer.model:257:"), std::string::npos) << message;
  EXPECT_NE(message.find("expected '<base64 token> <rank>'"), std::string::npos) << message;
}

TEST_F(TiktokenFileErrors, BadBase64AndBadRank) {
  auto bad64 = kvs::test::small_tiktoken({}) + "Y*I= 256\n";
  EXPECT_NE(load_error(bad64).find(":257: 'Y*I=' is not a base64 token"), std::string::npos)
      << load_error(bad64);
  auto bad_rank = kvs::test::small_tiktoken({}) + "YWI= 2x6\n";
  EXPECT_NE(load_error(bad_rank).find(":257: rank '2x6'"), std::string::npos)
      << load_error(bad_rank);
}

TEST_F(TiktokenFileErrors, DuplicateRankNamesBothLines) {
  auto text = kvs::test::small_tiktoken({"ab"}) + kvs::test::base64("cd") + " 256\n";  // line 258
  const auto message = load_error(text);
  EXPECT_NE(message.find("tokenizer.model:258: rank 256 already given on line 257"),
            std::string::npos)
      << message;
}

TEST_F(TiktokenFileErrors, DuplicateTokenAndRankGap) {
  auto dup = kvs::test::small_tiktoken({"ab"}) + kvs::test::base64("ab") + " 257\n";
  const auto m1 = load_error(dup);
  EXPECT_NE(m1.find("tokenizer.model:258: the token of rank 257 repeats the token of line 257"),
            std::string::npos)
      << m1;
  auto gap = kvs::test::small_tiktoken({}) + kvs::test::base64("ab") + " 257\n";
  const auto m2 = load_error(gap);
  EXPECT_NE(m2.find("rank 256 is missing"), std::string::npos) << m2;
}

TEST_F(TiktokenFileErrors, MissingSingleByteToken) {
  std::string text;
  for (int b = 0; b < 255; ++b)
    text += kvs::test::base64(std::string(1, char(b))) + " " + std::to_string(b) + "\n";
  const auto message = load_error(text);
  EXPECT_NE(message.find("no token for the single byte 0xFF"), std::string::npos) << message;
}

}  // namespace
