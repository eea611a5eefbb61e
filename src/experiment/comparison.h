// The paired comparison of two methods that `kvsearch compare` prints: over all the questions both
// answered, per dataset with Holm's correction over the datasets, and as macro averages (stratified
// bootstrap) when there are several datasets. As text for a reader, as JSON for scripts.
// Torch-free.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "experiment/paired_scores.h"
#include "experiment/paired_stats.h"

namespace kvs::experiment {

// Holm's correction is applied at this level over the datasets' sign tests.
constexpr double kAlpha = 0.05;

struct DatasetComparison {
  std::string dataset;
  PairedComparison paired;
  double p_holm = 1;      // adjusted over the compared datasets
  bool survives = false;  // p_holm <= kAlpha
};

struct Comparison {
  std::string a, b;
  std::string source;  // where the scores come from (PairedScores::source)
  std::optional<int64_t> budget;
  std::vector<int64_t> other_budgets;
  Estimate mean_a, mean_b;  // over every paired question
  PairedComparison pooled;  // every paired question of every dataset, resampled together
  std::vector<DatasetComparison> datasets;
  // Several datasets only: the macro averages of A, of B and of the per-question differences.
  std::optional<Estimate> macro_a, macro_b, macro_difference;
};

Comparison compare_methods(const PairedScores& scores, const Bootstrap& bootstrap = {});

// At least difference, low, high, wins, losses, ties, p, n, seed and resamples at the top level
// (the pooled comparison), then the per-dataset and macro figures.
nlohmann::json to_json(const Comparison& c);

// A p-value as the comparisons print it: four decimals, or one significant digit below 1e-4.
std::string p_text(double p);

// A difference in points with its sign, two decimals ("+1.25"); a zero prints as +0.00, since
// -0.00 would read as a loss.
std::string signed_points(double x);

// A budget as the comparisons print it: the number, "full" for the full cache.
std::string budget_text(int64_t budget);

// A few lines: the setting, one row per dataset (several datasets), the pooled row and the macro
// average, and what the columns mean.
std::string to_text(const Comparison& c);

}  // namespace kvs::experiment
