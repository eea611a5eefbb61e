// `kvsearch report`: an experiment's tables (Markdown and CSV) and figures (PNG) from its merged
// database. The figures' data goes to <out>/figures.json and tools/plot_figures.py draws them with
// matplotlib (the only Python at run time); without Python or matplotlib the tables are written
// and the figures skipped with a note. Torch-free.
#pragma once

#include <string>
#include <vector>

#include "experiment/spec.h"

namespace kvs::experiment {

struct ReportRequest {
  std::string db_path;
  std::string out_dir;
  std::string plot_script;        // tools/plot_figures.py
  std::string python = "python3";
};

struct ReportOutcome {
  std::vector<std::string> files;  // written
  std::string figures_note;        // why figures were skipped; empty when drawn or none asked for
};

// tools/plot_figures.py of the source tree this binary was built from.
std::string default_plot_script();

ReportOutcome write_report(const ExperimentSpec& spec, const ReportRequest& request);

}  // namespace kvs::experiment
