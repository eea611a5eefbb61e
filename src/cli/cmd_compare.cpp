// kvsearch compare: a paired comparison of two methods on the questions both answered (difference
// with its bootstrap interval, wins / losses / ties, exact sign test, Holm over the datasets), from
// the per-question test scores of a results database or from two files of per-question scores.
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/command.h"
#include "core/error.h"
#include "core/settings.h"
#include "experiment/comparison.h"
#include "experiment/paired_scores.h"

namespace {

struct CompareOptions {
  kvs::experiment::ScoreQuery query;
  int64_t budget = 0;
  std::string scores_a, scores_b;
  kvs::experiment::Bootstrap bootstrap;
  bool json = false;
};

void setup_compare(CLI::App& parent) {
  auto* cmd = parent.add_subcommand(
      "compare",
      "Compare two methods question by question: difference, 95% CI, wins/losses/ties, sign test");
  auto o = std::make_shared<CompareOptions>();
  cmd->add_option("--db", o->query.db_path, "Results database (or KVSEARCH_DB / config file)");
  cmd->add_option("--a", o->query.a,
                  "Method A as its runs name it (global, snapkv, ...: the method part of the run "
                  "keys `kvsearch runs` lists)");
  cmd->add_option("--b", o->query.b, "Method B, compared on the same test questions");
  cmd->add_option("--dataset", o->query.dataset,
                  "Only this dataset (default: every one both have)");
  auto* budget = cmd->add_option("--budget", o->budget, "Budget (default: the largest both have)");
  cmd->add_option(
      "--scores-a", o->scores_a,
      "Instead of a database: A's per-question scores (points), a JSON array or {dataset: array}");
  cmd->add_option("--scores-b", o->scores_b,
                  "B's per-question scores, the same questions in the same order");
  cmd->add_option("--seed", o->bootstrap.seed, "Bootstrap seed")->capture_default_str();
  cmd->add_option("--resamples", o->bootstrap.resamples, "Bootstrap resamples")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--json", o->json,
                "One JSON object (difference, low, high, wins, losses, ties, p, n, ...)");
  cmd->callback([o, budget] {
    namespace ex = kvs::experiment;
    ex::PairedScores scores;
    if (!o->scores_a.empty() || !o->scores_b.empty()) {
      if (o->scores_a.empty() || o->scores_b.empty())
        throw kvs::Error(
            "--scores-a and --scores-b: give both files, or neither (and --db, --a, --b)");
      if (!o->query.db_path.empty() || !o->query.a.empty() || !o->query.b.empty() ||
          !o->query.dataset.empty() || budget->count())
        throw kvs::Error(
            "--scores-a/--scores-b: the files replace --db, --a, --b, --dataset and --budget");
      scores = ex::read_paired_score_files(o->scores_a, o->scores_b);
    } else {
      if (o->query.a.empty() || o->query.b.empty())
        throw kvs::Error(
            "--a and --b: name the two methods to compare (or give --scores-a and --scores-b)");
      o->query.db_path =
          kvs::resolve_setting(kvs::kDatabaseSetting, o->query.db_path, "results/kvsearch.sqlite");
      if (budget->count()) o->query.budget = o->budget;
      scores = ex::read_paired_test_scores(o->query);
    }
    const ex::Comparison c = ex::compare_methods(scores, o->bootstrap);
    std::cout << (o->json ? ex::to_json(c).dump(2) + "\n" : ex::to_text(c));
  });
}

const kvs::cli::CommandRegistration compare_registration("compare", setup_compare);

}  // namespace
