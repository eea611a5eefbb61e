// What makes two invocations the same run: the key that finds a run again, and the fields that
// must agree before a recorded run is resumed or merged.
#pragma once

#include <string>

#include "store/records.h"

namespace kvs::store {

// A readable key for a standalone run, stable across reruns of the same command:
// "<dataset>/<profile><segments>/B<budget>/seed<seed>[/dev<limit>]/<hash>", the hash covering the
// search settings and policy template. The model is left out on purpose: rerunning a command
// with another model against the same database is refused as a mismatch instead of silently
// starting a second run.
std::string default_run_key(const RunSpec& spec);

// Empty when `requested` may continue the run recorded as `recorded`; otherwise the first
// identity field that differs, "model 'A' (recorded) vs 'B'". JSON fields compare by value.
std::string identity_mismatch(const RunSpec& recorded, const RunSpec& requested);

// Throws naming `where` and the field when the text is not JSON.
void check_json(const std::string& text, const std::string& where);

}  // namespace kvs::store
