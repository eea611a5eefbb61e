#include "experiment/tables.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>

#include "core/strfmt.h"

namespace kvs::experiment {

namespace {

using Score = std::optional<double>;

std::string cell(Score v) { return v ? strfmt("%.2f", *v) : "-"; }
std::string signed_cell(Score v) { return v ? strfmt("%+.2f", *v) : "-"; }

// The mean over the table's datasets, or nothing when one of them is missing.
Score macro(const TableSpec& ts, const ExperimentResults& results, const std::string& method, int64_t budget) {
  double sum = 0;
  for (const auto& d : ts.datasets) {
    const Score s = results.test(d, method, budget);
    if (!s) return std::nullopt;
    sum += *s;
  }
  return sum / static_cast<double>(ts.datasets.size());
}

// Appends "<column> (paper)" columns for every column the reference names, in header order.
void add_reference_columns(Table& t, const TableSpec& spec, const std::vector<std::string>& row_keys,
                           const std::vector<std::string>& column_keys) {
  for (size_t c = 0; c < column_keys.size(); ++c) {
    bool named = false;
    for (const auto& [row, columns] : spec.reference) named = named || columns.count(column_keys[c]);
    if (!named) continue;
    t.header.push_back(t.header[c + 1] + " (paper)");
    for (size_t r = 0; r < t.rows.size(); ++r) {
      Score v;
      const auto row = spec.reference.find(row_keys[r]);
      if (row != spec.reference.end()) {
        const auto it = row->second.find(column_keys[c]);
        if (it != row->second.end()) v = it->second;
      }
      t.rows[r].push_back(v ? strfmt("%g", *v) : "");
      t.bold[r].push_back(false);
    }
  }
}

void add_row(Table& t, std::vector<std::string> cells, std::vector<bool> bold = {}) {
  bold.resize(cells.size(), false);
  t.rows.push_back(std::move(cells));
  t.bold.push_back(std::move(bold));
}

// Table 1: datasets x methods, the row's best in bold, macro average and wins rows.
Table datasets_table(const TableSpec& ts, const ExperimentResults& results) {
  Table t;
  t.header.push_back("Dataset");
  for (const auto& m : ts.methods) t.header.push_back(m);
  t.header.push_back("best");
  std::vector<int> wins(ts.methods.size(), 0);
  std::vector<std::string> row_keys;
  auto scored_row = [&](const std::string& label, const std::vector<Score>& scores, bool count_wins) {
    double best = -1;
    for (const Score& s : scores)
      if (s) best = std::max(best, *s);
    std::vector<std::string> cells = {label};
    std::vector<bool> bold = {false};
    std::string best_names;
    for (size_t m = 0; m < scores.size(); ++m) {
      const bool is_best = scores[m] && std::fabs(*scores[m] - best) < 1e-9;
      cells.push_back(cell(scores[m]));
      bold.push_back(is_best);
      if (!is_best) continue;
      best_names += (best_names.empty() ? "" : "; ") + ts.methods[m];
      if (count_wins) ++wins[m];
    }
    cells.push_back(best_names);
    add_row(t, cells, bold);
  };
  for (const auto& d : ts.datasets) {
    std::vector<Score> scores;
    for (const auto& m : ts.methods) scores.push_back(results.test(d, m, ts.budget));
    scored_row(d, scores, true);
    row_keys.push_back(d);
  }
  std::vector<Score> macros;
  for (const auto& m : ts.methods) macros.push_back(macro(ts, results, m, ts.budget));
  scored_row("Macro average", macros, false);
  row_keys.push_back("macro");
  std::vector<std::string> win_cells = {"Wins (row best, ties count for each)"};
  for (int w : wins) win_cells.push_back(strfmt("%d/%zu", w, ts.datasets.size()));
  win_cells.push_back("");
  add_row(t, win_cells);
  row_keys.push_back("wins");
  add_reference_columns(t, ts, row_keys, ts.methods);
  t.notes.push_back(strfmt("Official test scores at B = %lld; bold: the row's best.", static_cast<long long>(ts.budget)));
  return t;
}

// Table 2: macro average per budget, and each method's gain over the baseline.
Table budgets_table(const TableSpec& ts, const ExperimentSpec& spec, const ExperimentResults& results) {
  Table t;
  t.header.push_back("Budget");
  std::vector<std::string> columns;
  for (const auto& m : ts.methods) columns.push_back(m);
  for (const auto& m : ts.methods)
    if (m != ts.baseline) columns.push_back(m + " gain");
  for (const auto& c : columns) t.header.push_back(c);
  std::vector<std::string> row_keys;
  for (const int64_t b : spec.budgets) {
    std::vector<std::string> cells = {"B = " + std::to_string(b)};
    std::vector<bool> bold = {false};
    std::vector<Score> macros;
    double best = -1;
    for (const auto& m : ts.methods) {
      macros.push_back(macro(ts, results, m, b));
      if (macros.back()) best = std::max(best, *macros.back());
    }
    for (const Score& s : macros) {
      cells.push_back(cell(s));
      bold.push_back(s && std::fabs(*s - best) < 1e-9);
    }
    const Score base = macro(ts, results, ts.baseline, b);
    for (size_t m = 0; m < ts.methods.size(); ++m) {
      if (ts.methods[m] == ts.baseline) continue;
      cells.push_back(signed_cell(macros[m] && base ? Score(*macros[m] - *base) : std::nullopt));
      bold.push_back(false);
    }
    add_row(t, cells, bold);
    row_keys.push_back(std::to_string(b));
  }
  add_reference_columns(t, ts, row_keys, columns);
  t.notes.push_back("Macro average of the official test scores over " + std::to_string(ts.datasets.size()) +
                    " datasets; gains over " + ts.baseline + "; bold: the row's best.");
  return t;
}

// Table 3: one row per method at one budget: macro average and datasets better than the baseline.
Table methods_table(const TableSpec& ts, const ExperimentResults& results) {
  Table t;
  t.header = {"Method", "Macro average", "Better than " + ts.baseline};
  std::vector<Score> macros;
  double best = -1;
  for (const auto& m : ts.methods) {
    macros.push_back(macro(ts, results, m, ts.budget));
    if (macros.back()) best = std::max(best, *macros.back());
  }
  for (size_t i = 0; i < ts.methods.size(); ++i) {
    const auto& m = ts.methods[i];
    std::string better = "-";
    if (m != ts.baseline) {
      int n = 0;
      bool complete = true;
      for (const auto& d : ts.datasets) {
        const Score s = results.test(d, m, ts.budget), base = results.test(d, ts.baseline, ts.budget);
        if (!s || !base) complete = false;
        else if (*s > *base) ++n;
      }
      if (complete) better = strfmt("%d/%zu", n, ts.datasets.size());
    }
    add_row(t, {m, cell(macros[i]), better}, {false, macros[i] && std::fabs(*macros[i] - best) < 1e-9, false});
  }
  add_reference_columns(t, ts, ts.methods, {"macro", "better"});
  t.notes.push_back(strfmt("Official test scores at B = %lld, macro average over %zu datasets; bold: the best.",
                           static_cast<long long>(ts.budget), ts.datasets.size()));
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

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

Table make_table(const TableSpec& table, const ExperimentSpec& spec, const ExperimentResults& results) {
  Table t = table.kind == "datasets" ? datasets_table(table, results)
            : table.kind == "budgets" ? budgets_table(table, spec, results)
                                      : methods_table(table, results);
  t.name = table.name;
  t.title = table.title;
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
  out << "### " << t.title << "\n\n|";
  for (const auto& h : t.header) out << " " << h << " |";
  out << "\n|";
  for (size_t c = 0; c < t.header.size(); ++c) out << (c == 0 ? "---|" : "---:|");
  out << "\n";
  for (size_t r = 0; r < t.rows.size(); ++r) {
    out << "|";
    for (size_t c = 0; c < t.rows[r].size(); ++c)
      out << " " << (t.bold[r][c] ? "**" + t.rows[r][c] + "**" : t.rows[r][c]) << " |";
    out << "\n";
  }
  for (const auto& n : t.notes) out << "\n" << n << "\n";
  return out.str();
}

std::string to_csv(const Table& t) {
  std::ostringstream out;
  for (size_t c = 0; c < t.header.size(); ++c) out << (c ? "," : "") << csv_field(t.header[c]);
  out << "\n";
  for (const auto& row : t.rows) {
    for (size_t c = 0; c < row.size(); ++c) out << (c ? "," : "") << csv_field(row[c]);
    out << "\n";
  }
  return out.str();
}

}  // namespace kvs::experiment
