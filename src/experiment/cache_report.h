// Where each method put the cache, from the layouts recorded with its test replays
// (store::CacheLayout): a table of the entries kept and the bytes held beside the uniform
// layout's, and, per budget, a figure of the entries each layer's KV heads keep (the mean over the
// heads as a line, the smallest and largest head as its band) for every method whose budget
// moves between layers or heads (pyramidkv, adakv, cake, mixkv's adakv host, ...). Each figure
// averages over the spec's datasets that have a layout. Torch-free.
#pragma once

#include <vector>

#include "experiment/report_figures.h"
#include "experiment/results.h"
#include "experiment/spec.h"
#include "experiment/tables.h"

namespace kvs::experiment {

// "cache": method x budget rows: entries per cache head and layer (mean), bytes held and the
// uniform layout's (MiB), their ratio; rows only where a layout is recorded (not the full cache,
// nor runs recorded before kvsearch kept layouts), a note alone where none is.
Table cache_table(const ExperimentSpec& spec, const ExperimentResults& results);

// cache_layers_B<budget>, one per budget where some method's layout is not uniform.
std::vector<SvgFigure> cache_figures(const ExperimentSpec& spec, const ExperimentResults& results);

}  // namespace kvs::experiment
