#include <gtest/gtest.h>

#include "core/error.h"
#include "test_support.h"
#include "tokenizer/chat_template.h"

namespace {

using kvs::tokenizer::ChatTemplate;

TEST(ChatTemplate, Llama3PromptIsTheReferenceSequence) {
  // cases.json's note: BOS, <|start_header_id|>, 'user', <|end_header_id|>, '\n\n', content,
  // <|eot_id|>, <|start_header_id|>, 'assistant', <|end_header_id|>, '\n\n'; "user" = 882,
  // "\n\n" = 271, "assistant" = 78191 and the content ids are the reference's.
  const std::vector<int32_t> expected = {128000, 128006, 882,    128007, 271,   9906,   11,
                                         1917,   0,      128009, 128006, 78191, 128007, 271};
  const auto& tok = kvs::test::llama3();
  EXPECT_EQ(kvs::tokenizer::build_prompt_ids(tok, "Hello, world!", ChatTemplate::Llama3), expected);
  // The same as HF's rendered template string tokenized with special tokens parsed.
  EXPECT_EQ(tok.encode_with_special("<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n"
                                    "Hello, world!<|eot_id|><|start_header_id|>assistant"
                                    "<|end_header_id|>\n\n"),
            expected);
}

TEST(ChatTemplate, Llama3ContentWithSpecialTextStaysText) {
  const auto& tok = kvs::test::llama3();
  const auto ids = kvs::tokenizer::build_prompt_ids(tok, "<|eot_id|>", ChatTemplate::Llama3);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 128009), 1);
}

TEST(ChatTemplate, MistralAndNone) {
  const auto& tok = kvs::test::mistral();
  EXPECT_EQ(kvs::tokenizer::build_prompt_ids(tok, "What is the capital of France?",
                                             ChatTemplate::Mistral),
            (std::vector<int32_t>{1, 733, 16289, 28793, 1824, 349, 272, 5565, 302, 4843, 28804, 733,
                                  28748, 16289, 28793}));
  EXPECT_EQ(kvs::tokenizer::build_prompt_ids(tok, "Hello, world!", ChatTemplate::None),
            (std::vector<int32_t>{1, 22557, 28725, 1526, 28808}));
}

TEST(ChatTemplate, Llama3NeedsLlama3SpecialTokens) {
  const auto message = kvs::test::error_of(
      [] { kvs::tokenizer::build_prompt_ids(kvs::test::mistral(), "hi", ChatTemplate::Llama3); });
  EXPECT_NE(message.find("<|start_header_id|>"), std::string::npos) << message;
}

TEST(ChatTemplate, Names) {
  for (auto t : {ChatTemplate::None, ChatTemplate::Mistral, ChatTemplate::Llama3})
    EXPECT_EQ(kvs::tokenizer::parse_chat_template(kvs::tokenizer::chat_template_name(t)), t);
  EXPECT_THROW(kvs::tokenizer::parse_chat_template("llama2"), kvs::Error);
}

}  // namespace
