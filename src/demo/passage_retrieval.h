// The demo's passage-retrieval task, shaped like LongBench's passage_retrieval_en: numbered
// paragraphs "Paragraph k: ..." of made-up words, about 30% of them near-duplicates of an earlier
// paragraph (each word replaced with probability 1/5), so a cache that keeps both copies of a
// paragraph wastes its budget. The question is a span of 8-12 words copied from one paragraph and
// found in no other; the answer is "Paragraph k".
#pragma once

#include <random>
#include <string>
#include <vector>

#include "demo/task_instance.h"

namespace kvs::demo {

// Questions ask about distinct paragraphs while there are enough of them.
TaskInstance make_passage_retrieval(const std::vector<std::string>& lexicon, const TaskShape& shape,
                                    std::mt19937_64& gen);

}  // namespace kvs::demo
