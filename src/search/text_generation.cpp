#include "search/text_generation.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/npy.h"
#include "core/strfmt.h"
#include "evict/selection_io.h"
#include "model/transformer.h"
#include "search/decode_time.h"
#include "search/policy_decode.h"
#include "search/questions.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace kvs::search {

namespace {

void write_trace(const std::vector<CompressionRecord>& trace, const std::string& path) {
  std::ofstream out(path);
  if (!out) throw error_at(path, "cannot open for writing");
  for (const CompressionRecord& c : trace) {
    nlohmann::json line = evict::kept_layers_to_json(c.held);
    line["step"] = c.step;
    line["seen"] = c.seen;
    out << line.dump() << "\n";
  }
  if (!out) throw error_at(path, "write failed");
}

// Row i holds the logits predicting token i + 1 of prompt + generated: the prompt's rows, then
// one row per generated token after the first (the first step's row is the last prompt row).
void write_logits(const at::Tensor& prompt_logits, const at::Tensor& step_logits,
                  const std::string& path) {
  const int64_t n = prompt_logits.size(0), steps = step_logits.size(0);
  const at::Tensor rows =
      at::cat({prompt_logits.to(at::kCPU), step_logits.narrow(0, 1, steps - 1).to(at::kCPU)})
          .contiguous();
  std::vector<float> data(rows.data_ptr<float>(), rows.data_ptr<float>() + rows.numel());
  write_npy_f32(path, {n + steps - 1, rows.size(1)}, data);
}

// Through the decode-time path: a teacher, or a decoding schedule on any policy.
bool decode_time(const TextGenerationRequest& request) {
  bool any = !request.teacher_ids.empty();
  for (const evict::Policy& p : request.policies) any = any || p.decoding;
  return any;
}

// The request's checks, before the model loads.
void check_request(const TextGenerationRequest& request) {
  for (const evict::Policy& p : request.policies) {
    p.validate();
    if (p.observe != evict::Observe::PromptEnd && request.dataset.empty())
      throw error_at(
          "policy.observe",
          std::string("\"") + evict::observe_name(p.observe) +
              "\" needs the prompt's question span: give a data record (--dataset, --record), "
              "not prompt text or ids");
  }
  const size_t rows = request.policies.size() + (request.full_cache || request.policies.empty());
  if (!request.outputs.empty() && request.outputs.size() != rows)
    throw Error(strfmt("generate: %zu output sets for %zu rows", request.outputs.size(), rows));
  const bool scheduled = decode_time(request);
  for (const GenerationOutputs& o : request.outputs) {
    if (!o.kept.empty() && request.policies.empty())
      throw Error("--dump-kept needs a policy: the full cache keeps every position");
    if (!o.logits.empty() && scheduled)
      throw Error("--dump-logits: not with a decoding schedule or --teacher-tokens");
    if (!o.trace.empty() && !scheduled)
      throw Error("--trace-kept needs a policy with a decoding schedule");
  }
}

// The directories of every file the rows write.
void create_output_directories(const std::vector<GenerationOutputs>& outputs) {
  for (const GenerationOutputs& o : outputs)
    for (const std::string& path : {o.logits, o.kept, o.trace}) {
      const std::filesystem::path parent = std::filesystem::path(path).parent_path();
      std::error_code ec;
      if (!path.empty() && !parent.empty()) std::filesystem::create_directories(parent, ec);
      if (ec) throw error_at(parent.string(), "cannot create the directory: " + ec.message());
    }
}

}  // namespace

