// niah: needles "one of the <values> for <key> is: <value>" hidden in a noise, distractor-needle or
// essay haystack; the question asks for the values of one or more keys.
#include <algorithm>
#include <set>

#include "core/error.h"
#include "core/rng.h"
#include "longbench/format.h"
#include "ruler/generators.h"
#include "ruler/values.h"

namespace kvs::ruler {

namespace {

struct Needle {
  std::string text;
  size_t key_index;
};

std::string needle_sentence(const FamilyWording& w, ValueType type, const std::string& key,
                            const std::string& value) {
  return longbench::format_template(
      w.needle, {{"type_needle_v", value_type_name(type)}, {"key", key}, {"value", value}}, "needle");
}

int64_t code_points_before(const std::string& text, size_t byte_offset) {
  int64_t n = 0;
  for (size_t i = 0; i < byte_offset; ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xc0) != 0x80) ++n;
  return n;
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

}  // namespace

Sample generate_niah(const TaskSpec& task, const Resources& res, int64_t units, std::mt19937_64& gen) {
  const NiahParams& p = task.niah;
  const FamilyWording& base = res.wording.of(Family::Niah);
  std::vector<std::string> keys;
  std::set<std::string> used;
  while (static_cast<int>(keys.size()) < p.num_keys) {
    std::string key = random_value(p.key_type, res.word_list, gen);
    if (used.insert(key).second) keys.push_back(std::move(key));
  }
  std::vector<std::vector<std::string>> values(keys.size());
  std::vector<Needle> needles;
  for (size_t k = 0; k < keys.size(); ++k) {
    for (int v = 0; v < p.num_values; ++v) {
      values[k].push_back(random_value(p.value_type, res.word_list, gen));
      needles.push_back({needle_sentence(base, p.value_type, keys[k], values[k].back()), k});
    }
  }
  portable_shuffle(needles, gen);

  Sample sample;
  std::string haystack;
  std::vector<std::string> ordered;  // the needles' texts in context order
  if (p.haystack == Haystack::Essay) {
    const auto sentences = essay_sentences(res.essay_words, units);
    std::vector<int> depths;
    for (size_t i : sample_without_replacement(needle_depths().size(), needles.size(), gen))
      depths.push_back(needle_depths()[i]);
    std::sort(depths.begin(), depths.end());
    std::vector<std::string> parts;
    size_t last = 0;
    for (size_t i = 0; i < needles.size(); ++i) {
      const size_t at = sentences.size() * static_cast<size_t>(depths[i]) / 100;
      parts.insert(parts.end(), sentences.begin() + last, sentences.begin() + at);
      parts.push_back(needles[i].text);
      ordered.push_back(needles[i].text);
      last = at;
    }
    parts.insert(parts.end(), sentences.begin() + last, sentences.end());
    haystack = join(parts, " ");
    sample.needle_depths = depths;
  } else {
    std::vector<std::string> lines;
    for (int64_t i = 0; i < units; ++i) {
      if (p.haystack == Haystack::Noise) {
        lines.push_back(base.noise);
        continue;
      }
      std::string key;
      do key = random_value(p.key_type, res.word_list, gen);
      while (used.count(key));
      lines.push_back(needle_sentence(base, p.value_type, key, random_value(p.value_type, res.word_list, gen)));
    }
    auto positions = sample_without_replacement(lines.size(), needles.size(), gen);
    std::sort(positions.begin(), positions.end());
    std::vector<std::string> texts;
    for (size_t i = 0; i < needles.size(); ++i) {
      texts.push_back(needles[i].text);
      sample.needle_depths.push_back(static_cast<int>(100 * positions[i] / lines.size()));
    }
    ordered = texts;
    haystack = join(insert_lines(lines, texts, positions), "\n");
  }

  const auto queried = sample_without_replacement(keys.size(), static_cast<size_t>(p.num_queries), gen);
  std::vector<std::string> queries;
  for (size_t i : queried) {
    queries.push_back(keys[i]);
    for (const auto& v : values[i]) sample.answers.push_back(v);
  }
  // "k1, k2, k3, and k4", as RULER joins them.
  std::string query = queries.back();
  if (queries.size() > 1)
    query = join(std::vector<std::string>(queries.begin(), queries.end() - 1), ", ") + ", and " + query;
  const bool one_value = p.num_queries * p.num_values == 1;
  std::string type = value_type_name(p.value_type);
  if (one_value) type.pop_back();  // "numbers" -> "number"
  const TaskText text = render(one_value ? singular(base) : base, haystack,
                               {{"type_needle_v", type}, {"query", query}});
  sample.context = text.context;
  sample.question = text.question;
  sample.answer_prefix = text.answer_prefix;
  size_t from = 0;
  for (const auto& needle : ordered) {
    const size_t at = sample.context.find(needle, from);
    if (at == std::string::npos) throw Error("niah: a needle is missing from the context");
    sample.needle_offsets.push_back(code_points_before(sample.context, at));
    from = at + needle.size();
  }
  return sample;
}

}  // namespace kvs::ruler
