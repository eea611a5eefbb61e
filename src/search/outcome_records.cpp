#include "search/outcome_records.h"

#include "core/build_info.h"
#include "evict/window_params.h"
#include "longbench/scorer.h"
#include "search/run.h"

namespace kvs::search {

std::vector<store::PredictionRecord> prediction_records(const QuestionSet& set,
                                                        const std::vector<QuestionOutcome>& outcomes,
                                                        size_t policy, bool official) {
  std::vector<store::PredictionRecord> out;
  // A text dataset's score is measured, not scored from a prediction: one variant.
  const bool measured = longbench::is_text_metric(longbench::dataset_info(set.dataset).metric);
  for (const auto& o : outcomes) {
    const Question& q = set.questions[o.question];
    const PolicyAnswer& a = o.answers[policy];
    store::PredictionRecord r;
    r.question_index = static_cast<int64_t>(q.record_index);
    r.question_id = q.id;
    r.prediction = a.prediction;
    r.score = official && !measured
                  ? longbench::score_example(set.dataset, a.prediction, q.answers, q.all_classes,
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

std::optional<store::CacheLayout> cache_layout(const std::vector<QuestionOutcome>& outcomes,
                                               size_t policy) {
  store::CacheLayout c;
  for (const auto& o : outcomes) {
    const PolicyAnswer& a = o.answers[policy];
    if (a.kept_counts.empty()) return std::nullopt;  // not recorded (the full cache)
    if (c.counts.empty()) {
      for (const auto& layer : a.kept_counts) c.counts.emplace_back(layer.size(), 0.0);
    }
    if (a.kept_counts.size() != c.counts.size()) return std::nullopt;  // not one layout
    for (size_t l = 0; l < c.counts.size(); ++l) {
      if (a.kept_counts[l].size() != c.counts[l].size()) return std::nullopt;
      for (size_t h = 0; h < c.counts[l].size(); ++h) {
        c.counts[l][h] += double(a.kept_counts[l][h]);
        c.kept_entries += double(a.kept_counts[l][h]);
      }
    }
    c.held_bytes += double(a.cache_bytes);
    c.uniform_bytes += double(a.uniform_bytes);
    if (a.cache_bound > 0) {  // a decode-time policy's
      c.largest_entries = c.largest_entries.value_or(0) + double(a.largest_cache);
      c.bound_entries = c.bound_entries.value_or(0) + double(a.cache_bound);
    }
    ++c.questions;
  }
  if (c.questions == 0) return std::nullopt;
  const double n = double(c.questions);
  for (auto& layer : c.counts)
    for (double& x : layer) x /= n;
  c.kept_entries /= n;
  c.held_bytes /= n;
  c.uniform_bytes /= n;
  if (c.largest_entries) *c.largest_entries /= n;
  if (c.bound_entries) *c.bound_entries /= n;
  return c;
}

store::StateRecord state_record(const evict::Policy& policy, int64_t num_layers, const QuestionSet& dev,
                                const std::vector<QuestionOutcome>& outcomes, size_t p, double seconds) {
  store::StateRecord r;
  r.git_commit = build_info::git_commit();  // this split's binary (a resumed run's may differ)
  // A policy under an allocation (adakv over a diverse base) runs its base's profiles.
  const evict::Policy& shape = profile_policy(policy);
  r.lambda1 =
      evict::profile_or_zero(shape.params, evict::window_params().lambda1).lambdas(num_layers);
  r.lambda2 =
      evict::profile_or_zero(shape.params, evict::window_params().lambda2).lambdas(num_layers);
  r.policy_json = evict::policy_to_string(policy);
  r.dev_score = policy_score(outcomes, p);
  r.seconds = seconds;
  r.predictions = prediction_records(dev, outcomes, p, false);
  r.cache = cache_layout(outcomes, p);
  return r;
}

store::ReplayRecord replay_record(const QuestionSet& test, const std::vector<QuestionOutcome>& outcomes,
                                  size_t policy, double seconds) {
  store::ReplayRecord replay;
  replay.git_commit = build_info::git_commit();
  replay.official_score = policy_score(outcomes, policy);
  replay.predictions = prediction_records(test, outcomes, policy, true);
  std::vector<double> raw;
  for (const auto& p : replay.predictions) raw.push_back(p.score);
  replay.score = longbench::dataset_score(raw);
  replay.seconds = seconds;
  replay.cache = cache_layout(outcomes, policy);
  return replay;
}

}  // namespace kvs::search
