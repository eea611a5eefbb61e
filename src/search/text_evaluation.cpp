#include "search/text_evaluation.h"

#include <cmath>
#include <optional>

#include "core/error.h"
#include "core/strfmt.h"
#include "longbench/dataset.h"
#include "search/decode_time.h"

namespace kvs::search {

QuestionOutcome evaluate_text_question(const model::Transformer& model, const QuestionSet& set,
                                       size_t question, const std::vector<evict::Policy>& policies,
                                       bool full_cache) {
  const Question& q = set.questions.at(question);
  const longbench::Metric metric = longbench::dataset_info(set.dataset).metric;
  if (!longbench::is_text_metric(metric))
    throw Error("text evaluation: dataset '" + set.dataset + "' is not a text dataset");
  QuestionOutcome outcome;
  outcome.question = question;
  outcome.prompt_tokens = static_cast<int64_t>(q.prompt_ids.size());
  const auto steps = static_cast<long long>(q.continuation_ids.size());

  DecodeTimeOptions fed;
  fed.full_cache = true;
  if (metric == longbench::Metric::Perplexity) {
    fed.teacher = q.continuation_ids;
  } else {
    DecodeTimeResult reference;
    fed.teacher = full_cache_continuation(
        model, q.prompt_ids, static_cast<int64_t>(q.continuation_ids.size()), &reference);
    outcome.prefills += 1;
    outcome.prefill_seconds += reference.prefill_seconds;
    outcome.decode_seconds += reference.decode_seconds;
  }
  // A policy that compresses neither the prompt (a budget it holds) nor while decoding keeps
  // everything: it is the full cache, whatever its method, and answers as the full cache's row.
  std::vector<evict::Policy> members;
  std::vector<std::optional<size_t>> row_of(policies.size());
  for (size_t i = 0; i < policies.size(); ++i) {
    const evict::Policy& p = policies[i];
    if (p.decoding || p.budget < outcome.prompt_tokens) {
      row_of[i] = members.size();
      members.push_back(p);
    }
  }
  DecodeTimeResult out = decode_with_schedules(model, q.prompt_ids, members, fed);
  outcome.prefills += 1;
  outcome.prefill_seconds += out.prefill_seconds;
  outcome.decode_seconds += out.decode_seconds + out.compress_seconds;

  const DecodeTimeRow& full = out.rows.back();
  const double full_nll = step_mean(full.nll);
  const auto full_answer = [&] {
    PolicyAnswer a;
    a.tokens = full.tokens;
    a.score = 1;
    a.prediction = metric == longbench::Metric::Perplexity
                       ? strfmt("perplexity %.4f (the full cache), over %lld tokens",
                                std::exp(full_nll), steps)
                       : strfmt("the full cache's own continuation, %lld steps", steps);
    return a;
  };
  for (size_t i = 0; i < policies.size(); ++i) {
    if (!row_of[i]) {
      outcome.answers.push_back(full_answer());
      continue;
    }
    DecodeTimeRow& row = out.rows[*row_of[i]];
    PolicyAnswer a = scheduled_answer(row, policies[i], outcome.prompt_tokens, out.entry_bytes);
    if (metric == longbench::Metric::Perplexity) {
      const double nll = step_mean(row.nll);
      a.score = std::exp(full_nll - nll);
      a.prediction = strfmt("perplexity %.4f, full cache %.4f, over %lld tokens", std::exp(nll),
                            std::exp(full_nll), steps);
    } else {
      a.score = step_mean(std::vector<double>(row.top1.begin(), row.top1.end()));
      a.prediction = strfmt("top-1 agreement %.4f, mean KL %.6f, over %lld steps", a.score,
                            step_mean(row.kl), steps);
    }
    outcome.answers.push_back(std::move(a));
  }
  if (full_cache) outcome.answers.push_back(full_answer());
  return outcome;
}

}  // namespace kvs::search
