// Evaluator outcomes as the rows the store records: per-question predictions with their scores,
// a dev-split state and a test-split replay.
#pragma once

#include <optional>
#include <vector>

#include "evict/policy.h"
#include "search/evaluator.h"
#include "store/records.h"

namespace kvs::search {

// The predictions of policy `policy`. With official = true the outcomes were scored with the
// official variant: it goes to official_score and the raw (search) score is computed alongside.
std::vector<store::PredictionRecord> prediction_records(const QuestionSet& set,
                                                        const std::vector<QuestionOutcome>& outcomes,
                                                        size_t policy, bool official);

// Where policy `policy`'s cache went over the outcomes (means per question), or none where the
// answers carry no kept counts (the full cache).
std::optional<store::CacheLayout> cache_layout(const std::vector<QuestionOutcome>& outcomes,
                                               size_t policy);

// The state of `policy`, the batch's policy `p`, evaluated on the dev questions `dev`: its
// per-layer lambdas, JSON, dev score, predictions and cache layout, `seconds` and this binary
// (build_info::git_commit(): a resumed run records each split's own). The caller fills
// in where the search put it (eval_order, latent, accepted, best_so_far and the move).
store::StateRecord state_record(const evict::Policy& policy, int64_t num_layers, const QuestionSet& dev,
                                const std::vector<QuestionOutcome>& outcomes, size_t p, double seconds);

// A test replay of policy `policy` from officially scored outcomes: the official dataset score,
// the raw score, every prediction, the cache layout and this binary.
store::ReplayRecord replay_record(const QuestionSet& test, const std::vector<QuestionOutcome>& outcomes,
                                  size_t policy, double seconds);

}  // namespace kvs::search
