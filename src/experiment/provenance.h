// What the report says of where a table's numbers come from: the kvsearch builds that computed
// its results (every split records its own, results.h MethodResult::binaries), named when there
// is more than one or when one was built from a dirty tree. Torch-free.
#pragma once

#include <optional>
#include <string>

#include "experiment/results.h"
#include "experiment/spec.h"

namespace kvs::experiment {

// A note for under the table, or nullopt when all its results come from one clean build.
std::optional<std::string> provenance_note(const TableSpec& table, const ExperimentSpec& spec,
                                           const ExperimentResults& results);

}  // namespace kvs::experiment
