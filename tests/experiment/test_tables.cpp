#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "experiment/results.h"
#include "experiment/results_fixtures.h"
#include "experiment/spec_fixtures.h"
#include "experiment/tables.h"
#include "store/store.h"

namespace kvs::experiment {
namespace {

using test_support::record;

class ReportTables : public ::testing::Test {
 protected:
  void SetUp() override {
    spec_ = load_spec(test_support::write_text(dir_, "mini.json", test_support::kSpecJson));
    store::Store db(db_path());
    db.find_or_create_experiment(spec_.name, spec_.identity_json);
    // qasper: Global best; hotpotqa: PyramidKV and Global tie; Segments only on qasper.
    record(db, spec_, "qasper", "PyramidKV", 64, 20);
    record(db, spec_, "qasper", "Global", 64, 30);
    record(db, spec_, "qasper", "Segments", 64, 25);
    record(db, spec_, "hotpotqa", "PyramidKV", 64, 40);
    record(db, spec_, "hotpotqa", "Global", 64, 40);
    record(db, spec_, "qasper", "PyramidKV", 32, 10);
    record(db, spec_, "qasper", "Global", 32, 12);
    record(db, spec_, "hotpotqa", "PyramidKV", 32, 30);
    record(db, spec_, "hotpotqa", "Global", 32, -1);  // no test replay yet
  }
  std::string db_path() const { return dir_.file("results.sqlite"); }
  const TableSpec& table(const std::string& name) const {
    for (const auto& t : spec_.tables)
      if (t.name == name) return t;
    throw std::runtime_error("no table " + name);
  }

  kvs::test::ScratchDir dir_;
  ExperimentSpec spec_;
};

TEST_F(ReportTables, DatasetsTableMarksTheRowBestAndCountsWins) {
  const ExperimentResults results(spec_, db_path());
  const Table t = make_table(table("t1"), spec_, results);
  ASSERT_EQ(t.header, (std::vector<std::string>{"Dataset", "PyramidKV", "Global", "Segments", "best",
                                                "Global (paper)"}));
  EXPECT_EQ(t.rows[0], (std::vector<std::string>{"qasper", "20.00", "30.00", "25.00", "Global", ""}));
  EXPECT_TRUE(t.bold[0][2]);
  EXPECT_FALSE(t.bold[0][1]);
  EXPECT_EQ(t.rows[1][3], "-");  // Segments never ran on hotpotqa
  EXPECT_EQ(t.rows[1][4], "PyramidKV; Global");
  EXPECT_EQ(t.rows[2], (std::vector<std::string>{"Macro average", "30.00", "35.00", "-", "Global", "34.44"}));
  EXPECT_EQ(t.rows[3][1], "1/2");
  EXPECT_EQ(t.rows[3][2], "2/2");
  EXPECT_EQ(t.rows[3][3], "0/2");
  const std::string md = to_markdown(t);
  EXPECT_NE(md.find("| qasper | 20.00 | **30.00** | 25.00 |"), std::string::npos) << md;
  EXPECT_NE(to_csv(t).find("best,Global (paper)\nqasper,20.00,30.00,25.00,Global,\n"), std::string::npos);
}

// Methods as rows, budgets as columns, the column's best in bold; the gains in a table of their
// own, without the baseline's row.
TEST_F(ReportTables, BudgetsTableHasMethodRowsAndBudgetColumnsAndGainsApart) {
  const ExperimentResults results(spec_, db_path());
  const Table t = make_table(table("t2"), spec_, results);
  ASSERT_EQ(t.header, (std::vector<std::string>{"Method", "B = 32", "B = 64"}));
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0], (std::vector<std::string>{"PyramidKV", "20.00", "30.00"}));
  EXPECT_EQ(t.rows[1], (std::vector<std::string>{"Global", "-", "35.00"}));  // a replay missing
  EXPECT_TRUE(t.bold[0][1]);   // B = 32: PyramidKV, the only score
  EXPECT_FALSE(t.bold[0][2]);  // B = 64: Global's 35 beats 30
  EXPECT_TRUE(t.bold[1][2]);
  for (const auto& h : t.header) EXPECT_EQ(h.find("gain"), std::string::npos) << h;

  const Table gains = gains_table(table("t2"), spec_, results);
  EXPECT_EQ(gains.name, "t2_gains");
  ASSERT_EQ(gains.header, (std::vector<std::string>{"Method", "B = 32", "B = 64"}));
  ASSERT_EQ(gains.rows.size(), 1u);  // PyramidKV is the baseline
  EXPECT_EQ(gains.rows[0], (std::vector<std::string>{"Global", "-", "+5.00"}));
}

