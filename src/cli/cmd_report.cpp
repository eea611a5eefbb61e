// kvsearch report: an experiment's tables and figures in the paper's format from its database,
// with bootstrap intervals and paired comparisons from the recorded per-question scores.
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/command.h"
#include "experiment/plan.h"
#include "experiment/report.h"
#include "experiment/spec.h"

namespace {

void setup_report(CLI::App& parent) {
  auto* cmd = parent.add_subcommand(
      "report",
      "Write an experiment's tables (Markdown, CSV) with 95% intervals, paired comparisons (sign "
      "test, Holm), findings and figures (SVG)");
  auto spec_path = std::make_shared<std::string>();
  auto req = std::make_shared<kvs::experiment::ReportRequest>();
  cmd->add_option("spec", *spec_path, "Experiment spec (experiments/*.json)")->required();
  cmd->add_option("--db", req->db_path, "Merged results (default results/<experiment>/results.sqlite)");
  cmd->add_option("--out", req->out_dir, "Output directory (default results/<experiment>/report)");
  auto longbench = std::make_shared<std::string>();
  cmd->add_option("--longbench", *longbench,
                  "LongBench directory declaring non-official datasets (overrides the spec's)");
  cmd->add_option("--seed", req->bootstrap.seed, "Bootstrap seed of every interval")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string& v) {
            return v.rfind('-', 0) == 0 ? "a seed is a non-negative integer, got " + v
                                        : std::string();
          },
          ""));
  cmd->add_option("--resamples", req->bootstrap.resamples, "Bootstrap resamples (at least 1)")
      ->capture_default_str();
  cmd->callback([spec_path, req, longbench] {
    const auto spec = kvs::experiment::load_spec(*spec_path, *longbench);
    if (req->db_path.empty()) req->db_path = kvs::experiment::merged_database("results/" + spec.name);
    if (req->out_dir.empty()) req->out_dir = "results/" + spec.name + "/report";
    const auto outcome = kvs::experiment::write_report(spec, *req);
    for (const auto& f : outcome.files) std::cout << "wrote " << f << "\n";
  });
}

const kvs::cli::CommandRegistration report_registration("report", setup_report);

}  // namespace
