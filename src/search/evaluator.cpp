#include "search/evaluator.h"

#include <optional>

#include "core/progress.h"
#include "search/decode_time.h"
#include "search/policy_decode.h"
#include "search/text_evaluation.h"

namespace kvs::search {

PolicyAnswer scheduled_answer(DecodeTimeRow& row, const evict::Policy& policy,
                              int64_t prompt_tokens, int64_t entry_bytes) {
  PolicyAnswer a;
  a.tokens = std::move(row.tokens);
  a.kept_counts = held_counts(row);
  for (const auto& layer : a.kept_counts)
    for (int64_t c : layer) a.cache_bytes += c * entry_bytes;
  a.uniform_bytes = a.cache_bytes;  // the row holds its entries and nothing more
  if (policy.decoding) {            // a prefill-time row (a text dataset's) has no bound
    a.largest_cache = row.largest_cache;
    a.cache_bound = evict::decode_cache_bound(policy, prompt_tokens, int64_t(row.held.size()));
  }
  return a;
}

QuestionOutcome Evaluator::evaluate_question(const QuestionSet& set, size_t question,
                                             const std::vector<evict::Policy>& policies,
                                             const EvaluationOptions& options) const {
  if (longbench::is_text_metric(longbench::dataset_info(set.dataset).metric))
    return evaluate_text_question(model_, set, question, policies, options.full_cache);
  const Question& q = set.questions.at(question);
  const auto& gen = set.generation;
  // The prefill-time policies (and the full cache) on one prefill and their batched decode; the
  // decode-time ones (a decoding schedule) on one shared decode of their own.
  std::vector<size_t> fixed, scheduled;
  for (size_t p = 0; p < policies.size(); ++p)
    (policies[p].decoding ? scheduled : fixed).push_back(p);
  std::vector<PolicyAnswer> answers(policies.size() + (options.full_cache ? 1 : 0));
  QuestionOutcome outcome;
  outcome.question = question;
  outcome.prompt_tokens = static_cast<int64_t>(q.prompt_ids.size());
  // The decode-time policies' shared decode; where prefill-time policies (or the full cache) are
  // answered too, the one prefill of the whole prompt serves both.
  DecodeTimeOptions schedule_options;
  schedule_options.max_new_tokens = gen.max_new_tokens;
  schedule_options.min_new_tokens = gen.min_new_tokens;
  schedule_options.stop_ids.insert(gen.stop_ids.begin(), gen.stop_ids.end());
  std::vector<evict::Policy> schedule_members;
  for (size_t p : scheduled) schedule_members.push_back(policies[p]);
  std::optional<ScheduledDecode> shared;
  std::optional<DecodeTimeResult> schedules;
  if (!fixed.empty() || options.full_cache) {
    if (!scheduled.empty())
      shared.emplace(model_, q.prompt_ids, schedule_members, schedule_options);
    PolicyDecodeOptions decode;
    decode.greedy.max_new_tokens = gen.max_new_tokens;
    decode.greedy.min_new_tokens = gen.min_new_tokens;
    decode.greedy.stop_ids.insert(gen.stop_ids.begin(), gen.stop_ids.end());
    decode.full_cache = options.full_cache;
    decode.question = q.question_span;
    decode.scheduled = shared ? &*shared : nullptr;
    std::vector<evict::Policy> members;
    for (size_t p : fixed) members.push_back(policies[p]);
    PolicyDecodes decodes = decode_with_policies(model_, q.prompt_ids, members, decode);
    outcome.prefills += decodes.prefills;
    outcome.prefill_seconds += decodes.prefill_seconds;
    outcome.decode_seconds += decodes.decode_seconds;
    for (size_t i = 0; i < fixed.size(); ++i) {
      PolicyAnswer& a = answers[fixed[i]];
      a.tokens = std::move(decodes.tokens[i]);
      a.kept_counts = decodes.footprints[i].counts;
      a.cache_bytes = decodes.footprints[i].held_bytes;
      a.uniform_bytes = decodes.footprints[i].uniform_bytes;
    }
    if (options.full_cache) answers.back().tokens = std::move(decodes.tokens.back());
    schedules = std::move(decodes.scheduled);
  } else if (!scheduled.empty()) {
    schedules = decode_with_schedules(model_, q.prompt_ids, schedule_members, schedule_options);
    ++outcome.prefills;
  }
  if (schedules) {
    DecodeTimeResult& decodes = *schedules;
    outcome.prefill_seconds += decodes.prefill_seconds;
    outcome.decode_seconds += decodes.decode_seconds + decodes.compress_seconds;
    for (size_t i = 0; i < scheduled.size(); ++i)
      answers[scheduled[i]] = scheduled_answer(decodes.rows[i], policies[scheduled[i]],
                                               outcome.prompt_tokens, decodes.entry_bytes);
  }
  for (PolicyAnswer& a : answers) {
    a.prediction = tok_.decode(a.tokens, /*skip_special=*/true);
    a.score = longbench::score_example(set.dataset,
                                       longbench::scored_text(a.prediction, options.thinking),
                                       q.answers, q.all_classes, options.variant);
    outcome.answers.push_back(std::move(a));
  }
  return outcome;
}

std::vector<QuestionOutcome> Evaluator::evaluate(const QuestionSet& set,
                                                 const std::vector<evict::Policy>& policies,
                                                 const EvaluationOptions& options) const {
  std::vector<QuestionOutcome> outcomes;
  for (size_t i = 0; i < set.questions.size(); ++i) {
    outcomes.push_back(evaluate_question(set, i, policies, options));
    if (options.on_question) options.on_question(i + 1, set.questions.size());
  }
  return outcomes;
}

int64_t prefills_of(const std::vector<QuestionOutcome>& outcomes) {
  int64_t prefills = 0;
  for (const QuestionOutcome& o : outcomes) prefills += o.prefills;
  return prefills;
}

double policy_score(const std::vector<QuestionOutcome>& outcomes, size_t p) {
  std::vector<double> scores;
  for (const auto& o : outcomes) scores.push_back(o.answers.at(p).score);
  return longbench::dataset_score(scores);
}

std::vector<QuestionOutcome> evaluate_with_progress(
    const Evaluator& evaluator, const QuestionSet& set, const std::vector<evict::Policy>& policies,
    longbench::ScoreVariant variant, longbench::Thinking thinking, const std::string& label,
    const std::string& status) {
  Progress progress(label, static_cast<int64_t>(set.questions.size()), "q");
  progress.set_status(status);
  EvaluationOptions options;
  options.variant = variant;
  options.thinking = thinking;
  options.on_question = [&](size_t, size_t) { progress.advance(); };
  auto outcomes = evaluator.evaluate(set, policies, options);
  progress.finish();
  return outcomes;
}

}  // namespace kvs::search
