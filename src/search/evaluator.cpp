#include "search/evaluator.h"

#include "core/progress.h"

#include <map>
#include <memory>

#include "core/error.h"
#include "core/timer.h"
#include "evict/compressed_cache.h"
#include "model/generate.h"

namespace kvs::search {

namespace {

// Policies that can share one decode batch: same granularity (cache heads) and window.
struct PolicyGroup {
  std::vector<size_t> members;  // indices into the caller's policy list
  std::unique_ptr<evict::CompressingObserver> observer;
};

// Forwards each layer to every group's observer, each with the window rows it asked for.
class FanOutObserver final : public model::PrefillObserver {
 public:
  explicit FanOutObserver(std::vector<PolicyGroup>& groups) : groups_(groups) {
    for (const auto& g : groups_) window_ = std::max(window_, g.observer->window());
  }
  int64_t window() const override { return window_; }
  void on_layer(const model::PrefillLayer& layer) override {
    const int64_t available = layer.window_queries.size(1);
    for (auto& g : groups_) {
      const int64_t w = std::min(g.observer->window(), available);
      const at::Tensor rows = layer.window_queries.narrow(1, available - w, w);
      g.observer->on_layer(model::PrefillLayer{layer.layer, layer.keys, layer.values, rows});
    }
  }

 private:
  std::vector<PolicyGroup>& groups_;
  int64_t window_ = 0;
};

std::vector<PolicyGroup> group_policies(const std::vector<evict::Policy>& policies,
                                        int64_t num_layers, int64_t decode_capacity) {
  std::map<std::pair<int, int64_t>, std::vector<size_t>> by_layout;
  for (size_t i = 0; i < policies.size(); ++i)
    by_layout[{static_cast<int>(policies[i].granularity), policies[i].budget.window}].push_back(i);
  std::vector<PolicyGroup> groups;
  for (auto& [layout, members] : by_layout) {
    std::vector<evict::Policy> batch;
    for (size_t i : members) batch.push_back(policies[i]);
    groups.push_back(PolicyGroup{
        members, std::make_unique<evict::CompressingObserver>(batch, num_layers, decode_capacity)});
  }
  return groups;
}

}  // namespace

QuestionOutcome Evaluator::evaluate_question(const QuestionSet& set, size_t question,
                                             const std::vector<evict::Policy>& policies,
                                             const EvaluationOptions& options) const {
  const Question& q = set.questions.at(question);
  const auto& gen = set.generation;
  QuestionOutcome outcome;
  outcome.question = question;
  outcome.prompt_tokens = static_cast<int64_t>(q.prompt_ids.size());
  outcome.answers.resize(policies.size() + (options.full_cache ? 1 : 0));

  std::vector<PolicyGroup> groups =
      group_policies(policies, model_.config().num_hidden_layers, gen.max_new_tokens);
  FanOutObserver fan_out(groups);
  model::PrefillOptions prefill;
  prefill.observer = groups.empty() ? nullptr : &fan_out;
  prefill.keep_cache = options.full_cache;
  prefill.decode_capacity = gen.max_new_tokens;
  Timer timer;
  model::PrefillResult pre = model_.prefill(q.prompt_ids, prefill);
  outcome.prefill_seconds = timer.seconds();

  model::GreedyOptions greedy;
  greedy.max_new_tokens = gen.max_new_tokens;
  greedy.min_new_tokens = gen.min_new_tokens;
  greedy.stop_ids.insert(gen.stop_ids.begin(), gen.stop_ids.end());
  auto finish = [&](size_t slot, std::vector<int32_t> tokens) {
    PolicyAnswer& a = outcome.answers[slot];
    a.tokens = std::move(tokens);
    a.prediction = tok_.decode(a.tokens, /*skip_special=*/true);
    a.score = longbench::score_example(set.dataset, a.prediction, q.answers, q.all_classes,
                                       options.variant);
  };
  timer.reset();
  for (auto& g : groups) {
    model::DecodeCache cache = g.observer->take_cache();
    const at::Tensor first = pre.logits.expand({cache.batch, pre.logits.size(1)});
    model::GreedyResult out = model::greedy_decode(model_, cache, first, greedy);
    for (size_t r = 0; r < g.members.size(); ++r) finish(g.members[r], std::move(out.tokens[r]));
  }
  if (options.full_cache) {
    model::GreedyResult out = model::greedy_decode(model_, pre.cache, pre.logits, greedy);
    finish(policies.size(), std::move(out.tokens[0]));
  }
  outcome.decode_seconds = timer.seconds();
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

double policy_score(const std::vector<QuestionOutcome>& outcomes, size_t p) {
  std::vector<double> scores;
  for (const auto& o : outcomes) scores.push_back(o.answers.at(p).score);
  return longbench::dataset_score(scores);
}

std::vector<QuestionOutcome> evaluate_with_progress(const Evaluator& evaluator, const QuestionSet& set,
                                                    const std::vector<evict::Policy>& policies,
                                                    longbench::ScoreVariant variant,
                                                    const std::string& label, const std::string& status) {
  Progress progress(label, static_cast<int64_t>(set.questions.size()), "q");
  progress.set_status(status);
  EvaluationOptions options;
  options.variant = variant;
  options.on_question = [&](size_t, size_t) { progress.advance(); };
  auto outcomes = evaluator.evaluate(set, policies, options);
  progress.finish();
  return outcomes;
}

}  // namespace kvs::search
