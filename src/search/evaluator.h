// The evaluator: many eviction policies on the same questions for the price of one prefill each.
// Per question: the question's prompt through decode_with_policies (policy_decode.h: one prefill,
// every policy's compressed cache built during it, batched greedy decode with the dataset's stop
// ids and minimum length), then each answer decoded to text and scored. Policies with a decoding
// schedule answer on one shared decode of their own (decode_time.h: a second prefill, every such
// policy compressing on its own schedule while it writes the answer), scored the same way. Memory
// is bounded by one question's full K/V for one layer plus the compressed caches. Torch-free
// header.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "evict/policy.h"
#include "longbench/scorer.h"
#include "longbench/thinking.h"
#include "search/questions.h"
#include "tokenizer/tokenizer.h"

namespace kvs::model {
class Transformer;
}

namespace kvs::search {

struct PolicyAnswer {
  std::vector<int32_t> tokens;  // generated ids, the stop token included when hit
  std::string prediction;       // decoded, special tokens skipped
  double score = 0;             // per the variant asked for (0..1)
  // Where its cache went (the full cache has none): entries kept per layer and cache head, and
  // the bytes its row held beside the uniform layout's at the same mean.
  std::vector<std::vector<int64_t>> kept_counts;
  int64_t cache_bytes = 0;
  int64_t uniform_bytes = 0;
  // A decode-time policy's (its kept_counts and bytes are what it held after its last step): the
  // most entries one KV head of one layer held at any step, and the bound its schedule sets on
  // that (evict::decode_cache_bound); 0 for the others.
  int64_t largest_cache = 0;
  int64_t cache_bound = 0;
};

struct DecodeTimeRow;

// A row's answer from the shared decode (decode_time.h): its tokens (moved out), the entries each
// head held after the last step and their bytes; a decode-time policy's largest cache and the
// bound its schedule sets on that.
PolicyAnswer scheduled_answer(DecodeTimeRow& row, const evict::Policy& policy,
                              int64_t prompt_tokens, int64_t entry_bytes);

struct QuestionOutcome {
  size_t question = 0;  // index into the QuestionSet
  int64_t prompt_tokens = 0;
  // Prefills its policies shared: one per point where an observation protocol ends the compressed
  // part of the prompt (the whole prompt's also serves the decode-time policies).
  int64_t prefills = 0;
  double prefill_seconds = 0;
  double decode_seconds = 0;
  std::vector<PolicyAnswer> answers;  // one per policy, in order; the full cache last if asked
};

struct EvaluationOptions {
  longbench::ScoreVariant variant = longbench::ScoreVariant::Raw;
  // The scorer sees the answer after a thinking section (Strip) or all of it
  // (longbench/thinking.h).
  longbench::Thinking thinking = longbench::Thinking::Keep;
  bool full_cache = false;  // also decode with the uncompressed cache (no eviction)
  // Called after each question with (done, total) — progress bars, logging.
  std::function<void(size_t, size_t)> on_question;
};

class Evaluator {
 public:
  Evaluator(const model::Transformer& model, const tokenizer::Tokenizer& tok)
      : model_(model), tok_(tok) {}

  // Every policy on every question of `set` (in order).
  std::vector<QuestionOutcome> evaluate(const QuestionSet& set,
                                        const std::vector<evict::Policy>& policies,
                                        const EvaluationOptions& options) const;

  // One question; exposed for benchmarks and tests.
  QuestionOutcome evaluate_question(const QuestionSet& set, size_t question,
                                    const std::vector<evict::Policy>& policies,
                                    const EvaluationOptions& options) const;

 private:
  const model::Transformer& model_;
  const tokenizer::Tokenizer& tok_;
};

// Evaluator::evaluate with a progress bar (questions done, rate, ETA and `status`): the scorer's
// variant, and the thinking rule of the session's settings (session.h).
std::vector<QuestionOutcome> evaluate_with_progress(
    const Evaluator& evaluator, const QuestionSet& set, const std::vector<evict::Policy>& policies,
    longbench::ScoreVariant variant, longbench::Thinking thinking, const std::string& label,
    const std::string& status);

// The prefills the outcomes' questions ran, summed (QuestionOutcome::prefills).
int64_t prefills_of(const std::vector<QuestionOutcome>& outcomes);

// The dataset score of policy `p` over the outcomes: round(100 * sum / n, 2) as the official
// scorer computes it.
double policy_score(const std::vector<QuestionOutcome>& outcomes, size_t p);

}  // namespace kvs::search
