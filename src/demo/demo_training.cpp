#include "demo/demo_training.h"

#include <ATen/Parallel.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/log.h"
#include "core/progress.h"
#include "core/timer.h"
#include "demo/model_init.h"
#include "demo/tokenizer_training.h"
#include "demo/trainer.h"
#include "demo/training_data.h"
#include "model/runtime.h"
#include "model/weights.h"
#include "search/evaluator.h"
#include "search/session.h"

namespace kvs::demo {

namespace fs = std::filesystem;

namespace {

nlohmann::ordered_json log_json(const DemoTrainOptions& o, const DemoTrainReport& r,
                                const TrainResult& trained, double tokenizer_seconds) {
  nlohmann::ordered_json j;
  j["command"] = "kvsearch demo train";
  j["data_dir"] = o.data_dir;
  j["out_dir"] = o.out_dir;
  j["seed"] = o.train.seed;
  j["torch_version"] = model::torch_version();
  j["threads"] = at::get_num_threads();
  j["model"] = nlohmann::ordered_json::parse(model::config_to_json(r.config));
  j["parameters"] = r.parameters;
  j["stored_dtype"] = o.dtype;
  j["checkpoint_bytes"] = r.checkpoint_bytes;
  j["tokenizer"] = {{"type", "sentencepiece bpe, byte fallback"},
                    {"vocab_size", o.vocab_size},
                    {"seconds", tokenizer_seconds}};
  const TrainOptions& t = o.train;
  nlohmann::ordered_json curriculum = nlohmann::ordered_json::array();
  for (const auto& stage : t.curriculum) {
    const bool tasks_asked = stage.copy.percent < 100;
    curriculum.push_back({{"until_fraction", stage.until},
                          {"copy_percent", stage.copy.percent},
                          {"copy_lexicon_words", stage.copy.lexicon_words},
                          {"copy_words", {stage.copy.min_words, stage.copy.max_words}},
                          {"paragraphs", tasks_asked ? nlohmann::ordered_json{stage.passage.min_items, stage.passage.max_items} : nullptr},
                          {"kv_records", tasks_asked ? nlohmann::ordered_json{stage.kv.min_items, stage.kv.max_items} : nullptr},
                          {"questions_per_context", stage.passage.questions}});
  }
  j["training"] = {{"steps", t.steps},
                   {"tokens_per_step", t.tokens_per_step},
                   {"learning_rate", t.learning_rate},
                   {"final_lr_ratio", t.final_lr_ratio},
                   {"warmup_steps", t.warmup_steps},
                   {"weight_decay", t.weight_decay},
                   {"grad_clip", t.grad_clip},
                   {"passage_percent", t.passage_percent},
                   {"context_loss_weight", t.context_loss_weight},
                   {"curriculum", curriculum},
                   {"tokens_seen", trained.tokens_seen},
                   {"seconds", trained.seconds},
                   {"final_loss", r.final_loss}};
  nlohmann::ordered_json losses = nlohmann::ordered_json::array();
  for (const auto& p : trained.losses) losses.push_back({p.step, p.stage, p.loss});
  j["loss_history"] = {{"columns", {"step", "stage", "mean_loss"}}, {"rows", losses}};
  nlohmann::ordered_json checks = nlohmann::ordered_json::array();
  for (const auto& c : trained.checks) checks.push_back({c.step, c.passage_exact, c.kv_exact});
  j["checks"] = {{"what", "teacher-forced exact answers on fresh record-shaped examples, %"},
                 {"columns", {"step", "passage", "kv"}},
                 {"rows", checks}};
  nlohmann::ordered_json scores = nlohmann::ordered_json::array();
  for (const auto& s : r.scores)
    scores.push_back({{"dataset", s.dataset},
                      {"split", s.split},
                      {"questions", s.questions},
                      {"mean_prompt_tokens", s.mean_prompt_tokens},
                      {"full_cache_score", s.score},
                      {"seconds", s.seconds}});
  j["evaluation"] = scores;
  j["total_seconds"] = r.total_seconds;
  return j;
}

}  // namespace

TaskScore full_cache_test_score(const std::string& model_dir, const std::string& longbench_dir,
                                const std::string& dataset, int64_t limit) {
  Timer timer;
  search::SessionSettings settings;
  settings.model_dir = model_dir;
  settings.longbench_dir = longbench_dir;
  settings.dataset = dataset;
  settings.load.device = "cpu";
  settings.load.dtype = "f32";
  search::Session session(settings);
  const search::QuestionSet& test = session.questions(search::SplitPart::Test, limit);
  if (test.questions.empty()) throw Error("demo eval: the test split of " + dataset + " is empty");
  search::EvaluationOptions options;
  options.full_cache = true;
  Progress progress("eval " + dataset, static_cast<int64_t>(test.questions.size()), "q");
  options.on_question = [&](size_t, size_t) { progress.advance(); };
  const auto outcomes = session.evaluator().evaluate(test, {}, options);
  progress.finish();

  TaskScore score;
  score.dataset = dataset;
  score.split = "test";
  score.questions = static_cast<int64_t>(outcomes.size());
  score.score = search::policy_score(outcomes, 0);
  int64_t prompt_tokens = 0;
  for (const auto& o : outcomes) {
    prompt_tokens += o.prompt_tokens;
    score.predictions.push_back(o.answers.front().prediction);
  }
  score.mean_prompt_tokens = static_cast<double>(prompt_tokens) / static_cast<double>(outcomes.size());
  score.seconds = timer.seconds();
  return score;
}

DemoTrainReport run_demo_training(const DemoTrainOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  auto since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  if (!fs::is_directory(fs::path(o.data_dir) / "data"))
    throw error_at(o.data_dir, "not a demo LongBench directory (run `kvsearch demo data` first)");
  fs::create_directories(o.out_dir);
  const std::string tokenizer_path = (fs::path(o.out_dir) / "tokenizer.model").string();

  log::info("training the SentencePiece tokenizer");
  TokenizerTrainingOptions tok_options;
  tok_options.model_path = tokenizer_path;
  tok_options.vocab_size = o.vocab_size;
  tok_options.seed = o.train.seed;
  train_demo_tokenizer(tok_options);
  const double tokenizer_seconds = since(start);
  const auto tok = tokenizer::load_sentencepiece(tokenizer_path);

  DemoTrainReport report;
  report.config = demo_model_config(o.shape, tok->vocab_size(), tok->bos_id(), tok->eos_ids().front());
  report.parameters = report.config.parameter_count();
  log::info(strfmt("training a %.2fM-parameter model for %lld steps", report.parameters / 1e6,
                   static_cast<long long>(o.train.steps)));
  const TrainResult trained = train_demo_model(report.config, *tok, o.train);
  report.train_seconds = trained.seconds;
  report.final_loss = trained.losses.empty() ? 0 : trained.losses.back().loss;

  model::ModelConfig stored = report.config;
  stored.torch_dtype = o.dtype == "f32" ? "float32" : o.dtype == "f16" ? "float16" : "bfloat16";
  report.config = stored;
  model::save_weights(o.out_dir, stored, trained.weights, o.dtype, int64_t{1} << 40);
  {
    std::ofstream out(fs::path(o.out_dir) / "config.json", std::ios::trunc);
    out << model::config_to_json(stored);
    if (!out) throw error_at(o.out_dir, "cannot write config.json");
  }
  report.checkpoint_bytes = static_cast<int64_t>(fs::file_size(fs::path(o.out_dir) / "model.safetensors"));

  for (const DemoTask& task : demo_tasks())
    report.scores.push_back(full_cache_test_score(o.out_dir, o.data_dir, task.name, o.eval_limit));
  report.total_seconds = since(start);
  report.log_path = o.log_path.empty() ? (fs::path(o.out_dir) / "train_log.json").string() : o.log_path;
  std::ofstream out(report.log_path, std::ios::trunc);
  out << log_json(o, report, trained, tokenizer_seconds).dump(2) << "\n";
  if (!out) throw error_at(report.log_path, "cannot write the training log");
  return report;
}

}  // namespace kvs::demo
