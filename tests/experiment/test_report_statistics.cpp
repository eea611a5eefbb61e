// The report's statistics from a small database: interval cells equal paired_stats' functions on
// the same per-question scores, the Holm table lists exactly the comparisons whose adjusted p is
// at most 0.05, the report is byte-identical for one seed and not for another, the SVG figures
// are written, and a bad resample count is refused naming the option.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>

#include "core/error.h"
#include "core/strfmt.h"
#include "experiment/cell_estimates.h"
#include "experiment/comparison.h"
#include "experiment/experiment_scores.h"
#include "experiment/findings.h"
#include "experiment/report.h"
#include "experiment/report_figures.h"
#include "experiment/results.h"
#include "experiment/results_fixtures.h"
#include "experiment/spec_fixtures.h"
#include "experiment/table_comparisons.h"
#include "experiment/tables.h"
#include "store/store.h"

namespace kvs::experiment {
namespace {

constexpr int kQuestions = 24;

// Per-question scores in [0, 1]: `pick(i)` for question i.
template <typename F>
std::vector<double> scores(F pick) {
  std::vector<double> out;
  for (int i = 0; i < kQuestions; ++i) out.push_back(pick(i));
  return out;
}

std::vector<double> points(const std::vector<double>& s) {
  std::vector<double> out;
  for (double v : s) out.push_back(100 * v);
  return out;
}

double mean_points(const std::vector<double>& s) {
  double sum = 0;
  for (double v : s) sum += v;
  return 100 * sum / static_cast<double>(s.size());
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// On qasper Global beats PyramidKV clearly (16 wins, no loss at B = 64; 8 wins at B = 32) and
// Segments; on hotpotqa the methods trade questions at B = 64 (7 against 6: no difference), and at
// B = 32 Global wins 6 questions and loses none: p = 1/32 alone, but not after Holm's correction.
// Segments never ran on hotpotqa.
class ReportStatistics : public ::testing::Test {
 protected:
  void SetUp() override {
    spec_ = load_spec(test_support::write_text(dir_, "mini.json", test_support::kSpecJson));
    // A question scores hi(i) where a pattern says 1, lo(i) where it says 0: every score differs
    // from the others (so the intervals move with the seed), and two methods tie exactly where
    // their patterns agree.
    const auto level = [](auto pattern) {
      return scores([pattern](int i) { return pattern(i) ? 0.55 + 0.017 * i : 0.013 * i; });
    };
    scores_[{"qasper", "PyramidKV", 64}] = level([](int i) { return i < 6; });
    scores_[{"qasper", "Global", 64}] = level([](int i) { return i < 22; });
    scores_[{"qasper", "Segments", 64}] = level([](int i) { return i < 4 || (i >= 6 && i < 10); });
    scores_[{"qasper", "PyramidKV", 32}] = level([](int i) { return i < 4; });
    scores_[{"qasper", "Global", 32}] = level([](int i) { return i < 12; });
    scores_[{"hotpotqa", "PyramidKV", 64}] = level([](int i) { return i % 2 == 0; });
    scores_[{"hotpotqa", "Global", 64}] =
        level([](int i) { return i < 12 ? i % 2 == 1 : i % 2 == 0; });
    scores_[{"hotpotqa", "Global", 64}][23] = 0.5;  // PyramidKV: 0.299
    scores_[{"hotpotqa", "PyramidKV", 32}] = level([](int i) { return i % 4 == 0; });
    scores_[{"hotpotqa", "Global", 32}] = level([](int i) { return i % 4 == 0 || i < 9; });
    store::Store db(db_path());
    db.find_or_create_experiment(spec_.name, spec_.identity_json);
    for (const auto& [key, s] : scores_) {
      const auto& [dataset, method, budget] = key;
      test_support::record(db, spec_, dataset, method, budget, mean_points(s), {1, 0}, s);
    }
  }

  std::string db_path() const { return dir_.file("results.sqlite"); }
  const TableSpec& table(const std::string& name) const {
    for (const auto& t : spec_.tables)
      if (t.name == name) return t;
    throw std::runtime_error("no table " + name);
  }
  std::vector<double> points_of(const std::string& d, const std::string& m, int64_t b) const {
    return points(scores_.at({d, m, b}));
  }
  ReportRequest request(const std::string& out, uint64_t seed) const {
    ReportRequest r;
    r.db_path = db_path();
    r.out_dir = dir_.file(out);
    r.bootstrap = {seed, 500};
    return r;
  }

  kvs::test::ScratchDir dir_;
  ExperimentSpec spec_;
  std::map<std::tuple<std::string, std::string, int64_t>, std::vector<double>> scores_;
  const Bootstrap bootstrap_{7, 2000};
};

// The cell text "value" with interval "[low, high]", as paired_stats computes them.
void expect_cell(const Table& t, size_t r, size_t c, const Estimate& e) {
  SCOPED_TRACE(t.name + " row " + std::to_string(r) + " column " + std::to_string(c));
  ASSERT_LT(r, t.intervals.size());
  ASSERT_LT(c, t.intervals[r].size());
  ASSERT_TRUE(t.intervals[r][c]);
  EXPECT_EQ(t.rows[r][c], strfmt("%.2f", e.value));
  EXPECT_EQ(t.intervals[r][c]->low, strfmt("%.2f", e.low));
  EXPECT_EQ(t.intervals[r][c]->high, strfmt("%.2f", e.high));
  EXPECT_LT(e.low, e.high);  // a real interval, not a degenerate one the test would pass on
}

TEST_F(ReportStatistics, IntervalCellsEqualThePairedStatistics) {
  const ExperimentResults results(spec_, db_path());
  const ExperimentScores scores(spec_, db_path());
  const CellEstimates estimates(scores, bootstrap_);

  const Table t1 = make_table(table("t1"), spec_, results, &estimates);
  const std::vector<std::string> methods = {"PyramidKV", "Global", "Segments"};
  for (size_t m = 0; m < methods.size(); ++m)
    expect_cell(t1, 0, m + 1, mean_with_interval(points_of("qasper", methods[m], 64), bootstrap_));
  expect_cell(t1, 1, 1, mean_with_interval(points_of("hotpotqa", "PyramidKV", 64), bootstrap_));
  EXPECT_EQ(t1.rows[1][3], "-");  // Segments never ran on hotpotqa: no score, no interval
  EXPECT_FALSE(t1.intervals[1][3]);
  for (size_t m = 0; m < 2; ++m)
    expect_cell(
        t1, 2, m + 1,
        macro_average({points_of("qasper", methods[m], 64), points_of("hotpotqa", methods[m], 64)},
                      bootstrap_));
  EXPECT_EQ(t1.rows[2][4], "Global");  // the macro row's best, from the estimates
  const Estimate global = mean_with_interval(points_of("qasper", "Global", 64), bootstrap_);
  const std::string md = to_markdown(t1);
  EXPECT_NE(md.find(strfmt("| **%.2f [%.2f, %.2f]** |", global.value, global.low, global.high)),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("2000 resamples, seed 7"), std::string::npos) << md;
  const std::string csv = to_csv(t1);
  EXPECT_NE(csv.find("Global (paper),PyramidKV low,PyramidKV high,Global low,Global high,"
                     "Segments low,Segments high\n"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find(strfmt(",%.2f,%.2f,", global.low, global.high)), std::string::npos) << csv;

  const Table t2 = make_table(table("t2"), spec_, results, &estimates);  // macro per budget
  const std::vector<int64_t> budgets = {32, 64};
  for (size_t b = 0; b < budgets.size(); ++b)
    for (size_t m = 0; m < 2; ++m)  // a row per method, a column per budget
      expect_cell(t2, m, b + 1,
                  macro_average({points_of("qasper", methods[m], budgets[b]),
                                 points_of("hotpotqa", methods[m], budgets[b])},
                                bootstrap_));
  const Table gains = gains_table(table("t2"), spec_, results, &estimates);
  ASSERT_EQ(gains.rows.size(), 1u);  // Global's; their intervals: in the paired table
  EXPECT_EQ(to_csv(gains).find(" low"), std::string::npos);

  const Table t3 = make_table(table("t3"), spec_, results, &estimates);
  expect_cell(
      t3, 1, 1,
      macro_average({points_of("qasper", "Global", 64), points_of("hotpotqa", "Global", 64)},
                    bootstrap_));
  EXPECT_EQ(t3.rows[1][2], "2/2");  // better than PyramidKV on both (hotpotqa: by question 23)

  // Without estimates the tables are what they were: official scores, no intervals.
  const Table plain = make_table(table("t1"), spec_, results);
  EXPECT_EQ(plain.rows[0][2], strfmt("%.2f", mean_points(scores_.at({"qasper", "Global", 64}))));
  EXPECT_EQ(to_csv(plain).find(" low"), std::string::npos);
}

TEST_F(ReportStatistics, HolmTableListsExactlyTheSurvivingComparisons) {
  const ExperimentScores scores(spec_, db_path());
  using Key = std::tuple<std::string, int64_t, std::string, std::string>;
  const std::map<std::string, std::set<Key>> expected_survivors = {
      {"t1", {{"qasper", 64, "PyramidKV", "Global"}, {"qasper", 64, "Global", "Segments"}}},
      {"t2", {{"qasper", 32, "PyramidKV", "Global"}, {"qasper", 64, "PyramidKV", "Global"}}}};
  for (const auto& [name, survivors] : expected_survivors) {
    SCOPED_TRACE(name);
    const auto comparisons = compare_table_methods(table(name), spec_, scores, bootstrap_);
    ASSERT_EQ(comparisons.size(), 4u);  // t1: 3 pairs on qasper, 1 on hotpotqa; t2: 2 x 2 x 1
    std::vector<double> p;
    for (const TableComparison& c : comparisons) {
      const PairedComparison direct = compare_paired(
          points_of(c.dataset, c.a, c.budget), points_of(c.dataset, c.b, c.budget), bootstrap_);
      EXPECT_EQ(c.paired.p, direct.p);
      EXPECT_EQ(c.paired.wins, direct.wins);
      EXPECT_EQ(c.paired.losses, direct.losses);
      EXPECT_EQ(c.paired.difference.value, direct.difference.value);
      EXPECT_EQ(c.paired.difference.low, direct.difference.low);
      EXPECT_EQ(c.paired.difference.high, direct.difference.high);
      p.push_back(c.paired.p);
    }
    const HolmResult holm_result = holm(p, 0.05);
    std::set<Key> surviving;
    for (size_t i = 0; i < comparisons.size(); ++i) {
      const TableComparison& c = comparisons[i];
      EXPECT_EQ(c.p_holm, holm_result.adjusted[i]);
      EXPECT_EQ(c.survives, c.p_holm <= 0.05);
      if (c.survives) surviving.insert({c.dataset, c.budget, c.a, c.b});
    }
    EXPECT_EQ(surviving, survivors);

    const Table all = comparisons_table(table(name), comparisons, bootstrap_);
    EXPECT_EQ(all.name, name + "_paired");
    EXPECT_EQ(all.rows.size(), comparisons.size());
    const Table significant = surviving_table(table(name), comparisons, bootstrap_);
    EXPECT_EQ(significant.name, name + "_significant");
    std::set<Key> listed;
    for (const auto& row : significant.rows)
      listed.insert({row[0], std::stoll(row[1]), row[2], row[3]});
    EXPECT_EQ(listed, survivors);
    EXPECT_EQ(significant.rows.size(), survivors.size());
    for (const auto& row : significant.rows) EXPECT_LE(std::stod(row.back()), 0.05);
    const std::string md = to_markdown(significant);
    EXPECT_NE(md.find("| Dataset | Budget | A | B |"), std::string::npos) << md;

    // Only the comparisons that do not survive: the table says none does.
    std::vector<TableComparison> losers;
    for (const TableComparison& c : comparisons)
      if (!c.survives) losers.push_back(c);
    const Table none = surviving_table(table(name), losers, bootstrap_);
    EXPECT_TRUE(none.rows.empty());
    EXPECT_NE(to_markdown(none).find(
                  "None of the table's 2 paired comparisons between two methods survives"),
              std::string::npos)
        << to_markdown(none);
  }
  // The qasper comparison at B = 64 as `kvsearch compare` would print it: 16 wins, no loss; the
  // hotpotqa one at B = 32 is below 0.05 before the correction only.
  const auto t2 = compare_table_methods(table("t2"), spec_, scores, bootstrap_);
  const TableComparison& h32 = t2.at(1);
  EXPECT_EQ(h32.dataset, "hotpotqa");
  EXPECT_DOUBLE_EQ(h32.paired.p, 1.0 / 32);
  EXPECT_GT(h32.p_holm, 0.05);
  const TableComparison& q64 = t2.at(2);
  EXPECT_EQ(std::make_tuple(q64.dataset, q64.budget),
            std::make_tuple(std::string("qasper"), int64_t{64}));
  EXPECT_EQ(std::make_tuple(q64.paired.wins, q64.paired.losses, q64.paired.ties),
            std::make_tuple(int64_t{0}, int64_t{16}, int64_t{8}));  // A = PyramidKV loses
  EXPECT_DOUBLE_EQ(q64.paired.p, std::ldexp(1.0, -15));
}

TEST_F(ReportStatistics, ReportIsByteIdenticalForOneSeedAndWritesItsFigures) {
  const ReportOutcome first = write_report(spec_, request("a", 3));
  const ReportOutcome again = write_report(spec_, request("b", 3));
  const ReportOutcome other = write_report(spec_, request("c", 4));
  ASSERT_EQ(first.files.size(), again.files.size());
  std::set<std::string> names;
  for (const std::string& f : first.files) names.insert(std::filesystem::path(f).filename());
  for (const char* want :
       {"README.md", "t1.md", "t1.csv", "t1_paired.md", "t1_paired.csv", "t1_significant.md",
        "t2_significant.csv", "t3_paired.md", "noise.md", "t1_budgets.svg", "t1_heatmap.svg",
        "t2_budgets.svg", "t2_heatmap.svg", "t3_budgets.svg"})
    EXPECT_TRUE(names.count(want)) << want;
  bool some_differ = false;
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const std::string a = read(dir_.file("a") + "/" + name);
    EXPECT_FALSE(a.empty());
    EXPECT_EQ(a, read(dir_.file("b") + "/" + name));
    some_differ = some_differ || a != read(dir_.file("c") + "/" + name);
  }
  EXPECT_TRUE(some_differ);
  EXPECT_NE(read(dir_.file("a") + "/t1.md"), read(dir_.file("c") + "/t1.md"));
  EXPECT_EQ(other.files.size(), first.files.size());

  const std::string index = read(dir_.file("a") + "/README.md");
  EXPECT_NE(index.find("500 resamples, seed 3 (--resamples, --seed)"), std::string::npos) << index;
  EXPECT_NE(index.find("Differences between t1's methods that survive Holm's correction"),
            std::string::npos);
  EXPECT_NE(index.find("![t2: test score against budget"), std::string::npos) << index;

  // t2's figures: a band and a line per method; the heat map's cells are the macro averages.
  const std::string band = read(dir_.file("a") + "/t2_budgets.svg");
  EXPECT_EQ(band.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_EQ(count(band, "fill-opacity=\"0.20\""), 2u);  // the bands
  EXPECT_EQ(count(band, "<polyline"), 2u);
  EXPECT_EQ(count(band, "<circle"), 2u + 1u);        // PyramidKV's points and legend: circles
  EXPECT_EQ(count(band, "<rect x="), 2u + 1u + 1u);  // Global's: squares; and the frame
  EXPECT_NE(band.find(">PyramidKV</text>"), std::string::npos);
  const std::string heat = read(dir_.file("a") + "/t2_heatmap.svg");
  EXPECT_EQ(count(heat, "<rect x="), 4u);  // 2 methods x 2 budgets
  for (const int64_t b : {32, 64}) {
    const Estimate e = macro_average(
        {points_of("qasper", "Global", b), points_of("hotpotqa", "Global", b)}, {3, 500});
    EXPECT_NE(heat.find(strfmt(">%.2f</text>", e.value)), std::string::npos) << heat;
  }
  // t1 at every budget of the spec: Segments only at 64, so one point and no line to draw to.
  const std::string t1_band = read(dir_.file("a") + "/t1_budgets.svg");
  EXPECT_EQ(count(t1_band, "<circle"), 2u + 1u);   // PyramidKV's two points and its legend
  EXPECT_EQ(count(t1_band, "<polygon"), 2u + 1u);  // two bands; Segments: its legend's triangle
  EXPECT_EQ(count(t1_band, "stroke-width=\"6\""), 0u);  // Segments lacks hotpotqa: no macro
}

TEST_F(ReportStatistics, RefusesABadResampleCountNamingTheOption) {
  ReportRequest r = request("bad", 0);
  r.bootstrap.resamples = 0;
  try {
    write_report(spec_, r);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--resamples"), std::string::npos) << e.what();
  }
}

// With the full cache among a table's methods: the paired table lists the differences between
// methods first; the significance table holds those alone; the comparisons against the full cache
// go to a short table of their own; the findings name the largest surviving difference per budget,
// the better method first, with its interval, W/L/T and p after Holm. On qasper (24 questions):
// the full cache scores every question, PyramidKV 6 (B = 64) and 4 (B = 32), Global 22 and 12.
TEST(ReportFullCache, MethodDifferencesFirstTheFullCacheApartAndFindings) {
  kvs::test::ScratchDir dir;
  auto json = nlohmann::json::parse(test_support::kSpecJson);
  json["methods"].push_back({{"name", "Full cache"}, {"profile", "full"}});
  json["tables"] = nlohmann::json::array({{{"name", "t4"},
                                           {"kind", "budgets"},
                                           {"methods", {"Full cache", "PyramidKV", "Global"}},
                                           {"baseline", "PyramidKV"},
                                           {"datasets", {"qasper"}}}});
  const ExperimentSpec spec = load_spec(test_support::write_text(dir, "full.json", json.dump()));
  const auto level = [](int solved) {
    return scores([solved](int i) { return i < solved ? 0.55 + 0.017 * i : 0.013 * i; });
  };
  const std::map<std::pair<std::string, int64_t>, std::vector<double>> runs = {
      {{"Full cache", kFullCacheBudget}, level(kQuestions)},
      {{"PyramidKV", 64}, level(6)},
      {{"Global", 64}, level(22)},
      {{"PyramidKV", 32}, level(4)},
      {{"Global", 32}, level(12)}};
  const std::string db_path = dir.file("results.sqlite");
  {
    store::Store db(db_path);
    db.find_or_create_experiment(spec.name, spec.identity_json);
    for (const auto& [key, s] : runs)
      test_support::record(db, spec, "qasper", key.first, key.second, mean_points(s), {1}, s);
  }
  const Bootstrap bootstrap{7, 2000};
  const TableSpec& t4 = spec.tables.at(0);
  const auto comparisons =
      compare_table_methods(t4, spec, ExperimentScores(spec, db_path), bootstrap);
  ASSERT_EQ(comparisons.size(), 6u);

  const Table all = comparisons_table(t4, comparisons, bootstrap);
  ASSERT_EQ(all.rows.size(), 6u);
  for (size_t r = 0; r < all.rows.size(); ++r)  // two rows between methods, then the full cache
    EXPECT_EQ(all.rows[r][2] == "Full cache", r >= 2) << r;

  const Table significant = surviving_table(t4, comparisons, bootstrap);
  ASSERT_EQ(significant.rows.size(), 2u);  // PyramidKV vs Global at 32 (p 2^-7) and 64 (2^-15)
  for (const auto& row : significant.rows) {
    EXPECT_EQ(row[2], "PyramidKV");
    EXPECT_EQ(row[3], "Global");
  }

  // At 64 Global solves 22 questions against the full cache's 24: p = 1/2, not significant.
  const auto full = full_cache_table(t4, comparisons);
  ASSERT_TRUE(full);
  EXPECT_EQ(full->name, "t4_full_cache");
  ASSERT_EQ(full->rows.size(), 2u);
  const std::vector<double> cache = points(runs.at({"Full cache", kFullCacheBudget}));
  const PairedComparison global_64 =
      compare_paired(points(runs.at({"Global", 64})), cache, bootstrap);
  EXPECT_EQ(
      full->rows[0],
      (std::vector<std::string>{
          "32", "qasper", strfmt("%.2f", mean_points(runs.at({"Full cache", kFullCacheBudget}))),
          "2", "2 of 2", "-", "-"}));
  EXPECT_EQ(full->rows[1][4], "1 of 2");
  EXPECT_EQ(full->rows[1][5], "Global " + signed_points(global_64.difference.value) + " [" +
                                  signed_points(global_64.difference.low) + ", " +
                                  signed_points(global_64.difference.high) + "]");
  EXPECT_LT(global_64.difference.value, 0);

  const std::string findings = findings_section(t4, comparisons);
  const PairedComparison pyramid_64 = compare_paired(points(runs.at({"PyramidKV", 64})),
                                                     points(runs.at({"Global", 64})), bootstrap);
  double holm_64 = 0;
  for (const TableComparison& c : comparisons)
    if (c.budget == 64 && c.full_cache.empty()) holm_64 = c.p_holm;
  EXPECT_NE(findings.find(strfmt("- **B = 64**: 1 of 1 differences between two methods survive; "
                                 "the largest (each winner once): Global over PyramidKV on qasper: "
                                 "%s [%s, %s] "
                                 "(16/0/8, p Holm %s). Against the full cache: 1 of 2 method "
                                 "results below it, 1 not significant.",
                                 signed_points(-pyramid_64.difference.value).c_str(),
                                 signed_points(-pyramid_64.difference.high).c_str(),
                                 signed_points(-pyramid_64.difference.low).c_str(),
                                 p_text(holm_64).c_str())),
            std::string::npos)
      << findings;
  EXPECT_LT(findings.find("**B = 32**"), findings.find("**B = 64**")) << findings;

  ReportRequest request;
  request.db_path = db_path;
  request.out_dir = dir.file("report");
  request.bootstrap = bootstrap;
  write_report(spec, request);
  const std::string index = read(dir.file("report") + "/README.md");
  EXPECT_NE(index.find(findings), std::string::npos);
  EXPECT_LT(index.find("### Findings: t4"), index.find("| Method | B = 32 | B = 64 |")) << index;
  EXPECT_LT(index.find("Differences between t4's methods"), index.find("against the full cache"))
      << index;
  EXPECT_FALSE(read(dir.file("report") + "/t4_full_cache.md").empty());
  EXPECT_FALSE(read(dir.file("report") + "/t4_gains.csv").empty());
}

}  // namespace
}  // namespace kvs::experiment
