#include "experiment/cache_report.h"

#include <algorithm>
#include <optional>
#include <string>

#include "core/strfmt.h"
#include "experiment/svg_figure.h"

namespace kvs::experiment {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// A method's layout at a budget, averaged over the spec's datasets that recorded one (each
// dataset's layout is already the mean over its test questions); none where no dataset has one
// or the datasets' layer shapes differ.
std::optional<store::CacheLayout> mean_layout(const ExperimentSpec& spec,
                                              const ExperimentResults& results,
                                              const MethodSpec& method, int64_t budget) {
  std::optional<store::CacheLayout> sum;
  int64_t datasets = 0;
  for (const std::string& dataset : spec.datasets) {
    if (!method.runs_on(dataset)) continue;
    const auto r = results.get(dataset, method.name, budget);
    if (!r || !r->test_cache) continue;
    const store::CacheLayout& c = *r->test_cache;
    if (!sum) {
      sum = c;
    } else {
      if (c.counts.size() != sum->counts.size()) return std::nullopt;
      for (size_t l = 0; l < c.counts.size(); ++l) {
        if (c.counts[l].size() != sum->counts[l].size()) return std::nullopt;
        for (size_t h = 0; h < c.counts[l].size(); ++h) sum->counts[l][h] += c.counts[l][h];
      }
      sum->questions += c.questions;
      sum->kept_entries += c.kept_entries;
      sum->held_bytes += c.held_bytes;
      sum->uniform_bytes += c.uniform_bytes;
      if (c.largest_entries.has_value() != sum->largest_entries.has_value()) return std::nullopt;
      if (c.largest_entries) {
        *sum->largest_entries += *c.largest_entries;
        *sum->bound_entries += c.bound_entries.value_or(0);
      }
    }
    ++datasets;
  }
  if (!sum) return std::nullopt;
  const double n = double(datasets);
  for (auto& layer : sum->counts)
    for (double& x : layer) x /= n;
  sum->kept_entries /= n;
  sum->held_bytes /= n;
  sum->uniform_bytes /= n;
  if (sum->largest_entries) *sum->largest_entries /= n;
  if (sum->bound_entries) *sum->bound_entries /= n;
  return sum;
}

// Whether the layout keeps different counts across layers or heads (by more than half an entry).
bool moves(const store::CacheLayout& c) {
  double low = 0, high = 0;
  bool first = true;
  for (const auto& layer : c.counts) {
    for (double x : layer) {
      low = first ? x : std::min(low, x);
      high = first ? x : std::max(high, x);
      first = false;
    }
  }
  return !first && high - low > 0.5;
}

}  // namespace

Table cache_table(const ExperimentSpec& spec, const ExperimentResults& results) {
  Table t;
  t.name = "cache";
  t.title =
      "Where the cache went: entries kept per cache head and layer, and the bytes held for "
      "the prompt beside the uniform layout's at the same mean budget (test questions, "
      "mean over the datasets)";
  t.header = {"method",   "B",           "entries / head / layer", "layers (mean over heads)",
              "held MiB", "uniform MiB", "held / uniform",         "largest / bound (decoding)"};
  for (const MethodSpec& m : spec.methods) {
    if (m.full_cache()) continue;
    const std::vector<int64_t>& budgets = m.budgets.empty() ? spec.budgets : m.budgets;
    for (const int64_t b : budgets) {
      const auto c = mean_layout(spec, results, m, b);
      if (!c) continue;
      double cells = 0, low = 0, high = 0;
      for (size_t l = 0; l < c->counts.size(); ++l) {
        double mean = 0;
        for (double x : c->counts[l]) mean += x;
        mean /= double(std::max<size_t>(c->counts[l].size(), 1));
        low = l == 0 ? mean : std::min(low, mean);
        high = l == 0 ? mean : std::max(high, mean);
        cells += double(c->counts[l].size());
      }
      t.rows.push_back({m.name, std::to_string(b), strfmt("%.1f", c->kept_entries / cells),
                        strfmt("%.1f..%.1f", low, high), strfmt("%.2f", c->held_bytes / kMiB),
                        strfmt("%.2f", c->uniform_bytes / kMiB),
                        strfmt("%.3f", c->held_bytes / c->uniform_bytes),
                        c->largest_entries ? strfmt("%.1f / %.1f", *c->largest_entries,
                                                    c->bound_entries.value_or(0))
                                           : std::string("-")});
    }
  }
  if (t.rows.empty()) {
    t.header.clear();
    t.notes.push_back(
        "No cache layouts are recorded in this database (runs recorded before kvsearch kept "
        "them, schema version 2).");
    return t;
  }
  t.notes.push_back(
      "Held bytes are the kept entries' (the cache stores no padding; before 2026-12-07 each "
      "ragged head was padded to its layer's longest); the uniform layout keeps the same mean "
      "count in every head of each layer. A decode-time policy (its B the target) holds its "
      "entries after the last step; its largest cache is the most entries one KV head of one "
      "layer held at any step, beside its schedule's bound (target + period, or the prompt + "
      "period before the first compression). Methods without a recorded layout (the full "
      "cache, runs recorded before kvsearch kept them) are left out.");
  return t;
}

std::vector<SvgFigure> cache_figures(const ExperimentSpec& spec, const ExperimentResults& results) {
  std::vector<SvgFigure> out;
  for (const int64_t b : spec.budgets) {
    LineChart chart;
    chart.title = strfmt(
        "Entries kept per KV head by layer at B = %lld (mean over heads; band: "
        "the smallest and largest head; test questions)",
        static_cast<long long>(b));
    chart.x_label = "layer";
    chart.y_label = "entries kept per head";
    size_t layers = 0;
    for (const MethodSpec& m : spec.methods) {
      if (m.full_cache()) continue;
      const auto c = mean_layout(spec, results, m, b);
      if (!c || !moves(*c)) continue;
      LineChart::Series series{m.name, {}};
      for (const auto& layer : c->counts) {
        if (layer.empty()) {
          series.points.push_back(std::nullopt);
          continue;
        }
        double mean = 0;
        for (double x : layer) mean += x;
        mean /= double(layer.size());
        series.points.push_back(BandPoint{mean, *std::min_element(layer.begin(), layer.end()),
                                          *std::max_element(layer.begin(), layer.end())});
      }
      layers = std::max(layers, series.points.size());
      chart.series.push_back(std::move(series));
    }
    if (chart.series.empty()) continue;
    for (size_t l = 0; l < layers; ++l) chart.x_ticks.push_back(std::to_string(l));
    for (LineChart::Series& s : chart.series) s.points.resize(layers);
    out.push_back(
        {strfmt("cache_layers_B%lld", static_cast<long long>(b)), chart.title, to_svg(chart)});
  }
  return out;
}

}  // namespace kvs::experiment
