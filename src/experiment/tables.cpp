#include "experiment/tables.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <sstream>

#include "core/strfmt.h"

namespace kvs::experiment {

namespace {

using Score = std::optional<double>;

std::string cell(Score v) { return v ? strfmt("%.2f", *v) : "-"; }
std::string signed_cell(Score v) { return v ? strfmt("%+.2f", *v) : "-"; }

// A score of the table and, when its per-question scores are recorded, its bootstrap estimate
// (whose value the score then is).
struct Scored {
  Score value;
  std::optional<Estimate> estimate;
};

std::optional<CellInterval> interval_of(const Scored& s) {
  if (!s.estimate) return std::nullopt;
  return CellInterval{strfmt("%.2f", s.estimate->low), strfmt("%.2f", s.estimate->high)};
}

Scored scored(const std::optional<Estimate>& e, Score official) {
  return e ? Scored{e->value, e} : Scored{official, std::nullopt};
}

// The scores a table shows: bootstrap estimates where `estimates` has them, else official scores.
class TableScores {
 public:
  TableScores(const ExperimentResults& results, const CellEstimates* estimates)
      : results_(results), estimates_(estimates) {}

  Scored test(const std::string& dataset, const std::string& method, int64_t budget) const {
    return scored(estimates_ ? estimates_->mean(dataset, method, budget) : std::nullopt,
                  results_.test(dataset, method, budget));
  }

  // The mean over the table's datasets, or nothing when one of them is missing.
  Scored macro(const TableSpec& ts, const std::string& method, int64_t budget) const {
    Score official;
    double sum = 0;
    bool complete = true;
    for (const auto& d : ts.datasets) {
      const Score s = results_.test(d, method, budget);
      complete = complete && s;
      if (s) sum += *s;
    }
    if (complete) official = sum / static_cast<double>(ts.datasets.size());
    return scored(estimates_ ? estimates_->macro(ts.datasets, method, budget) : std::nullopt,
                  official);
  }

  // The note under a table with intervals, "" without.
  std::string interval_note() const {
    if (!estimates_) return "";
    const Bootstrap& b = estimates_->bootstrap();
    return strfmt(
        "In brackets: 95%% percentile bootstrap interval over the test questions (%lld resamples, "
        "seed %llu; a macro average resamples each dataset's questions separately); a score "
        "without brackets has no recorded per-question scores.",
        static_cast<long long>(b.resamples), static_cast<unsigned long long>(b.seed));
  }

