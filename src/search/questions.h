// The questions of one dataset split, ready for the model: prompt ids built once (template,
// truncation, chat rule), gold answers and the dataset's generation settings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "longbench/config.h"
#include "longbench/dataset.h"
#include "longbench/generation.h"
#include "longbench/prompt.h"
#include "longbench/split.h"
#include "model/config.h"
#include "tokenizer/tokenizer.h"

namespace kvs::search {

struct Question {
  size_t record_index = 0;  // line of the dataset file (0-based)
  std::string id;           // the record's _id
  std::vector<int32_t> prompt_ids;
  std::vector<std::string> answers;
  std::vector<std::string> all_classes;
  int64_t length = 0;  // words, for LongBench-E buckets
  // The record's question (`input`) in prompt_ids (longbench::question_span), which the question
  // and context observation protocols need; unset where the input is empty or was truncated away.
  std::optional<longbench::TokenSpan> question_span;
  // A text dataset's (longbench::is_text_metric): the text's tokens after the prompt, as many as
  // the dataset's max_new_tokens (prompt_ids are its first prompt tokens, no template).
  std::vector<int32_t> continuation_ids;
};

struct QuestionSet {
  std::string dataset;
  std::vector<Question> questions;
  longbench::GenerationSettings generation;
};

// Builds the questions of `indices` (record positions) of a loaded dataset. A text dataset's
// record is its text, tokenized whole without template or truncation and cut into the prompt and
// the continuation; a text shorter than both is an error naming it.
QuestionSet build_questions(const tokenizer::Tokenizer& tok, const longbench::Config& config,
                            const std::string& dataset,
                            const std::vector<longbench::Record>& records,
                            const std::vector<size_t>& indices,
                            const longbench::PromptOptions& prompt_options);

// The prompt rules for a model (docs/reference.md §4). max_length 0 takes the model's default:
// 31500 for Mistral, 7500 for Llama-3 (vocabulary >= 128000; the PyramidKV reference uses 7500 for
// every Llama-3 model, 3.1 included), 3950 for other Llama models of at most 4096 positions
// (Llama-2), max_position_embeddings for longer-context ones (SmolLM2). chat_template "auto" is
// llama3 for Llama-3 models (with the official skip list) and none otherwise, as the reference does
// for Mistral, unless a non-Mistral checkpoint at model_arg declares a known template (SmolLM2's
// GGUF: smollm2);
// a template's name forces it.
longbench::PromptOptions model_prompt_options(const model::ModelConfig& config, int64_t max_length,
                                              const std::string& chat_template,
                                              const std::string& model_arg = "");

// A dataset as the search reads it: config, records and the dev/test split.
struct SplitData {
  longbench::Config config;
  std::vector<longbench::Record> records;
  longbench::Split split;
};
SplitData load_split_data(const std::string& longbench_dir, const std::string& dataset, uint64_t seed);

}  // namespace kvs::search
