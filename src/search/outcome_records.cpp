#include "search/outcome_records.h"

#include "longbench/scorer.h"

namespace kvs::search {

std::vector<store::PredictionRecord> prediction_records(const QuestionSet& set,
                                                        const std::vector<QuestionOutcome>& outcomes,
                                                        size_t policy, bool official) {
  std::vector<store::PredictionRecord> out;
  for (const auto& o : outcomes) {
    const Question& q = set.questions[o.question];
    const PolicyAnswer& a = o.answers[policy];
    store::PredictionRecord r;
    r.question_index = static_cast<int64_t>(q.record_index);
    r.question_id = q.id;
    r.prediction = a.prediction;
    r.score = official ? longbench::score_example(set.dataset, a.prediction, q.answers, q.all_classes,
                                                  longbench::ScoreVariant::Raw)
                       : a.score;
    if (official) r.official_score = a.score;
    r.prompt_tokens = o.prompt_tokens;
    r.generated_tokens = static_cast<int64_t>(a.tokens.size());
    r.seconds = o.prefill_seconds + o.decode_seconds;
    out.push_back(std::move(r));
  }
  return out;
}

store::StateRecord state_record(const evict::Policy& policy, int64_t num_layers, const QuestionSet& dev,
                                const std::vector<QuestionOutcome>& outcomes, size_t p, double seconds) {
  store::StateRecord r;
  r.lambda1 = policy.lambda1.lambdas(num_layers);
  r.lambda2 = policy.lambda2.lambdas(num_layers);
  r.policy_json = evict::policy_to_string(policy);
  r.dev_score = policy_score(outcomes, p);
  r.seconds = seconds;
  r.predictions = prediction_records(dev, outcomes, p, false);
  return r;
}

store::ReplayRecord replay_record(const QuestionSet& test, const std::vector<QuestionOutcome>& outcomes,
                                  size_t policy, double seconds) {
  store::ReplayRecord replay;
  replay.official_score = policy_score(outcomes, policy);
  replay.predictions = prediction_records(test, outcomes, policy, true);
  std::vector<double> raw;
  for (const auto& p : replay.predictions) raw.push_back(p.score);
  replay.score = longbench::dataset_score(raw);
  replay.seconds = seconds;
  return replay;
}

}  // namespace kvs::search