 private:
  const ExperimentResults& results_;
  const CellEstimates* estimates_;
};

// The paper's number for a cell, looked up by the keys of its row and its column.
using ReferenceLookup =
    std::function<Score(const std::string& row_key, const std::string& column_key)>;

// spec.reference[row][column]: the reference as the spec writes it.
ReferenceLookup by_row(const TableSpec& spec) {
  return [&spec](const std::string& row_key, const std::string& column_key) -> Score {
    const auto row = spec.reference.find(row_key);
    if (row == spec.reference.end()) return std::nullopt;
    const auto it = row->second.find(column_key);
    return it == row->second.end() ? std::nullopt : Score(it->second);
  };
}

// Appends "<column> (paper)" columns for every column the reference names, in header order.
void add_reference_columns(Table& t, const std::vector<std::string>& row_keys,
                           const std::vector<std::string>& column_keys,
                           const ReferenceLookup& reference) {
  for (size_t c = 0; c < column_keys.size(); ++c) {
    bool named = false;
    for (const auto& r : row_keys) named = named || reference(r, column_keys[c]);
    if (!named) continue;
    t.header.push_back(t.header[c + 1] + " (paper)");
    for (size_t r = 0; r < t.rows.size(); ++r) {
      const Score v = r < row_keys.size() ? reference(row_keys[r], column_keys[c]) : std::nullopt;
      t.rows[r].push_back(v ? strfmt("%g", *v) : "");
      t.bold[r].push_back(false);
    }
  }
}

bool any_interval(const Table& t) {
  for (const auto& row : t.intervals)
    for (const auto& i : row)
      if (i) return true;
  return false;
}

// The interval note when the table shows an interval.
void add_interval_note(Table& t, const TableScores& scores) {
  if (any_interval(t)) t.notes.push_back(scores.interval_note());
}

// Table 1: datasets x methods, the row's best in bold, macro average and wins rows.
Table datasets_table(const TableSpec& ts, const TableScores& results) {
  Table t;
  t.header.push_back("Dataset");
  for (const auto& m : ts.methods) t.header.push_back(m);
  t.header.push_back("best");
  std::vector<int> wins(ts.methods.size(), 0);
  std::vector<std::string> row_keys;
  auto scored_row = [&](const std::string& label, const std::vector<Scored>& scores,
                        bool count_wins) {
    double best = -1;
    for (const Scored& s : scores)
      if (s.value) best = std::max(best, *s.value);
    std::vector<std::string> cells = {label};
    std::vector<bool> bold = {false};
    std::vector<std::optional<CellInterval>> intervals = {std::nullopt};
    std::string best_names;
    for (size_t m = 0; m < scores.size(); ++m) {
      const bool is_best = scores[m].value && std::fabs(*scores[m].value - best) < 1e-9;
      cells.push_back(cell(scores[m].value));
      bold.push_back(is_best);
      intervals.push_back(interval_of(scores[m]));
      if (!is_best) continue;
      best_names += (best_names.empty() ? "" : "; ") + ts.methods[m];
      if (count_wins) ++wins[m];
    }
    cells.push_back(best_names);
    add_row(t, cells, bold, intervals);
  };
  for (const auto& d : ts.datasets) {
    std::vector<Scored> scores;
    for (const auto& m : ts.methods) scores.push_back(results.test(d, m, ts.budget));
    scored_row(d, scores, true);
    row_keys.push_back(d);
  }
  std::vector<Scored> macros;
  for (const auto& m : ts.methods) macros.push_back(results.macro(ts, m, ts.budget));
  scored_row("Macro average", macros, false);
  row_keys.push_back("macro");
  std::vector<std::string> win_cells = {"Wins (row best, ties count for each)"};
  for (int w : wins) win_cells.push_back(strfmt("%d/%zu", w, ts.datasets.size()));
  win_cells.push_back("");
  add_row(t, win_cells);
  row_keys.push_back("wins");
  add_reference_columns(t, row_keys, ts.methods, by_row(ts));
  t.notes.push_back(strfmt("Official test scores at B = %lld; bold: the row's best.", static_cast<long long>(ts.budget)));
  add_interval_note(t, results);
  return t;
}

// The spec writes a budgets table's reference as {budget: {column: number}}; its tables have a
// row per method and a column per budget: the lookup turns it around. `suffix`: " gain" for the
// gains table's columns.
ReferenceLookup by_budget(const TableSpec& spec, const std::string& suffix) {
  return [lookup = by_row(spec), suffix](const std::string& method, const std::string& budget) {
    return lookup(budget, method + suffix);
  };
}

// The budgets' header ("B = 32", ...) after `first`, and the budgets as reference keys.
std::vector<std::string> budget_columns(Table& t, const std::string& first,
                                        const ExperimentSpec& spec) {
  t.header = {first};
  std::vector<std::string> keys;
  for (const int64_t b : spec.budgets) {
    t.header.push_back("B = " + std::to_string(b));
    keys.push_back(std::to_string(b));
  }
  return keys;
}

// Table 2: a row per method, a column per budget: the macro average, the column's best in bold.
Table budgets_table(const TableSpec& ts, const ExperimentSpec& spec, const TableScores& results) {
  Table t;
  const std::vector<std::string> column_keys = budget_columns(t, "Method", spec);
  std::vector<std::vector<Scored>> scores;  // [method][budget]
  std::vector<double> best(spec.budgets.size(), -1);
  for (const auto& m : ts.methods) {
    scores.emplace_back();
    for (size_t b = 0; b < spec.budgets.size(); ++b) {
      scores.back().push_back(results.macro(ts, m, spec.budgets[b]));
      if (scores.back().back().value) best[b] = std::max(best[b], *scores.back().back().value);
    }
  }
  for (size_t m = 0; m < ts.methods.size(); ++m) {
    std::vector<std::string> cells = {ts.methods[m]};
    std::vector<bool> bold = {false};
    std::vector<std::optional<CellInterval>> intervals = {std::nullopt};
    for (size_t b = 0; b < spec.budgets.size(); ++b) {
      const Score& s = scores[m][b].value;
      cells.push_back(cell(s));
      bold.push_back(s && std::fabs(*s - best[b]) < 1e-9);
      intervals.push_back(interval_of(scores[m][b]));
    }
    add_row(t, cells, bold, intervals);
  }
  add_reference_columns(t, ts.methods, column_keys, by_budget(ts, ""));
  t.notes.push_back("Macro average of the official test scores over " +
                    std::to_string(ts.datasets.size()) +
                    " datasets, a row per method and a column per budget; bold: the budget's best "
                    "(gains over " +
                    ts.baseline + ": " + ts.name + "_gains.md).");
  add_interval_note(t, results);
  return t;
}

// Table 3: one row per method at one budget: macro average and datasets better than the baseline.
Table methods_table(const TableSpec& ts, const TableScores& results) {
  Table t;
  t.header = {"Method", "Macro average", "Better than " + ts.baseline};
  std::vector<Scored> scores;
  std::vector<Score> macros;
  double best = -1;
  for (const auto& m : ts.methods) {
    scores.push_back(results.macro(ts, m, ts.budget));
    macros.push_back(scores.back().value);
    if (macros.back()) best = std::max(best, *macros.back());
  }
  for (size_t i = 0; i < ts.methods.size(); ++i) {
    const auto& m = ts.methods[i];
    std::string better = "-";
    if (m != ts.baseline) {
      int n = 0;
      bool complete = true;
      for (const auto& d : ts.datasets) {
        const Score s = results.test(d, m, ts.budget).value;
        const Score base = results.test(d, ts.baseline, ts.budget).value;
        if (!s || !base) complete = false;
        else if (*s > *base) ++n;
      }
      if (complete) better = strfmt("%d/%zu", n, ts.datasets.size());
    }
    add_row(t, {m, cell(macros[i]), better},
            {false, macros[i] && std::fabs(*macros[i] - best) < 1e-9, false},
            {std::nullopt, interval_of(scores[i])});
  }
  add_reference_columns(t, ts.methods, {"macro", "better"}, by_row(ts));
  t.notes.push_back(strfmt("Official test scores at B = %lld, macro average over %zu datasets; bold: the best.",
                           static_cast<long long>(ts.budget), ts.datasets.size()));
  add_interval_note(t, results);
  return t;
}

// Sample standard deviation in points (scores in [0, 1]); nothing below two questions.
Score points_sd(const std::vector<double>& scores) {
  if (scores.size() < 2) return std::nullopt;
  double mean = 0;
  for (double v : scores) mean += v;
  mean /= static_cast<double>(scores.size());
  double ss = 0;
  for (double v : scores) ss += (v - mean) * (v - mean);
  return 100.0 * std::sqrt(ss / static_cast<double>(scores.size() - 1));
}

std::optional<CellInterval> interval_at(const Table& t, size_t r, size_t c) {
  if (r >= t.intervals.size() || c >= t.intervals[r].size()) return std::nullopt;
  return t.intervals[r][c];
}

bool bold_at(const Table& t, size_t r, size_t c) {
  return r < t.bold.size() && c < t.bold[r].size() && t.bold[r][c];
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

void add_row(Table& t, std::vector<std::string> cells, std::vector<bool> bold,
             std::vector<std::optional<CellInterval>> intervals) {
  bold.resize(cells.size(), false);
  t.rows.push_back(std::move(cells));
  t.bold.push_back(std::move(bold));
  t.intervals.push_back(std::move(intervals));
}

Table make_table(const TableSpec& table, const ExperimentSpec& spec,
                 const ExperimentResults& results, const CellEstimates* estimates) {
  const TableScores scores(results, estimates);
  Table t = table.kind == "datasets"  ? datasets_table(table, scores)
            : table.kind == "budgets" ? budgets_table(table, spec, scores)
                                      : methods_table(table, scores);
  t.name = table.name;
  t.title = table.title;
  return t;
}

Table gains_table(const TableSpec& table, const ExperimentSpec& spec,
                  const ExperimentResults& results, const CellEstimates* estimates) {
  const TableScores scores(results, estimates);
  Table t;
  t.name = table.name + "_gains";
  t.title = table.title + ": gain over " + table.baseline;
  const std::vector<std::string> column_keys = budget_columns(t, "Method", spec);
  std::vector<std::string> row_keys;
  for (const auto& m : table.methods) {
    if (m == table.baseline) continue;
    std::vector<std::string> cells = {m};
    for (const int64_t b : spec.budgets) {
      const Score s = scores.macro(table, m, b).value;
      const Score base = scores.macro(table, table.baseline, b).value;
      cells.push_back(signed_cell(s && base ? Score(*s - *base) : std::nullopt));
    }
    add_row(t, cells);
    row_keys.push_back(m);
  }
  add_reference_columns(t, row_keys, column_keys, by_budget(table, " gain"));
  t.notes.push_back("Macro average minus " + table.baseline +
                    "'s at the same budget (points); their paired differences with intervals and "
                    "p-values: " +
                    table.name + "_paired.md.");
  return t;
}

Table noise_table(const ExperimentSpec& spec, const ExperimentResults& results) {
  Table t;
  t.name = "noise";
  t.title = "Noise floor: questions, per-question standard deviation and standard errors (points)";
  t.header = {"Dataset", "Dev questions", "Test questions", "Per-question SD (test)", "Test SE",
              "2 x test SE", "Dev SE"};
  for (const auto& d : spec.datasets) {
    size_t dev_n = 0, test_n = 0;
    Score test_sd, dev_sd;
    for (const MethodResult& r : results.of_dataset(d)) {
      dev_n = std::max(dev_n, r.dev_questions.size());
      test_n = std::max(test_n, r.test_questions.size());
      if (const Score sd = points_sd(r.test_questions); sd && (!test_sd || *sd > *test_sd)) test_sd = sd;
      if (const Score sd = points_sd(r.dev_questions); sd && (!dev_sd || *sd > *dev_sd)) dev_sd = sd;
    }
    const auto se = [](Score sd, size_t n) { return sd ? Score(*sd / std::sqrt(static_cast<double>(n))) : sd; };
    const Score test_se = se(test_sd, test_n);
    add_row(t, {d, std::to_string(dev_n), std::to_string(test_n), cell(test_sd), cell(test_se),
                cell(test_se ? Score(2 * *test_se) : test_se), cell(se(dev_sd, dev_n))});
  }
  t.notes.push_back(
      "SD: the largest per-question standard deviation over the dataset's recorded methods and budgets "
      "(scores in points, 0-100); SE = SD / sqrt(questions). A difference between two methods on one "
      "dataset larger than 2 x test SE is beyond the test split's noise; a smaller one is not evidence.");
  return t;
}

std::string to_markdown(const Table& t) {
  std::ostringstream out;
  out << "### " << t.title << "\n";
  if (!t.header.empty()) {
    out << "\n|";
    for (const auto& h : t.header) out << " " << h << " |";
    out << "\n|";
    for (size_t c = 0; c < t.header.size(); ++c) out << (c == 0 ? "---|" : "---:|");
    out << "\n";
  }
  for (size_t r = 0; r < t.rows.size(); ++r) {
    out << "|";
    for (size_t c = 0; c < t.rows[r].size(); ++c) {
      std::string text = t.rows[r][c];
      if (const auto i = interval_at(t, r, c)) text += " [" + i->low + ", " + i->high + "]";
      out << " " << (bold_at(t, r, c) ? "**" + text + "**" : text) << " |";
    }
    out << "\n";
  }
  for (const auto& n : t.notes) out << "\n" << n << "\n";
  return out.str();
}

std::string to_csv(const Table& t) {
  std::vector<size_t> with_interval;  // the columns that get "low" and "high" columns
  for (size_t c = 0; c < t.header.size(); ++c)
    for (size_t r = 0; r < t.rows.size(); ++r)
      if (interval_at(t, r, c)) {
        with_interval.push_back(c);
        break;
      }
  std::vector<std::string> header = t.header;
  for (const size_t c : with_interval) {
    header.push_back(t.header[c] + " low");
    header.push_back(t.header[c] + " high");
  }
  std::ostringstream out;
  for (size_t c = 0; c < header.size(); ++c) out << (c ? "," : "") << csv_field(header[c]);
  out << "\n";
  for (size_t r = 0; r < t.rows.size(); ++r) {
    std::vector<std::string> row = t.rows[r];
    for (const size_t c : with_interval) {
      const auto i = interval_at(t, r, c);
      row.push_back(i ? i->low : "");
      row.push_back(i ? i->high : "");
    }
    for (size_t c = 0; c < row.size(); ++c) out << (c ? "," : "") << csv_field(row[c]);
    out << "\n";
  }
  return out.str();
}

}  // namespace kvs::experiment
