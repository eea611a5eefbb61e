// `kvsearch report`: an experiment's tables (Markdown and CSV) and figures (PNG) from its merged
// database. The figures' data goes to <out>/figures.json and tools/plot_figures.py draws them with
// matplotlib (the only Python at run time); without Python or matplotlib the tables are written
// and the figures skipped with a note. From the recorded per-question test scores, every score of
// a table comes with its 95% bootstrap interval, every pair of a table's methods is compared
// (<table>_paired, with Holm's correction over the table; <table>_significant: the survivors) and
// each table gets two SVG figures (report_figures.h). One seed and resample count for all of it,
// in the index: the same seed gives a byte-identical report. Torch-free.
#pragma once

#include <string>
#include <vector>

#include "experiment/paired_stats.h"
#include "experiment/spec.h"

namespace kvs::experiment {

struct ReportRequest {
  std::string db_path;
  std::string out_dir;
  std::string plot_script;        // tools/plot_figures.py
  std::string python = "python3";
  Bootstrap bootstrap;  // of every interval (--seed, --resamples)
};

struct ReportOutcome {
  std::vector<std::string> files;  // written
  std::string figures_note;        // why figures were skipped; empty when drawn or none asked for
};

// tools/plot_figures.py of the source tree this binary was built from.
std::string default_plot_script();

ReportOutcome write_report(const ExperimentSpec& spec, const ReportRequest& request);

}  // namespace kvs::experiment
