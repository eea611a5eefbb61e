// The text datasets' evaluation (longbench::is_text_metric, written by `kvsearch data text`): a
// text's first tokens are the prompt, and every policy, with the full cache beside it, is fed the
// same continuation on one shared decode (decode_time.h). Each policy is scored against the full
// cache on the same tokens, so that higher is better and 1 is as good as the full cache:
//   perplexity: the full cache's perplexity over the policy's, exp(nll_full - nll_policy), on
//     the text's own continuation (teacher forcing; the evaluation of StreamingLLM, H2O, TOVA);
//   fidelity:   the share of steps whose argmax equals the full cache's, teacher-forced on the
//     full cache's own greedy continuation of the prompt (max_new_tokens, no stop token).
// The prediction records the numbers behind the score in words (both perplexities; the mean KL
// divergence to the full cache). `kvsearch perplexity` and `kvsearch fidelity` measure one text
// the same way, with per-block figures. Torch-free header.
#pragma once

#include <cstddef>
#include <vector>

#include "evict/policy.h"
#include "search/evaluator.h"
#include "search/questions.h"

namespace kvs::search {

// Question `question` of a text dataset's set under every policy (a decoding schedule, a prefill
// budget, or both; a prefill budget the prompt fits in without a schedule is the full cache); with
// full_cache also the full cache's own answer (score 1), last.
QuestionOutcome evaluate_text_question(const model::Transformer& model, const QuestionSet& set,
                                       size_t question, const std::vector<evict::Policy>& policies,
                                       bool full_cache);

}  // namespace kvs::search
