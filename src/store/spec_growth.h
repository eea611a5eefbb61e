// When a recorded experiment or job spec may be continued by a changed one: a spec grows when its
// lists gain entries (datasets, budgets, methods; a job's evaluations) and nothing else changes.
// Every recorded run then keeps its meaning, and a rerun evaluates only what was added.
#pragma once

#include <string>

namespace kvs::store {

// Whether `after` is `before` with entries added to its lists: objects with the same keys whose
// values grow, arrays holding every entry of `before` (equal by value, in any order), other
// values equal. Equal specs grow (by nothing). Both must be JSON.
bool spec_grows(const std::string& before, const std::string& after);

}  // namespace kvs::store
