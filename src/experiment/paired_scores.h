// The per-question scores two methods share, paired by question, dataset by dataset: from a
// results database (each method's recorded test scores) or from two JSON files of scores. What
// `kvsearch compare` feeds to the paired statistics (paired_stats.h). Torch-free.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "store/records.h"

namespace kvs::store {
class Store;
}

namespace kvs::experiment {

// One dataset's questions that both methods answered: a[i] and b[i] score question i (points).
struct PairedDataset {
  std::string name;
  std::vector<double> a, b;
};

struct PairedScores {
  std::string a, b;                     // the methods' names (or the score files)
  std::string source;                   // where the scores come from, for the reader
  std::optional<int64_t> budget;        // the budget compared (databases only)
  std::vector<int64_t> other_budgets;   // further budgets both methods have (not compared)
  std::vector<PairedDataset> datasets;  // in name order, none empty
};

// What to read from a results database. Methods are named as `recorded_name` spells them (or as
// the experiment spec does: "SnapKV" finds snapkv). Empty dataset: every dataset both methods
// have at the budget. No budget: the largest both methods have (the full cache counts at every
// budget).
struct ScoreQuery {
  std::string db_path;
  std::string a, b;
  std::string dataset;
  std::optional<int64_t> budget;
};

// The official test scores (x 100) of each method's best state (its last accepted one, as the
// report's tables use), on the questions of its test replay that both methods have. Unknown
// methods, datasets or budgets are errors listing the recorded ones.
PairedScores read_paired_test_scores(const ScoreQuery& query);

// A run's method name: the slug an experiment gave it (the third part of its run key, e.g.
// "snapkv" in demo/niah_single_1_1024/snapkv/B32), else its profile family with its segment
// count ("baseline", "segments3") for a standalone `kvsearch run`.
std::string recorded_name(const store::Run& run);

// One question's official test score (points) and its id.
struct QuestionScore {
  std::string id;
  double points = 0;
};

// question_index -> score: a run's scores on the test split.
using QuestionScores = std::map<int64_t, QuestionScore>;

// The official test scores (x 100) of the run's best state (its last accepted one); empty before
// its replay.
QuestionScores best_state_test_scores(store::Store& db, const store::Run& run);

// The questions both `a` and `b` score, paired in index order. A question index that holds two
// different ids is an error naming `where` and the two runs (`a_name`, `b_name`).
PairedDataset pair_questions(const std::string& dataset, const QuestionScores& a,
                             const QuestionScores& b, const std::string& where,
                             const std::string& a_name, const std::string& b_name);

// Two files of per-question scores (points): each a JSON array (one dataset, named "scores"), or
// an object of dataset name -> array. Both must hold the same datasets with as many scores each.
PairedScores read_paired_score_files(const std::string& path_a, const std::string& path_b);

}  // namespace kvs::experiment
