// Combining databases (issue 7: every batch job writes its own file, `kvsearch merge` joins them).
#pragma once

#include <string>
#include <vector>

#include "store/records.h"

namespace kvs::store {

// Copies into `target` (created when missing) everything of `sources` it lacks, one transaction
// per source. Rows are identified by content, not by id: experiments by name, jobs by key, runs
// by key, states by (run key, eval_order), replays by their state. What the target already has
// is skipped, so merging the same source twice adds nothing; a run or job the target finished
// elsewhere stays finished, and one the source finished becomes finished. A source whose run,
// job or experiment contradicts the target's (same key, other settings, or a state evaluated with
// another policy) is refused before anything of it is written. Each source is integrity-checked
// first.
MergeReport merge_databases(const std::string& target, const std::vector<std::string>& sources);

}  // namespace kvs::store
