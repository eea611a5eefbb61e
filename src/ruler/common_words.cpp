// cwe: a numbered list in which a few words repeat often and the rest rarely; the question asks
// for the most common ones. A solved few-shot example comes first.
#include "core/rng.h"
#include "ruler/generators.h"
#include "ruler/values.h"

namespace kvs::ruler {

namespace {

// Below this target RULER lowers the repeats (6/1, and 3/1 with 20 words in the example).
constexpr int64_t kShortTarget = 4096;

struct WordListSample {
  std::string rendered;  // "1. w 2. w ..."
  std::vector<std::string> common;
};

WordListSample numbered_list(const std::vector<std::string>& words, size_t distinct, int num_common,
                             int freq_common, int freq_uncommon, std::mt19937_64& gen) {
  const auto picked = sample_without_replacement(words.size(), distinct, gen);
  WordListSample s;
  std::vector<std::string> list;
  for (size_t i = 0; i < picked.size(); ++i) {
    const bool common = static_cast<int>(i) < num_common;
    if (common) s.common.push_back(words[picked[i]]);
    for (int r = 0; r < (common ? freq_common : freq_uncommon); ++r) list.push_back(words[picked[i]]);
  }
  portable_shuffle(list, gen);
  for (size_t i = 0; i < list.size(); ++i)
    s.rendered += (i ? " " : "") + std::to_string(i + 1) + ". " + list[i];
  return s;
}

}  // namespace

Sample generate_common_words(const TaskSpec& task, const Resources& res, int64_t units,
                             std::mt19937_64& gen) {
  const auto& p = task.cwe;
  const FamilyWording& w = res.wording.of(Family::CommonWords);
  const bool short_target = res.target_length < kShortTarget;
  const std::map<std::string, std::string> fields = {{"num_cw", std::to_string(p.num_common)}};

  const WordListSample example =
      numbered_list(res.word_list, short_target ? 20 : 40, p.num_common, short_target ? 3 : 10,
                    short_target ? 1 : 3, gen);
  const TaskText shown = render(w, example.rendered, fields);
  std::string answer;
  for (size_t i = 0; i < example.common.size(); ++i)
    answer += (i ? " " : "") + std::to_string(i + 1) + ". " + example.common[i];
  const std::string example_text =
      shown.context + shown.question + shown.answer_prefix + " " + answer + "\n";

  const WordListSample list =
      numbered_list(res.word_list, static_cast<size_t>(units), p.num_common,
                    short_target ? 6 : p.freq_common, short_target ? 1 : p.freq_uncommon, gen);
  const TaskText text = render(w, list.rendered, fields);
  Sample sample;
  sample.context = example_text + text.context;
  sample.question = text.question;
  sample.answer_prefix = text.answer_prefix;
  sample.answers = list.common;
  return sample;
}

}  // namespace kvs::ruler
