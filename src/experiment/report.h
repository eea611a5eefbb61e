// `kvsearch report`: an experiment's tables (Markdown and CSV) and figures (SVG, drawn natively by
// svg_figure.h: no plotting library, nothing read at run time but the database) from its merged
// database. From the recorded per-question test scores, every score of a table comes with its 95%
// bootstrap interval, every pair of a table's methods is compared (<table>_paired, with Holm's
// correction over the table; <table>_significant: the differences between methods that survive;
// <table>_full_cache: each method against the full cache), the index opens with findings written
// from them, each table gets two SVG figures (report_figures.h) and each figure of the spec one
// (spec_figures.h). One seed and resample count for all of it, in the index: the same seed gives
// a byte-identical report. Torch-free.
#pragma once

#include <string>
#include <vector>

#include "experiment/paired_stats.h"
#include "experiment/spec.h"

namespace kvs::experiment {

struct ReportRequest {
  std::string db_path;
  std::string out_dir;
  Bootstrap bootstrap;  // of every interval (--seed, --resamples)
};

struct ReportOutcome {
  std::vector<std::string> files;  // written
};

ReportOutcome write_report(const ExperimentSpec& spec, const ReportRequest& request);

}  // namespace kvs::experiment