std::vector<GenerationOutputs> per_row_outputs(const GenerationOutputs& given,
                                               const std::vector<std::string>& names) {
  if (given.logits.empty() && given.kept.empty() && given.trace.empty()) return {};
  auto is_dir = [](const std::string& p) { return !p.empty() && std::filesystem::is_directory(p); };
  if (names.size() == 1 && !is_dir(given.logits) && !is_dir(given.kept) && !is_dir(given.trace))
    return {given};
  std::vector<GenerationOutputs> out;
  for (size_t r = 0; r < names.size(); ++r) {
    for (size_t q = 0; q < r; ++q)
      if (names[q] == names[r])
        throw error_at("--policy", "two policy files named \"" + names[r] +
                                       "\": their dumps would share a file name; rename one");
    auto in = [&](const std::string& dir, const char* suffix) {
      return dir.empty() ? std::string()
                         : (std::filesystem::path(dir) / (names[r] + suffix)).string();
    };
    out.push_back(
        {in(given.logits, ".npy"), in(given.kept, ".kept.json"), in(given.trace, ".trace.jsonl")});
  }
  return out;
}

TextGenerationResult generate_text(const TextGenerationRequest& request) {
  check_request(request);
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
  const std::vector<evict::Policy>& policies = request.policies;
  const bool full_cache = policies.empty() || request.full_cache;
  const size_t rows = policies.size() + (full_cache ? 1 : 0);
  result.rows.resize(rows);
  auto output = [&](size_t r) {
    return request.outputs.empty() ? GenerationOutputs{} : request.outputs[r];
  };
  result.decode_time = decode_time(request);
  if (result.decode_time) {
    DecodeTimeOptions options;
    options.max_new_tokens = request.max_new_tokens;
    options.teacher = request.teacher_ids;
    for (int64_t id : model.config().eos_token_ids)
      options.stop_ids.insert(static_cast<int32_t>(id));
    if (tok) options.stop_ids.insert(tok->eos_ids().begin(), tok->eos_ids().end());
    options.full_cache = full_cache;
    for (size_t r = 0; r < rows; ++r) options.trace = options.trace || !output(r).trace.empty();
    const DecodeTimeResult out = decode_with_schedules(model, result.prompt_ids, policies, options);
    create_output_directories(request.outputs);
    for (size_t r = 0; r < rows; ++r) {
      const DecodeTimeRow& row = out.rows[r];
      TextGenerationRow& mine = result.rows[r];
      mine.generated_ids = row.tokens;
      mine.largest_cache =
          r == policies.size() ? int64_t(result.prompt_ids.size()) + out.steps : row.largest_cache;
      mine.compressions = row.compressions;
      mine.nll = row.nll;
      if (tok) mine.text = tok->decode(mine.generated_ids, /*skip_special=*/true);
      if (r == policies.size()) continue;  // the full cache keeps every position
      if (!output(r).kept.empty()) evict::write_kept_layers_json(row.held, output(r).kept);
      if (!output(r).trace.empty()) write_trace(row.trace, output(r).trace);
    }
    return result;
  }
  PolicyDecodeOptions options;
  options.greedy.max_new_tokens = request.max_new_tokens;
  for (int64_t id : model.config().eos_token_ids) options.greedy.stop_ids.insert(static_cast<int32_t>(id));
  if (tok) options.greedy.stop_ids.insert(tok->eos_ids().begin(), tok->eos_ids().end());
  for (size_t r = 0; r < rows; ++r)
    options.greedy.collect_logits = options.greedy.collect_logits || !output(r).logits.empty();
  options.full_cache = full_cache;
  options.question = result.question_span;
  const PolicyDecodes out = decode_with_policies(model, result.prompt_ids, policies, options);
  create_output_directories(request.outputs);
  for (size_t r = 0; r < rows; ++r) {
    TextGenerationRow& mine = result.rows[r];
    mine.generated_ids = out.tokens[r];
    if (r < policies.size()) {
      mine.kept_entries = out.footprints[r].kept_entries;
      mine.cache_bytes = out.footprints[r].held_bytes;
      mine.uniform_cache_bytes = out.footprints[r].uniform_bytes;
    }
    if (tok) mine.text = tok->decode(mine.generated_ids, /*skip_special=*/true);
    if (!output(r).logits.empty())
      write_logits(out.prompt_logits[r], out.step_logits[r], output(r).logits);
    if (!output(r).kept.empty() && r < policies.size())  // the full cache keeps every position
      evict::write_kept_layers_json(out.kept_positions[r], output(r).kept);
  }
  return result;
}

}  // namespace kvs::search
