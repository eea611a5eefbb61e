// One generated RULER example and what its generator draws from. Plain data, torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ruler/haystack.h"
#include "ruler/qa_corpus.h"
#include "ruler/wording.h"

namespace kvs::ruler {

struct Sample {
  std::string context;        // task text up to and including the haystack (+ any example first)
  std::string question;       // the rest of the task text
  std::string answer_prefix;  // continued by the model after the chat wrapper
  std::vector<std::string> answers;
  // niah: each needle's depth (percent: the drawn depth for essays, line / lines for line
  // haystacks) and the code-point offset of its sentence in `context`, in the context's order.
  std::vector<int> needle_depths;
  std::vector<int64_t> needle_offsets;
  // qa: the numbers (from 1) of the question's own documents (qa_corpus.h) in the context.
  std::vector<int> gold_documents;
};

struct Resources {
  const Wording& wording;
  const std::vector<std::string>& essay_words;
  const std::vector<std::string>& word_list;  // distinct words (word_list.h)
  int64_t target_length;  // the prompt's token budget: cwe's repeats and fwe's vocabulary use it
  const QaCorpus* qa = nullptr;  // qa: the task's questions and documents
  size_t question_index = 0;     // qa: sample i asks question i
  // qa: RULER shuffles the documents with a fresh generator of the run's seed (docs/ruler.md 5.3),
  // so one document count always gives one permutation.
  uint64_t shuffle_seed = 0;
};

}  // namespace kvs::ruler
