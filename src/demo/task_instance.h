// One generated long-context example: a context and one or more questions about it, each with its
// gold answer (what the LongBench record and the scorer see) and the completion the model is
// trained to generate, made of the context's own tokens so that one mechanism (copying what
// follows a match) answers it: "zave 7." (the question's last word, then the number after it in
// the context; the scorer finds 7 for "Paragraph 7"), or a key's three-word value. The
// tokenizer merges " 7." into a token that " 7" alone is not. A LongBench record uses the first
// question; training sequences may ask several (more supervised answer tokens per context, at
// the cost of one context).
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

// The size of a generated context and how many questions are asked about it (passage retrieval
// asks each paragraph at most once, so a small context may get fewer).
struct TaskShape {
  int64_t min_items = 25;  // paragraphs, or key-value records
  int64_t max_items = 50;
  int64_t questions = 1;
};

}  // namespace kvs::demo
