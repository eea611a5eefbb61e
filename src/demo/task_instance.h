// One generated long-context example: a context and one or more questions about it, each with its
// gold answer (what the LongBench record and the scorer see) and the completion the model is
// trained to generate: the text that follows the question's words in the context ("7." after a
// paragraph's last words), which the scorer accepts for the answer ("Paragraph 7"). An exact copy
// of context tokens, so the model learns one mechanism (the tokenizer merges " 7." into a token
// that " 7" alone is not). A
// LongBench record uses the first question; training sequences may ask several (more supervised
// answer tokens per context, at the cost of one context).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kvs::demo {

struct TaskInstance {
  std::string context;
  std::vector<std::string> questions;
  std::vector<std::string> answers;      // answers[i] answers questions[i]
  std::vector<std::string> completions;  // completions[i]: the trained output for questions[i]
};

// The size of a generated context and how many questions are asked about it.
struct TaskShape {
  int64_t min_items = 25;  // paragraphs, or key-value records
  int64_t max_items = 50;
  int64_t questions = 1;
};

}  // namespace kvs::demo
