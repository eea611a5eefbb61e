#include "bench/search_bench.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"
#include "core/strfmt.h"
#include "core/timer.h"
#include "evict/method.h"
#include "evict/policy.h"
#include "longbench/config.h"
#include "longbench/dataset.h"
#include "longbench/split.h"
#include "model/transformer.h"
#include "search/evaluator.h"
#include "tokenizer/tokenizer.h"

namespace kvs::bench {

// The search benchmark speaks the search module's vocabulary (questions, the evaluator).
using namespace search;

SearchBenchResult bench_search(const SearchBenchOptions& o) {
  if (o.policies < 1 || o.questions < 1)
    throw Error("bench search: --policies and --questions must be positive");
  const auto tok = tokenizer::load_tokenizer(o.model_dir);
  const model::Transformer model = model::Transformer::load(o.model_dir, o.load);
  const auto config = longbench::load_config(o.longbench_dir);
  const auto records = longbench::load_dataset(o.longbench_dir, o.dataset);
  std::vector<size_t> indices;
  for (size_t i = 0; i < records.size() && static_cast<int64_t>(indices.size()) < o.questions; ++i)
    indices.push_back(i);
  longbench::PromptOptions prompt;
  prompt.max_length = model.config().max_position_embeddings;
  QuestionSet set = build_questions(*tok, config, o.dataset, records, indices, prompt);
  if (o.max_new_tokens > 0) {
    set.generation.max_new_tokens = static_cast<int>(o.max_new_tokens);
    set.generation.stop_ids.clear();  // a fixed decode length for a fair comparison
  }

  // Every registered method at its defaults, or Global policies spread over lambda2 (and
  // lambda1), as a search's batch would be.
  std::vector<evict::Policy> policies;
  if (o.methods) {
    for (const evict::Method* m : evict::registered_methods()) {
      policies.push_back(
          evict::policy_from_json(evict::default_policy_json(m->info(), o.budget), m->info().name));
    }
  } else {
    for (int k = 0; k < o.policies; ++k) {
      const double lambda2 = -0.45 + 0.9 * k / std::max(1, o.policies - 1);
      const double lambda1 = (k % 3 - 1) * 0.3;
      policies.push_back(evict::global_policy(o.budget, lambda1, lambda2));
    }
  }
  const Evaluator evaluator(model, *tok);
  EvaluationOptions options;
  evaluator.evaluate_question(set, 0, {policies[0]}, options);  // warm-up

  SearchBenchResult r;
  r.policies = static_cast<int>(policies.size());
  for (const auto& p : policies) r.names.push_back(p.name);
  r.questions = static_cast<int64_t>(set.questions.size());
  for (const auto& q : set.questions)
    r.mean_prompt_tokens += static_cast<int64_t>(q.prompt_ids.size());
  r.mean_prompt_tokens /= std::max<int64_t>(1, r.questions);
  r.new_tokens = set.generation.max_new_tokens;

  Timer timer;
  std::vector<std::vector<QuestionOutcome>> alone;
  for (const auto& p : policies) {
    Timer one;
    alone.push_back(evaluator.evaluate(set, {p}, options));
    if (p.method_name() == "snapkv") {
      r.snapkv_seconds = one.seconds();
      for (const QuestionOutcome& o : alone.back()) {
        r.snapkv_prefill_seconds += o.prefill_seconds;
        r.snapkv_decode_seconds += o.decode_seconds;
      }
    }
  }
  r.sequential_seconds = timer.seconds();
  timer.reset();
  const auto batched = evaluator.evaluate(set, policies, options);
  r.batched_seconds = timer.seconds();
  for (const QuestionOutcome& o : batched) {
    r.batched_prefill_seconds += o.prefill_seconds;
    r.batched_decode_seconds += o.decode_seconds;
  }
  r.batched_speedup = r.sequential_seconds / r.batched_seconds;
  if (r.snapkv_seconds > 0) r.batched_over_snapkv = r.batched_seconds / r.snapkv_seconds;
  for (size_t p = 0; p < policies.size(); ++p)
    for (size_t q = 0; q < batched.size(); ++q)
      if (alone[p][q].answers[0].tokens != batched[q].answers[p].tokens) ++r.disagreements;
  r.predictions_agree = r.disagreements == 0;
  for (size_t p = 0; p < policies.size(); ++p) {
    double kept = 0, cells = 0, held = 0, uniform = 0;
    for (const QuestionOutcome& o : batched) {
      const PolicyAnswer& a = o.answers[p];
      for (const auto& layer : a.kept_counts) {
        for (int64_t c : layer) kept += double(c);
        cells += double(layer.size());
      }
      held += double(a.cache_bytes);
      uniform += double(a.uniform_bytes);
    }
    const double n = double(std::max<size_t>(batched.size(), 1));
    r.kept_per_head.push_back(cells > 0 ? kept / cells : 0);
    r.held_bytes.push_back(held / n);
    r.uniform_bytes.push_back(uniform / n);
  }
  return r;
}

std::string search_bench_json(const SearchBenchResult& r) {
  nlohmann::ordered_json j;
  j["policies"] = r.policies;
  j["questions"] = r.questions;
  j["mean_prompt_tokens"] = r.mean_prompt_tokens;
  j["new_tokens"] = r.new_tokens;
  j["sequential_seconds"] = r.sequential_seconds;
  j["batched_seconds"] = r.batched_seconds;
  j["batched_speedup"] = r.batched_speedup;
  j["predictions_agree"] = r.predictions_agree;
  j["disagreements"] = r.disagreements;
  j["policy_names"] = r.names;
  j["kept_per_head"] = r.kept_per_head;
  j["held_bytes"] = r.held_bytes;
  j["uniform_bytes"] = r.uniform_bytes;
  j["batched_prefill_seconds"] = r.batched_prefill_seconds;
  j["batched_decode_seconds"] = r.batched_decode_seconds;
  if (r.snapkv_seconds > 0) {
    j["snapkv_seconds"] = r.snapkv_seconds;
    j["batched_over_snapkv"] = r.batched_over_snapkv;
    j["snapkv_prefill_seconds"] = r.snapkv_prefill_seconds;
    j["snapkv_decode_seconds"] = r.snapkv_decode_seconds;
  }
  return j.dump(2);
}

std::string search_bench_table(const SearchBenchResult& r) {
  std::ostringstream out;
  out << strfmt("%d policies x %lld questions (mean %lld prompt tokens, %lld new tokens)\n",
                r.policies, static_cast<long long>(r.questions),
                static_cast<long long>(r.mean_prompt_tokens), static_cast<long long>(r.new_tokens));
  out << strfmt("one at a time (a prefill each): %8.2f s\n", r.sequential_seconds);
  out << strfmt("batched on a shared prefill:    %8.2f s   speedup %.2fx\n", r.batched_seconds,
                r.batched_speedup);
  if (r.snapkv_seconds > 0) {
    out << strfmt(
        "snapkv alone:                   %8.2f s   the batch costs %.2fx a SnapKV-only "
        "question (goal <= 1.5)\n",
        r.snapkv_seconds, r.batched_over_snapkv);
    out << strfmt(
        "  of which prefill (selections included) %.2f s batched vs %.2f s snapkv, decode %.2f s "
        "vs %.2f s\n",
        r.batched_prefill_seconds, r.snapkv_prefill_seconds, r.batched_decode_seconds,
        r.snapkv_decode_seconds);
  }
  out << strfmt("predictions agree: %s (%lld differing outputs)\n",
                r.predictions_agree ? "yes" : "NO", static_cast<long long>(r.disagreements));
  // Where each policy's cache went: ragged heads are padded to their layer's longest head.
  out << strfmt("%-24s %14s %12s %12s %8s\n", "policy", "kept/head/lyr", "held MiB", "uniform MiB",
                "ratio");
  constexpr double kMiB = 1024.0 * 1024.0;
  for (size_t p = 0; p < r.names.size() && p < r.held_bytes.size(); ++p) {
    out << strfmt("%-24s %14.1f %12.3f %12.3f %8.3f\n", r.names[p].c_str(), r.kept_per_head[p],
                  r.held_bytes[p] / kMiB, r.uniform_bytes[p] / kMiB,
                  r.uniform_bytes[p] > 0 ? r.held_bytes[p] / r.uniform_bytes[p] : 0.0);
  }
  return out.str();
}

}  // namespace kvs::bench
