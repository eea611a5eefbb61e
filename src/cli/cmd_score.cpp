// kvsearch score: the official LongBench scorer (and RULER's metrics) on prediction files.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "cli/command.h"
#include "core/error.h"
#include "longbench/config.h"
#include "longbench/evaluate.h"
#include "longbench/result_json.h"

namespace {

struct ScoreOptions {
  std::string dataset;
  std::string metric;
  std::string longbench_dir;
  std::string predictions;
  std::string pred_dir;
  std::string per_example;
  bool e = false;
  bool raw = false;
  std::string thinking = "keep";
  int indent = 4;
};

void run_score(const ScoreOptions& o) {
  using namespace kvs::longbench;
  const ScoreVariant variant = o.raw ? ScoreVariant::Raw : ScoreVariant::Official;
  if (!o.longbench_dir.empty()) load_config(o.longbench_dir);  // registers its declared datasets
  std::optional<Metric> metric;
  if (!o.metric.empty()) metric = metric_from_name(o.metric);
  Thinking thinking = Thinking::Keep;
  try {
    thinking = parse_thinking(o.thinking);
  } catch (const kvs::Error& e) {
    throw kvs::Error(std::string("--thinking: ") + e.what());
  }
  std::vector<DatasetResult> results;
  if (!o.pred_dir.empty()) {
    results = evaluate_directory(o.pred_dir, o.e, variant, metric, thinking);
  } else if (metric && !o.predictions.empty()) {
    const std::string name = std::filesystem::path(o.predictions).stem().string();
    results.push_back(
        evaluate_file_with_metric(o.predictions, name, *metric, o.e, variant, thinking));
  } else if (!o.dataset.empty() && !o.predictions.empty()) {
    results.push_back(evaluate_file(o.predictions, o.dataset, o.e, variant, thinking));
  } else {
    throw kvs::Error(
        "score: give --pred-dir DIR, or --predictions FILE with --dataset NAME or --metric NAME");
  }
  if (!o.per_example.empty()) {
    std::ofstream out(o.per_example, std::ios::binary);
    out << per_example_json(results) << "\n";
    if (!out) throw kvs::error_at(o.per_example, "cannot write the per-example scores");
  }
  std::printf("%s\n", result_json(results, o.e, o.indent).c_str());
}

void setup_score(CLI::App& parent) {
  auto options = std::make_shared<ScoreOptions>();
  auto* cmd = parent.add_subcommand(
      "score", "Score LongBench predictions exactly as the official eval.py (prints result.json)");
  auto* dataset = cmd->add_option("--dataset", options->dataset, "Dataset of --predictions");
  auto* predictions = cmd->add_option("--predictions", options->predictions,
                                      "A prediction file (JSON lines: pred, answers, all_classes, length)");
  auto* pred_dir = cmd->add_option("--pred-dir", options->pred_dir,
                                   "Score every <dataset>.jsonl of this directory");
  auto* metric = cmd->add_option("--metric", options->metric,
                                 "Score with this metric instead of the dataset's (string_match_all, "
                                 "string_match_part, or a LongBench metric)");
  cmd->add_option("--longbench", options->longbench_dir,
                  "A data directory whose config/dataset2metric.json declares the datasets to score");
  dataset->excludes(metric);
  pred_dir->excludes(dataset)->excludes(predictions);
  cmd->add_flag("--e", options->e, "LongBench-E: scores per length bucket (0-4k, 4-8k, 8k+)");
  cmd->add_flag("--raw", options->raw,
                "Score whole outputs, without the first-line rule (the search's dev score)");
  cmd->add_option(
         "--thinking", options->thinking,
         "What the scorer sees of a prediction: keep (all of it) | strip (what follows its "
         "last </think>), as run --thinking")
      ->capture_default_str();
  cmd->add_option("--per-example", options->per_example,
                  "Also write {dataset: [per-example scores]} to this file");
  cmd->add_option("--indent", options->indent, "JSON indentation (eval.py uses 4)")
      ->check(CLI::Range(0, 16));
  cmd->callback([options] { run_score(*options); });
}

const kvs::cli::CommandRegistration score_registration("score", setup_score);

}  // namespace
