// The demo's key-value recall task (scored with qa F1): lines "The value of <key> is <value>."
// with two-word keys and three-word values of made-up words; about 30% of the keys share their
// first word with an earlier key, so matching one word is not enough. The question is a key, the
// answer its value.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "demo/task_instance.h"

namespace kvs::demo {

// Questions ask about distinct records while there are enough of them.
TaskInstance make_kv_recall(const std::vector<std::string>& lexicon, const TaskShape& shape,
                            std::mt19937_64& gen);

}  // namespace kvs::demo
