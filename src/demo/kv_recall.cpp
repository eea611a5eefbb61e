#include "demo/kv_recall.h"

#include <set>

#include "core/error.h"
#include "core/rng.h"
#include "demo/words.h"

namespace kvs::demo {

namespace {

constexpr uint64_t kSharedFirstWordPercent = 30;
constexpr size_t kValueWords = 3;

}  // namespace

TaskInstance make_kv_recall(const std::vector<std::string>& lexicon, const TaskShape& shape,
                            std::mt19937_64& gen) {
  if (shape.min_items < 1 || shape.max_items < shape.min_items || shape.questions < 1)
    throw Error("kv recall: need 1 <= min_items <= max_items and at least one question");
  const int64_t count = draw_between(gen, shape.min_items, shape.max_items);
  std::vector<std::string> first_words, keys, values;
  std::set<std::string> seen;
  while (static_cast<int64_t>(keys.size()) < count) {
    const std::string first = !first_words.empty() && bounded_draw(gen, 100) < kSharedFirstWordPercent
                                  ? pick(first_words, gen)
                                  : pick(lexicon, gen);
    const std::string key = first + " " + pick(lexicon, gen);
    if (!seen.insert(key).second) continue;
    first_words.push_back(first);
    keys.push_back(key);
    const auto value = draw_words(lexicon, kValueWords, gen);
    values.push_back(join_words(value, 0, value.size()));
  }

  TaskInstance task;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i > 0) task.context += '\n';
    task.context += keys[i] + " " + values[i] + ".";
  }
  std::vector<size_t> order(keys.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  portable_shuffle(order, gen);
  for (int64_t q = 0; q < shape.questions; ++q) {
    const size_t i = order[static_cast<size_t>(q) % order.size()];
    task.questions.push_back(keys[i]);
    task.answers.push_back(values[i]);
    task.completions.push_back(values[i] + ".");
  }
  return task;
}

}  // namespace kvs::demo
