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
  using T = ChatTemplate;
  for (auto t : {T::None, T::Mistral, T::Llama3, T::ChatML, T::SmolLM2, T::Qwen25, T::DeepSeekR1})
    EXPECT_EQ(kvs::tokenizer::parse_chat_template(kvs::tokenizer::chat_template_name(t)), t);
  EXPECT_THROW(kvs::tokenizer::parse_chat_template("llama2"), kvs::Error);
}

// Template texts as checkpoints carry them (abridged to their distinctive parts).
constexpr const char* kChatML =
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}";
constexpr const char* kSmolLM2 =
    "{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\\nYou are a "
    "helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\\n' }}{% endif %}"
    "{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>'}}";
constexpr const char* kLlama3 =
    "{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + "
    "message['content'] | trim + '<|eot_id|>' }}";
constexpr const char* kQwen25 =
    "{%- if messages[0]['role'] != 'system' %}{{- '<|im_start|>system\\nYou are Qwen, created by "
    "Alibaba Cloud. You are a helpful assistant.<|im_end|>\\n' }}{%- endif %}";
constexpr const char* kDeepSeekR1 =
    "{{bos_token}}{{ns.system_prompt}}{{'<｜User｜>' + message['content']}}"
    "{% if add_generation_prompt %}{{'<｜Assistant｜><think>\\n'}}{% endif %}";
constexpr const char* kMistral =
    "{{ bos_token }}{% for message in messages %}{{ '[INST] ' + message['content'] + ' [/INST]' }}";

TEST(ChatTemplate, RecognisesTheKnownTemplatesByTheirText) {
  using kvs::tokenizer::recognise_chat_template;
  EXPECT_EQ(recognise_chat_template(kChatML, "f"), ChatTemplate::ChatML);
  EXPECT_EQ(recognise_chat_template(kSmolLM2, "f"), ChatTemplate::SmolLM2);
  EXPECT_EQ(recognise_chat_template(kLlama3, "f"), ChatTemplate::Llama3);
  EXPECT_EQ(recognise_chat_template(kMistral, "f"), ChatTemplate::Mistral);
  EXPECT_EQ(recognise_chat_template(kQwen25, "f"), ChatTemplate::Qwen25);
  EXPECT_EQ(recognise_chat_template(kDeepSeekR1, "f"), ChatTemplate::DeepSeekR1);
  const auto message =
      kvs::test::error_of([] { recognise_chat_template("{{ '<start_of_turn>' }}", "m.gguf"); });
  EXPECT_NE(message.find("m.gguf: chat_template: not a known chat template (known: smollm2, "
                         "qwen2.5, chatml, deepseek-r1, llama3, mistral)"),
            std::string::npos)
      << message;
}

TEST(ChatTemplate, AutoReadsAnHfDirectorysTokenizerConfig) {
  using kvs::tokenizer::resolve_chat_template;
  kvs::test::ScratchDir dir;
  dir.write("config.json", "{}");
  // No tokenizer_config.json: the caller's rule.
  EXPECT_EQ(resolve_chat_template("auto", dir.path(), ChatTemplate::Llama3), ChatTemplate::Llama3);
  dir.write("tokenizer_config.json", nlohmann::json{{"chat_template", kChatML}}.dump());
  EXPECT_EQ(resolve_chat_template("auto", dir.path(), ChatTemplate::None), ChatTemplate::ChatML);
  dir.write("tokenizer_config.json",
            nlohmann::json{{"chat_template",
                            {{{"name", "tool_use"}, {"template", kChatML}},
                             {{"name", "default"}, {"template", kMistral}}}}}
                .dump());
  EXPECT_EQ(resolve_chat_template("auto", dir.path(), ChatTemplate::None), ChatTemplate::Mistral);
  // A name is taken as given.
  EXPECT_EQ(resolve_chat_template("none", dir.path(), ChatTemplate::Llama3), ChatTemplate::None);
  dir.write("tokenizer_config.json", nlohmann::json{{"chat_template", "{{ x }}"}}.dump());
  const auto message = kvs::test::error_of(
      [&] { resolve_chat_template("auto", dir.path(), ChatTemplate::None); });
  EXPECT_NE(message.find("tokenizer_config.json: chat_template: not a known chat template"),
            std::string::npos)
      << message;
}

}  // namespace
