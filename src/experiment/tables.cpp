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

// The mean over the datasets, or nothing when one of them is missing.
Score macro(const ExperimentSpec& spec, const ExperimentResults& results, const std::string& method,
            int64_t budget) {
  double sum = 0;
  for (const auto& d : spec.datasets) {
    const Score s = results.test(d, method, budget);
    if (!s) return std::nullopt;
    sum += *s;
  }
  return sum / static_cast<double>(spec.datasets.size());
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
Table datasets_table(const TableSpec& ts, const ExperimentSpec& spec, const ExperimentResults& results) {
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
  for (const auto& d : spec.datasets) {
    std::vector<Score> scores;
    for (const auto& m : ts.methods) scores.push_back(results.test(d, m, ts.budget));
    scored_row(d, scores, true);
    row_keys.push_back(d);
  }
  std::vector<Score> macros;
  for (const auto& m : ts.methods) macros.push_back(macro(spec, results, m, ts.budget));
  scored_row("Macro average", macros, false);
  row_keys.push_back("macro");
  std::vector<std::string> win_cells = {"Wins (row best, ties count for each)"};
  for (int w : wins) win_cells.push_back(strfmt("%d/%zu", w, spec.datasets.size()));
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
      macros.push_back(macro(spec, results, m, b));
      if (macros.back()) best = std::max(best, *macros.back());
    }
    for (const Score& s : macros) {
      cells.push_back(cell(s));
      bold.push_back(s && std::fabs(*s - best) < 1e-9);
    }
    const Score base = macro(spec, results, ts.baseline, b);
    for (size_t m = 0; m < ts.methods.size(); ++m) {
      if (ts.methods[m] == ts.baseline) continue;
      cells.push_back(signed_cell(macros[m] && base ? Score(*macros[m] - *base) : std::nullopt));
      bold.push_back(false);
    }
    add_row(t, cells, bold);
    row_keys.push_back(std::to_string(b));
  }
  add_reference_columns(t, ts, row_keys, columns);
  t.notes.push_back("Macro average of the official test scores over " + std::to_string(spec.datasets.size()) +
                    " datasets; gains over " + ts.baseline + "; bold: the row's best.");
  return t;
}

// Table 3: one row per method at one budget: macro average and datasets better than the baseline.
Table methods_table(const TableSpec& ts, const ExperimentSpec& spec, const ExperimentResults& results) {
  Table t;
  t.header = {"Method", "Macro average", "Better than " + ts.baseline};
  std::vector<Score> macros;
  double best = -1;
  for (const auto& m : ts.methods) {
    macros.push_back(macro(spec, results, m, ts.budget));
    if (macros.back()) best = std::max(best, *macros.back());
  }
  for (size_t i = 0; i < ts.methods.size(); ++i) {
    const auto& m = ts.methods[i];
    std::string better = "-";
    if (m != ts.baseline) {
      int n = 0;
      bool complete = true;
      for (const auto& d : spec.datasets) {
        const Score s = results.test(d, m, ts.budget), base = results.test(d, ts.baseline, ts.budget);
        if (!s || !base) complete = false;
        else if (*s > *base) ++n;
      }
      if (complete) better = strfmt("%d/%zu", n, spec.datasets.size());
    }
    add_row(t, {m, cell(macros[i]), better}, {false, macros[i] && std::fabs(*macros[i] - best) < 1e-9, false});
  }
  add_reference_columns(t, ts, ts.methods, {"macro", "better"});
  t.notes.push_back(strfmt("Official test scores at B = %lld, macro average over %zu datasets; bold: the best.",
                           static_cast<long long>(ts.budget), spec.datasets.size()));
  return t;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

Table make_table(const TableSpec& table, const ExperimentSpec& spec, const ExperimentResults& results) {
  Table t = table.kind == "datasets" ? datasets_table(table, spec, results)
            : table.kind == "budgets" ? budgets_table(table, spec, results)
                                      : methods_table(table, spec, results);
  t.name = table.name;
  t.title = table.title;
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
