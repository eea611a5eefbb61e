// The spec's figures drawn natively as SVG from a small database: budgets (a line per method
// through its test scores, a band where per-question scores give an interval), profiles (lambda1
// and lambda2 per layer in two panels, the points at the recorded values) and trajectory (the dev
// best so far as a line, each evaluation's dev score and the accepted states' test replays as
// markers alone). The report writes them as <name>.svg, links them, and writes no PNG.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "experiment/cell_estimates.h"
#include "experiment/report.h"
#include "experiment/results.h"
#include "experiment/results_fixtures.h"
#include "experiment/spec_figures.h"
#include "experiment/spec_fixtures.h"
#include "store/store.h"

namespace kvs::experiment {
namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(SpecFigures, BudgetsProfilesAndTrajectoryAsSvg) {
  kvs::test::ScratchDir dir;
  auto json = nlohmann::json::parse(test_support::kSpecJson);
  json["figures"] = nlohmann::json::array({{{"name", "fig_budgets"},
                                            {"kind", "budgets"},
                                            {"title", "Budgets"},
                                            {"dataset", "qasper"},
                                            {"methods", {"PyramidKV", "Global"}}},
                                           {{"name", "fig_profiles"},
                                            {"kind", "profiles"},
                                            {"title", "Profiles"},
                                            {"dataset", "qasper"},
                                            {"budget", 64},
                                            {"methods", {"Global"}}},
                                           {{"name", "fig_trajectory"},
                                            {"kind", "trajectory"},
                                            {"title", "Trajectory"},
                                            {"dataset", "qasper"},
                                            {"budget", 64},
                                            {"methods", {"Global"}}}});
  const ExperimentSpec spec = load_spec(test_support::write_text(dir, "fig.json", json.dump()));
  const std::string db_path = dir.file("results.sqlite");
  {
    store::Store db(db_path);
    db.find_or_create_experiment(spec.name, spec.identity_json);
    // PyramidKV with per-question scores (an interval), Global with its official score alone.
    test_support::record(db, spec, "qasper", "PyramidKV", 32, 25, {1}, {0, 0, 1, 0});
    test_support::record(db, spec, "qasper", "PyramidKV", 64, 50, {1}, {1, 0, 1, 0});
    test_support::record(db, spec, "qasper", "Global", 64, 30);  // lambdas {0, 0.1}, {-0.15, 0.2}
  }
  const ExperimentResults results(spec, db_path);
  const ExperimentScores scores(spec, db_path);
  const CellEstimates estimates(scores, {1, 200});
  const std::vector<SvgFigure> figures = spec_figures(spec, results, estimates);
  ASSERT_EQ(figures.size(), 3u);

  const std::string& budgets = figures[0].svg;
  EXPECT_EQ(figures[0].name, "fig_budgets");
  EXPECT_EQ(count(budgets, "<polyline"), 1u);  // PyramidKV's two budgets; Global: a marker alone
  EXPECT_EQ(count(budgets, "fill-opacity=\"0.20\""), 1u);  // PyramidKV's band alone
  EXPECT_NE(budgets.find(">Global</text>"), std::string::npos);

  const std::string& profiles = figures[1].svg;
  EXPECT_EQ(count(profiles, "<svg "), 3u);  // the figure and its two panels
  EXPECT_NE(profiles.find(">lambda1 (dispersion)</text>"), std::string::npos);
  EXPECT_NE(profiles.find(">lambda2 (correlation)</text>"), std::string::npos);
  EXPECT_EQ(count(profiles, "<polyline"), 2u);  // Global's two layers in each panel
  // Each panel's own scale: lambda1 in [0, 0.1] by 0.02, lambda2 in [-0.15, 0.2] by 0.1.
  for (const char* tick : {">0.08<", ">-0.2<", ">0.2<"})
    EXPECT_NE(profiles.find(tick), std::string::npos) << tick;
  EXPECT_EQ(profiles.find(">0.3<"), std::string::npos);

  const std::string& trajectory = figures[2].svg;
  EXPECT_EQ(count(trajectory, "<polyline"), 0u);  // one evaluation: the best-so-far line is a point
  EXPECT_NE(trajectory.find(">Global: dev best so far</text>"), std::string::npos);
  EXPECT_NE(trajectory.find(">Global: test replay of accepted states</text>"), std::string::npos);

  ReportRequest request;
  request.db_path = db_path;
  request.out_dir = dir.file("report");
  write_report(spec, request);
  std::stringstream index;
  index << std::ifstream(dir.file("report") + "/README.md").rdbuf();
  for (const char* name : {"fig_budgets", "fig_profiles", "fig_trajectory"}) {
    EXPECT_TRUE(std::filesystem::exists(dir.file("report") + "/" + name + ".svg")) << name;
    EXPECT_FALSE(std::filesystem::exists(dir.file("report") + "/" + name + ".png")) << name;
    EXPECT_NE(index.str().find(std::string("(") + name + ".svg)"), std::string::npos) << name;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("report") + "/figures.json"));
}

}  // namespace
}  // namespace kvs::experiment
