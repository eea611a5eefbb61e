// From a LongBench record to the prompt's token ids, as the official pred.py (and the PyramidKV
// reference built on it) does:
//   1. fill the dataset's template with the record (str.format, format.h);
//   2. tokenize the whole text with BOS; when that is longer than the model's max length, keep
//      the first and the last max_length/2 tokens (integer half), decode each half without special
//      tokens, join the two strings (middle truncation: instructions sit at both ends);
//   3. apply the chat template unless it is None or the dataset is on the official skip list
//      (trec, triviaqa, samsum, lsht, lcc, repobench-p: few-shot or completion prompts);
//   4. tokenize again: BOS + the (templated) text.
// Truncation happens before the chat template, so the template is never cut.
// Datasets that declare their chat template (config.h; RULER's) use it instead of the model's, and
// a record's answer prefix (RULER) follows the wrapper: the model continues from it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "longbench/config.h"
#include "longbench/dataset.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace kvs::longbench {

// Max lengths the reference implementation truncates to, by model family.
constexpr int64_t kMistralMaxLength = 31500;
constexpr int64_t kLlama3MaxLength = 7500;
constexpr int64_t kLlama2MaxLength = 3950;

struct PromptOptions {
  int64_t max_length = kMistralMaxLength;
  // None for Mistral by default, as the reference implementation runs it.
  tokenizer::ChatTemplate chat_template = tokenizer::ChatTemplate::None;
  bool question_span = false;  // also locate the question's tokens (Prompt::question)
};

// Token positions [begin, end) of a prompt's ids.
struct TokenSpan {
  int64_t begin = 0, end = 0;
  bool operator==(const TokenSpan& o) const { return begin == o.begin && end == o.end; }
};

struct Prompt {
  std::string text;  // the filled template after truncation, before any chat template
  std::vector<int32_t> ids;
  bool truncated = false;
  size_t untruncated_length = 0;  // tokens (with BOS) before truncation
  // The record's question (`input`) in `ids`, with PromptOptions::question_span: unset where the
  // input is empty or did not survive truncation. See question_span().
  std::optional<TokenSpan> question;
};

// The record's fields a template may use: context, input, dataset, language, _id, length.
std::map<std::string, std::string> template_fields_of(const Record& record);

// Step 1: the dataset's template filled with the record.
std::string fill_prompt(const Config& config, const std::string& dataset, const Record& record);

// Step 2 alone: the text unchanged when BOS + its tokens fit in max_length (>= 2), otherwise the
// joined decoded halves.
std::string truncate_middle(const tokenizer::Tokenizer& tok, const std::string& text,
                            int64_t max_length, size_t* untruncated_length = nullptr);

// Step 3's rule: whether `chat_template` is applied to prompts of this dataset.
bool applies_chat_template(const std::string& dataset, tokenizer::ChatTemplate chat_template);

// Step 4: the chat wrapper around the text, then the answer prefix. Without a wrapper the prefix
// is encoded with the text (RULER's base template); after a wrapper it is encoded on its own, as
// the wrapper's special tokens split the rendered prompt there.
std::vector<int32_t> prompt_ids(const tokenizer::Tokenizer& tok, const std::string& text,
                                tokenizer::ChatTemplate chat_template,
                                const std::string& answer_prefix);

// Where `question` (its last occurrence in `text`) lies in ids = prompt_ids(tok, text, chat,
// answer_prefix), found without changing how the prompt is tokenized: the piece that holds the
// text (tokenizer::user_text_piece) is located in `ids`, and each end of the question is the
// longest common prefix of that piece's ids with the ids of the piece cut at that character.
// Exact wherever the question starts and ends on token boundaries; a token that straddles a
// boundary counts as the question's. Unset where the question is empty or not in the text.
std::optional<TokenSpan> question_span(const tokenizer::Tokenizer& tok, const std::string& text,
                                       tokenizer::ChatTemplate chat_template,
                                       const std::string& answer_prefix,
                                       const std::string& question,
                                       const std::vector<int32_t>& ids);

// Steps 1-4 for one record.
Prompt build_prompt(const tokenizer::Tokenizer& tok, const Config& config,
                    const std::string& dataset, const Record& record,
                    const PromptOptions& options = {});

}  // namespace kvs::longbench
