// Prompt building with the real Mistral tokenizer: middle truncation, the chat rule, generation
// settings. The templates here are made up (the project does not ship the official ones).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "common/fixtures.h"
#include "core/error.h"
#include "longbench/generation.h"
#include "longbench/prompt.h"

namespace {

using namespace kvs::longbench;
using kvs::tokenizer::ChatTemplate;

class PromptTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tok_ = kvs::tokenizer::load_sentencepiece(kvs::test::fixtures_dir() +
                                              "/tokenizers/mistral-7b-v0.1/tokenizer.model")
               .release();
  }
  static void TearDownTestSuite() { delete tok_; }

  static Config config() {
    Config c;
    for (const auto& d : english_datasets()) {
      c.prompt_templates[d.name] = "Read this: {context}\n\nQuestion: {input}\nAnswer:";
      c.max_new_tokens[d.name] = 32;
    }
    c.max_new_tokens["samsum"] = 128;
    return c;
  }

  static Record record(const std::string& context) {
    Record r;
    r.context = context;
    r.input = "Who wrote it?";
    r.answers = {"x"};
    return r;
  }

  static std::string long_context() {
    std::string text;
    for (int i = 0; i < 300; ++i) text += "Sentence number " + std::to_string(i) + " says caf\u00e9. ";
    return text;
  }

  static std::vector<int32_t> bos_plus(const std::string& text) {
    std::vector<int32_t> ids{tok_->bos_id()};
    const auto body = tok_->encode(text);
    ids.insert(ids.end(), body.begin(), body.end());
    return ids;
  }

  static kvs::tokenizer::Tokenizer* tok_;
};

kvs::tokenizer::Tokenizer* PromptTest::tok_ = nullptr;

TEST_F(PromptTest, UnderTheLimitIsUntouched) {
  const Record r = record("A short story by Ann.");
  const Prompt p = build_prompt(*tok_, config(), "hotpotqa", r, {4096, ChatTemplate::None});
  EXPECT_EQ(p.text, "Read this: A short story by Ann.\n\nQuestion: Who wrote it?\nAnswer:");
  EXPECT_EQ(p.ids, bos_plus(p.text));
  EXPECT_FALSE(p.truncated);
  // Exactly at the limit is still untouched.
  const Prompt exact = build_prompt(*tok_, config(), "hotpotqa", r,
                                    {static_cast<int64_t>(p.ids.size()), ChatTemplate::None});
  EXPECT_FALSE(exact.truncated);
  EXPECT_EQ(exact.ids, p.ids);
}

TEST_F(PromptTest, OverTheLimitKeepsFirstAndLastHalves) {
  const Record r = record(long_context());
  const std::string full = fill_prompt(config(), "hotpotqa", r);
  const auto full_ids = bos_plus(full);
  ASSERT_GT(full_ids.size(), 2000u);
  for (const int64_t max_length : {int64_t{512}, int64_t{513}}) {
    SCOPED_TRACE(max_length);
    const Prompt p = build_prompt(*tok_, config(), "hotpotqa", r, {max_length, ChatTemplate::None});
    EXPECT_TRUE(p.truncated);
    EXPECT_EQ(p.untruncated_length, full_ids.size());
    const size_t half = 256;  // int(max_length / 2) for both
    const std::vector<int32_t> head(full_ids.begin(), full_ids.begin() + half);
    const std::vector<int32_t> tail(full_ids.end() - half, full_ids.end());
    const std::string expected = tok_->decode(head, true) + tok_->decode(tail, true);
    EXPECT_EQ(p.text, expected);
    EXPECT_EQ(p.ids, bos_plus(expected));  // re-tokenized as a whole
    EXPECT_EQ(p.text.rfind("Read this: Sentence number 0 says", 0), 0u);
    EXPECT_NE(p.text.find("Sentence number 299 says caf\u00e9. \n\nQuestion: Who wrote it?\nAnswer:"),
              std::string::npos);
    EXPECT_EQ(p.text.find("Sentence number 150 "), std::string::npos);  // the middle is gone
    // Re-tokenizing the joined halves may merge tokens at the seam, never much more.
    EXPECT_NEAR(static_cast<double>(p.ids.size()), 2.0 * half, 3.0);  // BOS + (half - 1) + half
  }
  EXPECT_THROW(truncate_middle(*tok_, full, 1), kvs::Error);
}

