#include "bench/decode_bench.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/files.h"
#include "core/strfmt.h"
#include "evict/decoding.h"
#include "evict/method.h"
#include "evict/policy.h"
#include "model/transformer.h"
#include "search/decode_time.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace kvs::bench {

namespace {

// Every registered method at its defaults (kv_head granularity where it has one), with the
// schedule; those that cannot decode are named with the reason.
std::vector<evict::Policy> every_method(const DecodeBenchOptions& o,
                                        std::vector<std::string>& left_out) {
  std::vector<evict::Policy> out;
  for (const evict::Method* m : evict::registered_methods()) {
    nlohmann::json policy = evict::default_policy_json(m->info(), o.target);
    policy.erase("budget");
    for (const evict::ParamSpec& p : m->info().params)
      if (p.name == "granularity") policy["granularity"] = "kv_head";
    policy["decoding"] = {{"interval", o.interval}, {"target", o.target}, {"buffer", o.buffer}};
    try {
      out.push_back(evict::policy_from_json(policy, m->info().name));
    } catch (const Error& e) {
      left_out.push_back(e.what());
    }
  }
  return out;
}

DecodeBenchRun run(const model::Transformer& model, const std::vector<int32_t>& prompt,
                   const std::vector<int32_t>& teacher, const std::vector<evict::Policy>& policies,
                   const std::string& label, search::DecodeTimeResult* keep = nullptr) {
  search::DecodeTimeOptions options;
  options.teacher = teacher;
  options.full_cache = policies.empty();
  search::DecodeTimeResult r = search::decode_with_schedules(model, prompt, policies, options);
  DecodeBenchRun out;
  out.label = label;
  out.rows = static_cast<int64_t>(r.rows.size());
  out.prefill_seconds = r.prefill_seconds;
  out.decode_seconds = r.decode_seconds;
  out.compress_seconds = r.compress_seconds;
  out.step_ms =
      1000.0 * (r.decode_seconds + r.compress_seconds) / double(std::max<int64_t>(r.steps, 1));
  out.cache_bytes = policies.empty() ? r.full_cache_bytes : r.peak_cache_bytes;
  if (keep) *keep = std::move(r);
  return out;
}

}  // namespace

DecodeBenchResult bench_decode(const DecodeBenchOptions& o) {
  if (o.prompt_tokens < 1 || o.new_tokens < 1)
    throw Error("bench decode: --prompt-tokens and --new-tokens must be >= 1");
  std::vector<std::string> left_out;
  std::vector<evict::Policy> policies;
  for (const std::string& file : o.policy_files) policies.push_back(evict::load_policy(file));
  if (o.policy_files.empty()) policies = every_method(o, left_out);
  if (policies.empty()) throw Error("bench decode: no policy can decode");
  for (const evict::Policy& p : policies)
    if (!p.decoding) throw error_at(p.name, "bench decode: the policy has no decoding schedule");

  const model::Transformer model = model::Transformer::load(o.model_dir, o.load);
  const auto tok = tokenizer::load_tokenizer(o.model_dir);
  const std::string text = read_file(o.text_path, "the text");
  const std::vector<int32_t> ids =
      tokenizer::build_prompt_ids(*tok, text, tokenizer::ChatTemplate::None);
  if (int64_t(ids.size()) < o.prompt_tokens + o.new_tokens)
    throw error_at(o.text_path, strfmt("has %zu tokens, fewer than --prompt-tokens + --new-tokens "
                                       "= %lld",
                                       ids.size(), (long long)(o.prompt_tokens + o.new_tokens)));
  const std::vector<int32_t> prompt(ids.begin(), ids.begin() + o.prompt_tokens);
  const std::vector<int32_t> teacher(ids.begin() + o.prompt_tokens,
                                     ids.begin() + o.prompt_tokens + o.new_tokens);

  DecodeBenchResult r;
  r.prompt_tokens = o.prompt_tokens;
  r.steps = o.new_tokens;
  r.left_out = left_out;
  for (const evict::Policy& p : policies) r.names.push_back(p.name);
  search::DecodeTimeResult shared;
  r.shared =
      run(model, prompt, teacher, policies, strfmt("shared (K = %zu)", policies.size()), &shared);
  r.alone = run(model, prompt, teacher, {policies.front()}, "alone: " + policies.front().name);
  r.full = run(model, prompt, teacher, {}, "full cache");
  r.shared_over_alone = r.shared.step_ms / std::max(r.alone.step_ms, 1e-9);
  r.shared_over_separate = r.shared_over_alone / double(policies.size());
  for (size_t i = 0; i < policies.size(); ++i) {
    r.largest.push_back(shared.rows[i].largest_cache);
    const evict::Policy& p = policies[i];
    r.bound.push_back(
        evict::decode_cache_bound(p, o.prompt_tokens, int64_t(shared.rows[i].held.size())));
  }
  return r;
}

std::string decode_bench_json(const DecodeBenchResult& r) {
  auto run_json = [](const DecodeBenchRun& x) {
    return nlohmann::json{{"label", x.label},
                          {"rows", x.rows},
                          {"prefill_seconds", x.prefill_seconds},
                          {"decode_seconds", x.decode_seconds},
                          {"compress_seconds", x.compress_seconds},
                          {"step_ms", x.step_ms},
                          {"cache_bytes", x.cache_bytes}};
  };
  return nlohmann::json{{"prompt_tokens", r.prompt_tokens},
                        {"steps", r.steps},
                        {"policies", r.names},
                        {"left_out", r.left_out},
                        {"largest_cache", r.largest},
                        {"bound", r.bound},
                        {"shared", run_json(r.shared)},
                        {"alone", run_json(r.alone)},
                        {"full_cache", run_json(r.full)},
                        {"shared_over_alone", r.shared_over_alone},
                        {"shared_over_separate", r.shared_over_separate}}
      .dump();
}

std::string decode_bench_table(const DecodeBenchResult& r) {
  std::string out = strfmt(
      "bench decode: %lld prompt tokens, %lld teacher-forced steps, %zu "
      "policies\n",
      (long long)r.prompt_tokens, (long long)r.steps, r.names.size());
  out += strfmt("%-28s %5s %10s %10s %10s %9s %10s %10s\n", "run", "rows", "prefill s", "decode s",
                "compress s", "share", "ms/step", "cache MiB");
  for (const DecodeBenchRun* x : {&r.shared, &r.alone, &r.full}) {
    const double steps_s = x->decode_seconds + x->compress_seconds;
    out += strfmt("%-28s %5lld %10.2f %10.2f %10.2f %8.1f%% %10.2f %10.2f\n", x->label.c_str(),
                  (long long)x->rows, x->prefill_seconds, x->decode_seconds, x->compress_seconds,
                  steps_s > 0 ? 100.0 * x->compress_seconds / steps_s : 0.0, x->step_ms,
                  double(x->cache_bytes) / (1 << 20));
  }
  out += strfmt(
      "shared step / one policy's step: %.2fx (goal: at most 2x at K = 15); / K separate "
      "decodes (K x one policy's step): %.2fx\n",
      r.shared_over_alone, r.shared_over_separate);
  out += "largest cache per head (bound):";
  for (size_t i = 0; i < r.names.size(); ++i)
    out += strfmt(" %s %lld (%lld)", r.names[i].c_str(), (long long)r.largest[i],
                  (long long)r.bound[i]);
  out += "\n";
  for (const std::string& why : r.left_out) out += "left out: " + why + "\n";
  return out;
}

}  // namespace kvs::bench
