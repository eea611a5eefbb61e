#include "search/text_generation.h"

#include <ATen/ATen.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/npy.h"
#include "evict/selection_io.h"
#include "model/transformer.h"
#include "search/decode_time.h"
#include "search/policy_decode.h"
#include "search/questions.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace kvs::search {

TextGenerationResult generate_text(const TextGenerationRequest& request) {
  if (request.policy) request.policy->validate();
  if (request.policy && request.policy->observe != evict::Observe::PromptEnd &&
      request.dataset.empty())
    throw error_at(
        "policy.observe",
        std::string("\"") + evict::observe_name(request.policy->observe) +
            "\" needs the prompt's question span: give a data record (--dataset, --record), "
            "not prompt text or ids");
  if (!request.dump_kept_path.empty() && !request.policy)
    throw Error("--dump-kept needs a policy: the full cache keeps every position");
  const model::Transformer model = model::Transformer::load(request.model_dir, request.load);
  std::unique_ptr<tokenizer::Tokenizer> tok;
  if (std::filesystem::exists(std::filesystem::path(request.model_dir) / "tokenizer.model") ||
      request.prompt_ids.empty() || !request.dataset.empty())
    tok = tokenizer::load_tokenizer(request.model_dir);

  TextGenerationResult result;
  result.device = model.device_label();
  result.dtype = model.dtype_label();
  if (!request.dataset.empty()) {
    const longbench::Config config = longbench::load_config(request.longbench_dir);
    const std::vector<longbench::Record> records =
        longbench::load_dataset(request.longbench_dir, request.dataset);
    const QuestionSet set =
        build_questions(*tok, config, request.dataset, records, {request.record},
                        model_prompt_options(model.config(), 0, "auto", request.model_dir));
    result.prompt_ids = set.questions.front().prompt_ids;
    result.question_span = set.questions.front().question_span;
  } else
    result.prompt_ids =
        request.prompt_ids.empty()
            ? tokenizer::build_prompt_ids(
                  *tok, request.prompt_text,
                  tokenizer::resolve_chat_template(request.chat_template, request.model_dir,
                                                   tokenizer::ChatTemplate::None))
            : request.prompt_ids;
  if (!request.teacher_ids.empty() || (request.policy && request.policy->decoding)) {
    if (!request.dump_logits_path.empty())
      throw Error("--dump-logits: not with a decoding schedule or --teacher-tokens");
    DecodeTimeOptions options;
    options.max_new_tokens = request.max_new_tokens;
    options.teacher = request.teacher_ids;
    for (int64_t id : model.config().eos_token_ids)
      options.stop_ids.insert(static_cast<int32_t>(id));
    if (tok) options.stop_ids.insert(tok->eos_ids().begin(), tok->eos_ids().end());
    options.full_cache = !request.policy;
    options.trace = !request.trace_kept_path.empty();
    std::vector<evict::Policy> policies;
    if (request.policy) policies.push_back(*request.policy);
    const DecodeTimeResult out = decode_with_schedules(model, result.prompt_ids, policies, options);
    const DecodeTimeRow& row = out.rows.front();
    result.decode_time = true;
    result.generated_ids = row.tokens;
    result.largest_cache =
        request.policy ? row.largest_cache : int64_t(result.prompt_ids.size()) + out.steps;
    result.compressions = row.compressions;
    result.nll = row.nll;
    if (tok) result.text = tok->decode(result.generated_ids, /*skip_special=*/true);
    if (!request.dump_kept_path.empty())
      evict::write_kept_layers_json(row.held, request.dump_kept_path);
    if (!request.trace_kept_path.empty()) {
      std::ofstream trace(request.trace_kept_path);
      if (!trace) throw error_at(request.trace_kept_path, "cannot open for writing");
      for (const CompressionRecord& c : row.trace) {
        nlohmann::json line = evict::kept_layers_to_json(c.held);
        line["step"] = c.step;
        line["seen"] = c.seen;
        trace << line.dump() << "\n";
      }
      if (!trace) throw error_at(request.trace_kept_path, "write failed");
    }
    return result;
  }
  if (!request.trace_kept_path.empty())
    throw Error("--trace-kept needs a policy with a decoding schedule");
  const bool dump = !request.dump_logits_path.empty();
  PolicyDecodeOptions options;
  options.greedy.max_new_tokens = request.max_new_tokens;
  for (int64_t id : model.config().eos_token_ids) options.greedy.stop_ids.insert(static_cast<int32_t>(id));
  if (tok) options.greedy.stop_ids.insert(tok->eos_ids().begin(), tok->eos_ids().end());
  options.greedy.collect_logits = dump;
  options.full_cache = !request.policy;
  options.question = result.question_span;
  std::vector<evict::Policy> policies;
  if (request.policy) policies.push_back(*request.policy);
  PolicyDecodes out = decode_with_policies(model, result.prompt_ids, policies, options);
  result.generated_ids = out.tokens.front();
  if (request.policy) {
    result.kept_entries = out.footprints.front().kept_entries;
    result.cache_bytes = out.footprints.front().held_bytes;
    result.uniform_cache_bytes = out.footprints.front().uniform_bytes;
  }
  if (tok) result.text = tok->decode(result.generated_ids, /*skip_special=*/true);

  if (dump) {
    // Row i holds the logits predicting token i + 1 of prompt + generated: the prompt rows, then
    // one row per generated token after the first (the first step's row is the last prompt row).
    const int64_t n = out.prompt_logits.size(0), steps = out.step_logits.size(0);
    at::Tensor rows = at::cat({out.prompt_logits.to(at::kCPU),
                               out.step_logits.narrow(0, 1, steps - 1).select(1, 0)})
                          .contiguous();
    std::vector<float> data(rows.data_ptr<float>(), rows.data_ptr<float>() + rows.numel());
    write_npy_f32(request.dump_logits_path, {n + steps - 1, rows.size(1)}, data);
  }
  if (!request.dump_kept_path.empty()) {
    evict::write_kept_layers_json(out.kept_positions.front(), request.dump_kept_path);
  }
  return result;
}

}  // namespace kvs::search
