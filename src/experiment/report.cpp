#include "experiment/report.h"

#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "core/build_info.h"
#include "core/error.h"
#include "core/strfmt.h"
#include "experiment/cache_report.h"
#include "experiment/cell_estimates.h"
#include "experiment/comparison.h"
#include "experiment/experiment_scores.h"
#include "experiment/findings.h"
#include "experiment/provenance.h"
#include "experiment/report_figures.h"
#include "experiment/results.h"
#include "experiment/spec_figures.h"
#include "experiment/table_comparisons.h"
#include "experiment/tables.h"
#include "longbench/dataset.h"

namespace kvs::experiment {

namespace {

void write_file(const std::string& path, const std::string& text, std::vector<std::string>& files) {
  std::ofstream out(path);
  out << text;
  if (!out) throw error_at(path, "cannot write the report file");
  files.push_back(path);
}

std::string join(const std::set<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out.empty() ? "-" : out;
}

// What a table's text datasets score (search/text_evaluation.h), where it has any.
std::optional<std::string> measured_note(const TableSpec& ts, const ExperimentSpec& spec) {
  std::string perplexity, fidelity;
  for (const std::string& d : ts.datasets.empty() ? spec.datasets : ts.datasets) {
    const longbench::Metric metric = longbench::dataset_info(d).metric;
    if (metric == longbench::Metric::Perplexity) perplexity += (perplexity.empty() ? "" : ", ") + d;
    if (metric == longbench::Metric::Fidelity) fidelity += (fidelity.empty() ? "" : ", ") + d;
  }
  if (perplexity.empty() && fidelity.empty()) return std::nullopt;
  std::string note =
      "Text datasets, one text a question, each method against the full cache on the same tokens "
      "(100: as good as the full cache):";
  if (!perplexity.empty())
    note +=
        " " + perplexity +
        ": 100 x the full cache's perplexity over the method's, on the text's own continuation;";
  if (!fidelity.empty())
    note += " " + fidelity +
            ": the share (%) of steps whose argmax equals the full cache's, teacher-forced on the "
            "full cache's own continuation;";
  return note +
         " `kvsearch show --run N --predictions` lists each text's perplexities, or its agreement "
         "and mean "
         "KL divergence.";
}

void write_table(const Table& t, const std::string& out_dir, std::vector<std::string>& files) {
  write_file(out_dir + "/" + t.name + ".md", to_markdown(t), files);
  write_file(out_dir + "/" + t.name + ".csv", to_csv(t), files);
}

// A table's paired comparisons and figures: files, and what the index shows of them.
std::string write_table_statistics(const TableSpec& ts, const ExperimentSpec& spec,
                                   const std::vector<TableComparison>& comparisons,
                                   const CellEstimates& estimates, const ReportRequest& request,
                                   std::vector<std::string>& files) {
  const Table surviving = surviving_table(ts, comparisons, request.bootstrap);
  std::string index;
  if (!comparisons.empty())
    write_table(comparisons_table(ts, comparisons, request.bootstrap), request.out_dir, files);
  write_table(surviving, request.out_dir, files);
  index += to_markdown(surviving) + "\n";
  if (const auto full = full_cache_table(ts, comparisons)) {
    write_table(*full, request.out_dir, files);
    index += to_markdown(*full) + "\n";
  }
  for (const SvgFigure& f : table_figures(ts, spec, estimates)) {
    write_file(request.out_dir + "/" + f.name + ".svg", f.svg, files);
    index += "![" + f.title + "](" + f.name + ".svg)\n\n";
  }
  return index;
}

}  // namespace

ReportOutcome write_report(const ExperimentSpec& spec, const ReportRequest& request) {
  if (request.bootstrap.resamples < 1)
    throw Error("--resamples: the bootstrap needs at least 1 resample (got " +
                std::to_string(request.bootstrap.resamples) + ")");
  const ExperimentResults results(spec, request.db_path);
  const ExperimentScores scores(spec, request.db_path);
  const CellEstimates estimates(scores, request.bootstrap);
  std::filesystem::create_directories(request.out_dir);
  ReportOutcome outcome;

  std::ostringstream index;
  index << "# " << spec.name << "\n\n";
  if (!spec.description.empty()) index << spec.description << "\n\n";
  index << "- spec: `" << spec.path << "`\n";
  index << "- results: `" << request.db_path << "`\n";
  index << "- model: " << join(results.models()) << "\n";
  index << "- results computed by the kvsearch binaries of commit " << join(results.commits())
        << " (every split records its own; before schema version 3, its run's)\n";
  index << "- report written by the kvsearch binary of commit " << build_info::git_commit() << "\n";
  index << "- datasets: ";
  for (size_t i = 0; i < spec.datasets.size(); ++i) index << (i ? ", " : "") << spec.datasets[i];
  index << strfmt("; split seed %llu", static_cast<unsigned long long>(spec.split_seed));
  if (spec.dev_limit > 0) index << strfmt(", first %lld dev questions", static_cast<long long>(spec.dev_limit));
  if (spec.test_limit > 0) index << strfmt(", first %lld test questions", static_cast<long long>(spec.test_limit));
  index << "\n";
  index << strfmt(
      "- statistics: 95%% percentile bootstrap intervals over the test questions, %lld resamples, "
      "seed %llu (--resamples, --seed); paired comparisons: exact sign test, Holm's correction "
      "over each table's comparisons at alpha %.2f\n\n",
      static_cast<long long>(request.bootstrap.resamples),
      static_cast<unsigned long long>(request.bootstrap.seed), kAlpha);

  std::vector<std::vector<TableComparison>> comparisons;
  for (const TableSpec& ts : spec.tables) {
    comparisons.push_back(compare_table_methods(ts, spec, scores, request.bootstrap));
    index << findings_section(ts, comparisons.back());
  }
  for (size_t i = 0; i < spec.tables.size(); ++i) {
    const TableSpec& ts = spec.tables[i];
    Table t = make_table(ts, spec, results, &estimates);
    if (const auto note = measured_note(ts, spec)) t.notes.push_back(*note);
    if (const auto note = provenance_note(ts, spec, results)) t.notes.push_back(*note);
    write_table(t, request.out_dir, outcome.files);
    index << to_markdown(t) << "\n";
    if (ts.kind == "budgets") {
      const Table gains = gains_table(ts, spec, results, &estimates);
      write_table(gains, request.out_dir, outcome.files);
      index << to_markdown(gains) << "\n";
    }
    index << write_table_statistics(ts, spec, comparisons[i], estimates, request, outcome.files);
  }

  const Table cache = cache_table(spec, results);
  write_table(cache, request.out_dir, outcome.files);
  index << to_markdown(cache) << "\n";
  for (const SvgFigure& f : cache_figures(spec, results)) {
    write_file(request.out_dir + "/" + f.name + ".svg", f.svg, outcome.files);
    index << "![" << f.title << "](" << f.name << ".svg)\n\n";
  }

  const Table noise = noise_table(spec, results);
  write_file(request.out_dir + "/noise.md", to_markdown(noise), outcome.files);
  write_file(request.out_dir + "/noise.csv", to_csv(noise), outcome.files);
  index << to_markdown(noise) << "\n";

  if (!spec.figures.empty()) index << "### Figures\n\n";
  for (const SvgFigure& f : spec_figures(spec, results, estimates)) {
    write_file(request.out_dir + "/" + f.name + ".svg", f.svg, outcome.files);
    index << "![" << f.title << "](" << f.name << ".svg)\n\n";
  }
  write_file(request.out_dir + "/README.md", index.str(), outcome.files);
  return outcome;
}

}  // namespace kvs::experiment
