#include "ruler/writer.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>

#include "core/build_info.h"
#include "core/error.h"
#include "core/file_hash.h"
#include "core/files.h"
#include "core/log.h"
#include "longbench/prompt.h"
#include "ruler/generators.h"
#include "ruler/haystack.h"
#include "ruler/length_fit.h"
#include "ruler/qa_corpus.h"
#include "ruler/word_list.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace kvs::ruler {

namespace fs = std::filesystem;

namespace {

constexpr double kMinFill = 0.9;  // every prompt uses at least this share of its target

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Each sample's own stream: adding a task, a length or a sample never changes another one.
uint64_t sample_seed(uint64_t seed, size_t task_index, int64_t length, int64_t index) {
  uint64_t h = splitmix64(seed);
  for (uint64_t part : {static_cast<uint64_t>(task_index), static_cast<uint64_t>(length),
                        static_cast<uint64_t>(index)})
    h = splitmix64(h ^ part);
  return h;
}

size_t task_index(const TaskSpec& task) {
  const auto& all = ruler_tasks();
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].name == task.name) return i;
  return all.size();
}

// A tokenizer file alone (a fixture, tokenizer.model) is used as it is; anything else is a --model
// argument (core/checkpoint.h).
bool is_plain_tokenizer_file(const std::string& model) {
  return fs::is_regular_file(model) && fs::path(model).extension() != ".gguf";
}

// auto: the template the checkpoint carries, else llama3 where the tokenizer has Llama-3's header
// tokens; Mistral runs without a wrapper, as in RULER's paper setup.
tokenizer::ChatTemplate data_chat_template(const tokenizer::Tokenizer& tok, const std::string& model,
                                           const std::string& name) {
  const auto by_tokens = tok.special_token_id("<|start_header_id|>") ? tokenizer::ChatTemplate::Llama3
                                                                     : tokenizer::ChatTemplate::None;
  if (name == "auto" && is_plain_tokenizer_file(model)) return by_tokens;
  const auto chat = tokenizer::resolve_chat_template(name, model, by_tokens);
  return name == "auto" && chat == tokenizer::ChatTemplate::Mistral ? tokenizer::ChatTemplate::None : chat;
}

struct GeneratedDataset {
  RulerDatasetSummary summary;
  std::string lines;
};

// The task's tokens to generate, capped by --max-new-tokens.
int generation_budget(const TaskSpec& task, const RulerDataOptions& o) {
  const int ruler = tokens_to_generate(task.family);
  return o.max_new_tokens > 0 ? std::min(ruler, o.max_new_tokens) : ruler;
}

GeneratedDataset generate_dataset(const TaskSpec& task, int64_t target, const RulerDataOptions& o,
                                  const Resources& res, const tokenizer::Tokenizer& tok,
                                  tokenizer::ChatTemplate chat) {
  const int to_generate = generation_budget(task, o);
  const std::string name = task.name + "_" + std::to_string(target);
  GeneratedDataset out;
  out.summary = {name, (fs::path(o.out_dir) / "data" / (name + ".jsonl")).string(), 0, INT64_MAX, 0};
  const auto length_of = [&](const Sample& s) {
    return static_cast<int64_t>(longbench::prompt_ids(tok, s.context + s.question, chat, s.answer_prefix).size()) +
           to_generate;
  };
  int64_t hint = 0;
  for (int64_t i = 0; i < o.count; ++i) {
    const uint64_t seed = sample_seed(o.seed, task_index(task), target, i);
    const std::mt19937_64 gen(seed);
    Resources sample_res = res;
    sample_res.question_index = static_cast<size_t>(i);
    const auto make = [&](int64_t units) {
      std::mt19937_64 g = gen;
      return generate_sample(task, sample_res, units, g);
    };
    const int64_t most = max_units(task, sample_res);
    FittedSample fit =
        fit_to_length(target, min_units(task, sample_res), most, hint, make, length_of, task.name);
    if (static_cast<double>(fit.length) < kMinFill * static_cast<double>(target)) {
      const bool all_documents = task.family == Family::Qa && fit.units == most;
      throw Error("--lengths: " + name + " sample " + std::to_string(i) + " fills only " +
                  std::to_string(fit.length) + " of " + std::to_string(target) + " tokens" +
                  (all_documents ? " with all " + std::to_string(most) + " documents of " + res.qa->source
                                 : ""));
    }
    hint = fit.units;
    nlohmann::ordered_json r;
    r["input"] = fit.sample.question;
    r["context"] = fit.sample.context;
    r["answers"] = fit.sample.answers;
    r["length"] = fit.length;
    r["dataset"] = name;
    r["language"] = "en";
    r["all_classes"] = nullptr;
    r["_id"] = strfmt("%016llx", static_cast<unsigned long long>(seed));
    r["answer_prefix"] = fit.sample.answer_prefix;
    r["task"] = task.name;
    r["target_length"] = target;
    r["units"] = fit.units;
    if (task.family == Family::Niah) {
      r["haystack"] = haystack_name(task.niah.haystack);
      r["needle_depths"] = fit.sample.needle_depths;
      r["needle_offsets"] = fit.sample.needle_offsets;
    }
    if (task.family == Family::Qa) r["gold_documents"] = fit.sample.gold_documents;
    out.lines += r.dump(-1, ' ', /*ensure_ascii=*/false) + "\n";
    ++out.summary.records;
    out.summary.min_length = std::min(out.summary.min_length, fit.length);
    out.summary.max_length = std::max(out.summary.max_length, fit.length);
  }
  return out;
}

}  // namespace