// The spec writes a budgets table's paper numbers as {budget: {column: number}}: they land in the
// method's row, under "B = <budget> (paper)", the gains in the gains table.
TEST_F(ReportTables, BudgetsTableTurnsThePaperNumbersAround) {
  auto json = nlohmann::json::parse(test_support::kSpecJson);
  json["tables"][1]["reference"] = {{"64", {{"Global", 34.44}, {"Global gain", 1.13}}},
                                    {"32", {{"PyramidKV", 9.5}}}};
  const ExperimentSpec spec = load_spec(test_support::write_text(dir_, "ref.json", json.dump()));
  const ExperimentResults results(spec, db_path());
  const Table t = make_table(spec.tables.at(1), spec, results);
  ASSERT_EQ(t.header, (std::vector<std::string>{"Method", "B = 32", "B = 64", "B = 32 (paper)",
                                                "B = 64 (paper)"}));
  EXPECT_EQ(t.rows[0], (std::vector<std::string>{"PyramidKV", "20.00", "30.00", "9.5", ""}));
  EXPECT_EQ(t.rows[1], (std::vector<std::string>{"Global", "-", "35.00", "", "34.44"}));
  const Table gains = gains_table(spec.tables.at(1), spec, results);
  ASSERT_EQ(gains.header,
            (std::vector<std::string>{"Method", "B = 32", "B = 64", "B = 64 (paper)"}));
  EXPECT_EQ(gains.rows[0], (std::vector<std::string>{"Global", "-", "+5.00", "1.13"}));
}

TEST_F(ReportTables, MethodsTableCountsDatasetsBetterThanTheBaseline) {
  const ExperimentResults results(spec_, db_path());
  const Table t = make_table(table("t3"), spec_, results);
  ASSERT_EQ(t.header.size(), 5u);
  EXPECT_EQ(t.header[3], "Macro average (paper)");
  EXPECT_EQ(t.rows[0], (std::vector<std::string>{"PyramidKV", "30.00", "-", "", ""}));
  EXPECT_EQ(t.rows[1], (std::vector<std::string>{"Global", "35.00", "1/2", "34.57", "13"}));
  EXPECT_EQ(t.rows[2][2], "-");  // incomplete: Segments lacks hotpotqa
}

TEST_F(ReportTables, ResultsKnowTheRunsAndRefuseAnotherExperiment) {
  const ExperimentResults results(spec_, db_path());
  EXPECT_EQ(results.commits(), (std::set<std::string>{"abc123"}));
  EXPECT_EQ(results.get("qasper", "Global", 64)->lambda2, (std::vector<double>{-0.15, 0.2}));
  EXPECT_FALSE(results.get("hotpotqa", "Segments", 64));
  ExperimentSpec other = spec_;
  other.name = "other";
  EXPECT_THROW({ const ExperimentResults refused(other, db_path()); }, Error);
}

// The full cache is one run, shown at every budget; the noise table gives each dataset's
// questions, the largest per-question SD over its methods and the standard errors.
TEST(ReportNoise, FullCacheAtEveryBudgetAndTheNoiseFloor) {
  kvs::test::ScratchDir dir;
  auto json = nlohmann::json::parse(test_support::kSpecJson);
  json["methods"].push_back({{"name", "Full cache"}, {"profile", "full"}});
  json["tables"].push_back({{"name", "t4"}, {"kind", "budgets"}, {"methods", {"Full cache", "PyramidKV"}},
                            {"baseline", "Full cache"}, {"datasets", {"qasper"}}});
  const ExperimentSpec spec = load_spec(test_support::write_text(dir, "mini.json", json.dump()));
  const std::string db_path = dir.file("results.sqlite");
  {
    store::Store db(db_path);
    db.find_or_create_experiment(spec.name, spec.identity_json);
    // Full cache: test 1, 1, 1, 0 (SD 50 points), dev 1, 0 (SD 70.71).
    record(db, spec, "qasper", "Full cache", kFullCacheBudget, 75, {1, 0}, {1, 1, 1, 0});
    record(db, spec, "qasper", "PyramidKV", 32, 25, {1, 1}, {0, 0, 0, 1});
    record(db, spec, "qasper", "PyramidKV", 64, 50, {1, 1}, {1, 1, 0, 0});  // SD 57.74, the largest
  }
  const ExperimentResults results(spec, db_path);
  EXPECT_EQ(results.test("qasper", "Full cache", 32), 75);
  EXPECT_EQ(results.test("qasper", "Full cache", 64), 75);
  EXPECT_EQ(results.get("qasper", "Full cache", 64)->test_questions, (std::vector<double>{1, 1, 1, 0}));
  const Table budgets = make_table(spec.tables.at(3), spec, results);
  EXPECT_EQ(budgets.rows.at(0), (std::vector<std::string>{"Full cache", "75.00", "75.00"}));
  EXPECT_EQ(budgets.rows.at(1), (std::vector<std::string>{"PyramidKV", "25.00", "50.00"}));
  const Table gains = gains_table(spec.tables.at(3), spec, results);
  ASSERT_EQ(gains.rows.size(), 1u);
  EXPECT_EQ(gains.rows.at(0), (std::vector<std::string>{"PyramidKV", "-50.00", "-25.00"}));

  const Table noise = noise_table(spec, results);
  EXPECT_EQ(noise.header.at(3), "Per-question SD (test)");
  EXPECT_EQ(noise.rows.at(0), (std::vector<std::string>{"qasper", "2", "4", "57.74", "28.87", "57.74", "50.00"}));
  EXPECT_EQ(noise.rows.at(1), (std::vector<std::string>{"hotpotqa", "0", "0", "-", "-", "-", "-"}));
}

}  // namespace
}  // namespace kvs::experiment