TEST_F(PromptTest, ChatTemplateRuleAndOrder) {
  EXPECT_FALSE(applies_chat_template("hotpotqa", ChatTemplate::None));
  EXPECT_TRUE(applies_chat_template("hotpotqa", ChatTemplate::Mistral));
  for (const char* skipped : {"trec", "triviaqa", "samsum", "lcc", "repobench-p"})
    EXPECT_FALSE(applies_chat_template(skipped, ChatTemplate::Mistral)) << skipped;

  const Record r = record(long_context());
  const Prompt chat = build_prompt(*tok_, config(), "hotpotqa", r, {512, ChatTemplate::Mistral});
  const Prompt plain = build_prompt(*tok_, config(), "hotpotqa", r, {512, ChatTemplate::None});
  // Truncation first, then the template around the truncated text: the template survives.
  EXPECT_EQ(chat.text, plain.text);
  EXPECT_EQ(chat.ids, kvs::tokenizer::build_prompt_ids(*tok_, plain.text, ChatTemplate::Mistral));
  const std::string decoded = tok_->decode(chat.ids, true);
  EXPECT_EQ(decoded.rfind("[INST] Read this:", 0), 0u);
  EXPECT_EQ(decoded.substr(decoded.size() - 8), " [/INST]");
  const Prompt few_shot = build_prompt(*tok_, config(), "trec", r, {512, ChatTemplate::Mistral});
  EXPECT_EQ(few_shot.ids, bos_plus(few_shot.text));
}

TEST_F(PromptTest, DeclaredChatTemplateAndAnswerPrefix) {
  Config c = config();
  c.prompt_templates["ruler_task"] = "{context}{input}";
  c.chat_templates["ruler_task"] = ChatTemplate::Mistral;
  Record r = record("Hidden: 42.");
  r.input = "\nWhat is hidden?";
  r.answer_prefix = " The hidden value is";
  // The declared wrapper wins over the model's (None here); the prefix follows it.
  const Prompt p = build_prompt(*tok_, c, "ruler_task", r, {512, ChatTemplate::None});
  auto expected = kvs::tokenizer::build_prompt_ids(*tok_, "Hidden: 42.\nWhat is hidden?", ChatTemplate::Mistral);
  const auto prefix = tok_->encode(" The hidden value is");
  expected.insert(expected.end(), prefix.begin(), prefix.end());
  EXPECT_EQ(p.ids, expected);
  // Without a wrapper the prefix is encoded with the text, as one string.
  EXPECT_EQ(prompt_ids(*tok_, "Hidden: 42.", ChatTemplate::None, " It is"), bos_plus("Hidden: 42. It is"));
  // LongBench records have no prefix: the prompt is unchanged.
  EXPECT_EQ(prompt_ids(*tok_, "Hidden: 42.", ChatTemplate::None, ""), bos_plus("Hidden: 42."));
}

TEST_F(PromptTest, GenerationSettings) {
  EXPECT_EQ(newline_token_id(*tok_), 13);
  const auto samsum = generation_settings(config(), "samsum", *tok_);
  EXPECT_EQ(samsum.max_new_tokens, 128);
  EXPECT_EQ(samsum.min_new_tokens, 1);
  EXPECT_EQ(samsum.stop_ids, (std::vector<int32_t>{2, 13}));
  const auto qa = generation_settings(config(), "hotpotqa", *tok_);
  EXPECT_EQ(qa.max_new_tokens, 32);
  EXPECT_EQ(qa.stop_ids, (std::vector<int32_t>{2}));
  EXPECT_THROW(generation_settings(config(), "vcsum", *tok_), kvs::Error);
}

TEST_F(PromptTest, TemplateErrorsNameTheDataset) {
  Config c = config();
  c.prompt_templates["qasper"] = "{context} {answers}";
  try {
    fill_prompt(c, "qasper", record("x"));
    FAIL() << "no error";
  } catch (const kvs::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "dataset2prompt.json[qasper]: the template uses {answers}, which the record lacks");
  }
}

}  // namespace
