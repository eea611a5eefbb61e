// Where a table's results come from: each result names the builds of its splits (the run's where
// a split records none, as before schema version 3); a table whose results come from one clean
// build gets no note, one from several builds or a dirty tree names them with their counts; the
// report puts the note under the table.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "experiment/provenance.h"
#include "experiment/report.h"
#include "experiment/results.h"
#include "experiment/results_fixtures.h"
#include "experiment/spec_fixtures.h"
#include "store/store.h"

namespace kvs::experiment {
namespace {

class Provenance : public ::testing::Test {
 protected:
  void SetUp() override {
    spec_ = load_spec(test_support::write_text(dir_, "mini.json", test_support::kSpecJson));
    store::Store db(db_path());
    db.find_or_create_experiment(spec_.name, spec_.identity_json);
    // t2 (budgets 32 and 64, PyramidKV and Global, both datasets): the splits of every run name
    // no build (the run's: abc123) but Global's at 64 on hotpotqa, resumed on a dirty tree.
    for (const char* d : {"qasper", "hotpotqa"})
      for (const char* m : {"PyramidKV", "Global"})
        for (const int64_t b : {32, 64}) {
          const bool resumed =
              std::string(d) == "hotpotqa" && std::string(m) == "Global" && b == 64;
          test_support::record(db, spec_, d, m, b, 40, {1}, {1, 0},
                               resumed ? "fedcba987654-dirty-0123456789ab" : "");
        }
  }
  std::string db_path() const { return dir_.file("results.sqlite"); }

  kvs::test::ScratchDir dir_;
  ExperimentSpec spec_;
};

TEST_F(Provenance, NamesSeveralBuildsAndDirtyTreesAndNothingElse) {
  const ExperimentResults results(spec_, db_path());
  EXPECT_EQ(results.get("qasper", "Global", 64)->binaries, (std::set<std::string>{"abc123"}));
  EXPECT_EQ(results.get("hotpotqa", "Global", 64)->binaries,
            (std::set<std::string>{"fedcba987654-dirty-0123456789ab"}));
  EXPECT_EQ(results.commits(),
            (std::set<std::string>{"abc123", "fedcba987654-dirty-0123456789ab"}));

  const auto note = provenance_note(spec_.tables.at(1), spec_, results);  // t2
  ASSERT_TRUE(note);
  EXPECT_NE(note->find("computed by 2 kvsearch binaries: abc123 (7 results), "
                       "fedcba987654-dirty-0123456789ab (1 result, a dirty tree)"),
            std::string::npos)
      << *note;
  EXPECT_NE(note->find("no commit rebuilds it"), std::string::npos) << *note;

  // t1 and t3 are at B = 64 with Segments, which never ran: still the dirty result.
  TableSpec qasper_only = spec_.tables.at(1);
  qasper_only.datasets = {"qasper"};
  EXPECT_FALSE(provenance_note(qasper_only, spec_, results));  // one clean build

  ReportRequest request;
  request.db_path = db_path();
  request.out_dir = dir_.file("report");
  write_report(spec_, request);
  std::stringstream t2;
  t2 << std::ifstream(dir_.file("report") + "/t2.md").rdbuf();
  EXPECT_NE(t2.str().find("Provenance: the results of this table were computed by 2"),
            std::string::npos)
      << t2.str();
}

}  // namespace
}  // namespace kvs::experiment