RulerDataResult write_ruler_data(const RulerDataOptions& o) {
  if (o.count < 1) throw Error("--count: must be positive");
  if (o.lengths.empty()) throw Error("--lengths: give at least one target length");
  for (int64_t length : o.lengths)
    if (length < 1) throw Error("--lengths: " + std::to_string(length) + " is not a positive length");
  std::vector<const TaskSpec*> tasks;
  if (o.tasks.empty()) {
    for (const auto& t : ruler_tasks()) tasks.push_back(&t);
  } else {
    for (const auto& name : o.tasks) tasks.push_back(&find_task(name));
  }
  const Wording wording = o.templates_file.empty() ? default_wording() : load_wording(o.templates_file);
  const EssaySource essay = o.haystack_file.empty() ? load_license_essay() : load_essay_file(o.haystack_file);
  const WordList words = load_word_list();
  std::optional<QaCorpus> squad, hotpotqa;
  if (!o.squad_file.empty()) squad = load_squad(o.squad_file);
  if (!o.hotpotqa_file.empty()) hotpotqa = load_hotpotqa(o.hotpotqa_file);
  const std::string tokenizer_file =
      is_plain_tokenizer_file(o.model) ? o.model : tokenizer::find_tokenizer_file(o.model);
  const auto tok = tokenizer::load_tokenizer_file(tokenizer_file);
  const tokenizer::ChatTemplate chat = data_chat_template(*tok, o.model, o.chat_template);

  RulerDataResult result;
  result.chat_template = tokenizer::chat_template_name(chat);
  // The tasks to generate, a qa task with its file's corpus; one without its file is skipped.
  std::vector<std::pair<const TaskSpec*, const QaCorpus*>> runs;
  for (const TaskSpec* task : tasks) {
    if (task->family != Family::Qa) {
      runs.emplace_back(task, nullptr);
      continue;
    }
    const bool on_squad = task->qa == QaDataset::Squad;
    const std::optional<QaCorpus>& corpus = on_squad ? squad : hotpotqa;
    if (!corpus) {
      result.notes.push_back(task->name + ": skipped (needs " +
                             (on_squad ? "a SQuAD v2 dev file: give --squad FILE"
                                       : "a HotpotQA dev distractor file: give --hotpotqa FILE") +
                             ")");
      continue;
    }
    if (static_cast<size_t>(o.count) > corpus->questions.size())
      throw Error("--count: " + std::to_string(o.count) + " records of " + task->name +
                  " need as many " + (on_squad ? "answerable " : "") + "questions; " +
                  corpus->source + " has " + std::to_string(corpus->questions.size()));
    runs.emplace_back(task, &*corpus);
  }

  std::vector<GeneratedDataset> generated;
  nlohmann::ordered_json prompts, maxlen, metrics, chats;
  nlohmann::ordered_json task_names = nlohmann::ordered_json::array();
  for (const auto& [task, corpus] : runs) {
    task_names.push_back(task->name);
    for (int64_t length : o.lengths) {
      Resources res{wording, essay.words, words.words, length};
      res.qa = corpus;
      res.shuffle_seed = o.seed;
      generated.push_back(generate_dataset(*task, length, o, res, *tok, chat));
      const std::string& name = generated.back().summary.dataset;
      prompts[name] = "{context}{input}";
      maxlen[name] = generation_budget(*task, o);
      metrics[name] = family_metric(task->family);
      chats[name] = result.chat_template;
    }
  }
  if (generated.empty())
    throw Error("--tasks: no task to generate (qa_1 needs --squad FILE, qa_2 --hotpotqa FILE)");

  nlohmann::ordered_json params;
  params["generator"] = "kvsearch data ruler";
  params["kvsearch_commit"] = build_info::git_commit();
  params["seed"] = o.seed;
  params["count"] = o.count;
  params["lengths"] = o.lengths;
  params["max_new_tokens"] = o.max_new_tokens > 0 ? nlohmann::ordered_json(o.max_new_tokens) : nlohmann::ordered_json("RULER's");
  params["tasks"] = task_names;
  params["skipped"] = result.notes;
  params["tokenizer"] = {{"file", fs::absolute(tokenizer_file).string()},
                         {"sha256", sha256_file_hex(tokenizer_file)},
                         {"kind", tok->kind()}};
  params["chat_template"] = result.chat_template;
  params["wording"] = {{"source", wording.source}, {"sha256", wording.sha256}};
  params["essay_haystack"] = {{"source", essay.description}, {"sha256", essay.sha256}};
  params["word_list"] = {{"source", words.source}, {"sha256", words.sha256}};
  const auto qa_file = [](const std::optional<QaCorpus>& corpus) {
    return corpus ? nlohmann::ordered_json{{"source", corpus->source}, {"sha256", corpus->sha256}}
                  : nlohmann::ordered_json(nullptr);
  };
  params["qa_files"] = {{"squad", qa_file(squad)}, {"hotpotqa", qa_file(hotpotqa)}};

  const fs::path root(o.out_dir);
  fs::create_directories(root / "data");
  fs::create_directories(root / "config");
  for (const auto& d : generated) {
    write_file(d.summary.path, d.lines);
    result.datasets.push_back(d.summary);
  }
  write_file((root / "config" / "dataset2prompt.json").string(), prompts.dump(2) + "\n");
  write_file((root / "config" / "dataset2maxlen.json").string(), maxlen.dump(2) + "\n");
  write_file((root / "config" / "dataset2metric.json").string(), metrics.dump(2) + "\n");
  write_file((root / "config" / "dataset2chat_template.json").string(), chats.dump(2) + "\n");
  write_file((root / "ruler_generation.json").string(), params.dump(2) + "\n");
  return result;
}

}  // namespace kvs::ruler
