#include <gtest/gtest.h>

#include "test_support.h"

namespace {

using kvs::test::mistral;

nlohmann::json mistral_cases() {
  return kvs::test::read_json(kvs::test::fixtures_dir() + "/tokenizers/mistral-7b-v0.1/cases.json");
}

TEST(MistralTokenizer, EveryReferenceCaseEncodesAndDecodesExactly) {
  const auto cases = mistral_cases();
  ASSERT_GE(cases.at("encode").size(), 10u);
  for (const auto& c : cases.at("encode")) {
    const auto text = c.at("text").get<std::string>();
    const auto expected = c.at("ids").get<std::vector<int32_t>>();
    EXPECT_EQ(mistral().encode(text), expected) << "text: " << text;
    EXPECT_EQ(mistral().decode(expected), c.at("decoded").get<std::string>()) << "text: " << text;
  }
  ASSERT_GE(cases.at("decode").size(), 5u);
  for (const auto& c : cases.at("decode"))
    EXPECT_EQ(mistral().decode(c.at("ids").get<std::vector<int32_t>>()),
              c.at("text").get<std::string>());
}

TEST(MistralTokenizer, IdsMatchTheReference) {
  const auto cases = mistral_cases();
  EXPECT_EQ(mistral().vocab_size(), cases.at("vocab_size").get<int32_t>());
  EXPECT_EQ(mistral().bos_id(), cases.at("bos_id").get<int32_t>());
  EXPECT_EQ(mistral().eos_ids(), std::vector<int32_t>{cases.at("eos_id").get<int32_t>()});
  EXPECT_EQ(mistral().special_token_id("</s>"), 2);
  EXPECT_EQ(mistral().special_token_id("<s>"), 1);
  EXPECT_FALSE(mistral().special_token_id("Hello"));
  EXPECT_FALSE(mistral().special_token_id("<|eot_id|>"));
}

TEST(MistralTokenizer, SkippedControlTokensDoNotSplitTheText) {
  // "Hello world" with an EOS in between decodes like HF's skip_special_tokens: the space stays.
  EXPECT_EQ(mistral().decode({22557, 2, 1526}), "Hello world");
  EXPECT_EQ(mistral().decode({22557, 2, 1526}, false), "Hello</s> world");
}

}  // namespace
