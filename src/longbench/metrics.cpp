#include "longbench/metrics.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "core/error.h"
#include "longbench/difflib.h"
#include "longbench/rouge.h"
#include "longbench/text.h"

namespace kvs::longbench {

namespace {

bool is_article(std::u32string_view word) { return word == U"a" || word == U"an" || word == U"the"; }

std::vector<std::u32string> normalized_tokens(const std::string& text) {
  std::u32string kept;
  for (char32_t c : py_lower(utf8_to_utf32(text)))
    if (!is_ascii_punctuation(c)) kept.push_back(c);
  // re.sub(r"\b(a|an|the)\b", " ", ...) replaces exactly the maximal \w runs spelling an article.
  std::u32string without_articles;
  size_t i = 0;
  while (i < kept.size()) {
    if (!py_is_word_char(kept[i])) {
      without_articles.push_back(kept[i++]);
      continue;
    }
    const size_t start = i;
    while (i < kept.size() && py_is_word_char(kept[i])) ++i;
    const std::u32string_view run(kept.data() + start, i - start);
    if (is_article(run)) {
      without_articles.push_back(U' ');
    } else {
      without_articles.append(run);
    }
  }
  return py_split_whitespace(without_articles);
}

// Python's round() of a float to an integer: nearest, ties to even.
int round_half_even(double x) {
  const double floor = std::floor(x);
  const double diff = x - floor;
  double r = floor;
  if (diff > 0.5 || (diff == 0.5 && std::fmod(floor, 2.0) != 0.0)) r = floor + 1.0;
  return static_cast<int>(r);
}

bool contains_lowered(const std::u32string& lowered_prediction, const std::string& reference) {
  return lowered_prediction.find(py_lower(utf8_to_utf32(reference))) != std::u32string::npos;
}

std::u32string py_strip(std::u32string_view text) {
  size_t begin = 0, end = text.size();
  while (begin < end && py_isspace(text[begin])) ++begin;
  while (end > begin && py_isspace(text[end - 1])) --end;
  return std::u32string(text.substr(begin, end - begin));
}

double share_equal_to(const std::string& prediction, const std::u32string& target) {
  const auto numbers = find_digit_runs(utf8_to_utf32(prediction));
  if (numbers.empty()) return 0.0;
  size_t right = 0;
  for (const auto& n : numbers)
    if (n == target) ++right;
  return static_cast<double>(right) / static_cast<double>(numbers.size());
}

}  // namespace

std::string normalize_answer(const std::string& text) {
  std::u32string joined;
  for (const auto& token : normalized_tokens(text)) {
    if (!joined.empty()) joined.push_back(U' ');
    joined += token;
  }
  return utf32_to_utf8(joined);
}

double qa_f1_score(const std::string& prediction, const std::string& ground_truth) {
  const auto pred = normalized_tokens(prediction);
  const auto gold = normalized_tokens(ground_truth);
  std::unordered_map<std::u32string, long> gold_counts;
  for (const auto& t : gold) ++gold_counts[t];
  long num_same = 0;
  for (const auto& t : pred) {
    auto it = gold_counts.find(t);
    if (it != gold_counts.end() && it->second > 0) --it->second, ++num_same;
  }
  if (num_same == 0) return 0.0;
  const double precision = 1.0 * static_cast<double>(num_same) / static_cast<double>(pred.size());
  const double recall = 1.0 * static_cast<double>(num_same) / static_cast<double>(gold.size());
  return (2 * precision * recall) / (precision + recall);
}

double rouge_score(const std::string& prediction, const std::string& ground_truth) {
  return rouge_l_f(prediction, ground_truth);
}

double classification_score(const std::string& prediction, const std::string& ground_truth,
                            const std::vector<std::string>& all_classes) {
  std::vector<std::string> matches;
  for (const auto& c : all_classes)
    if (prediction.find(c) != std::string::npos) matches.push_back(c);
  // `for term in list: ... list.remove(term)`: the iterator's index keeps counting while the
  // removal (of the first equal element) shifts the rest left.
  for (size_t index = 0; index < matches.size();) {
    const std::string term = matches[index++];
    if (ground_truth.find(term) != std::string::npos && term != ground_truth) {
      matches.erase(std::find(matches.begin(), matches.end(), term));
    }
  }
  if (std::find(matches.begin(), matches.end(), ground_truth) == matches.end()) return 0.0;
  return 1.0 / static_cast<double>(matches.size());
}

double retrieval_score(const std::string& prediction, const std::string& ground_truth) {
  // The first match of r'Paragraph (\d+)' in the ground truth.
  const std::u32string gold = utf8_to_utf32(ground_truth);
  const std::u32string prefix = U"Paragraph ";
  for (size_t pos = gold.find(prefix); pos != std::u32string::npos; pos = gold.find(prefix, pos + 1)) {
    size_t end = pos + prefix.size();
    while (end < gold.size() && py_isdecimal(gold[end])) ++end;
    if (end > pos + prefix.size())
      return share_equal_to(prediction, gold.substr(pos + prefix.size(), end - pos - prefix.size()));
  }
  throw Error("retrieval_score: the answer '" + ground_truth.substr(0, 80) +
              "' names no 'Paragraph <number>'");
}

double count_score(const std::string& prediction, const std::string& ground_truth) {
  return share_equal_to(prediction, utf8_to_utf32(ground_truth));
}

int fuzz_ratio(const std::string& a, const std::string& b) {
  if (a == b) return 100;
  if (a.empty() || b.empty()) return 0;
  return round_half_even(100 * difflib_ratio(utf8_to_utf32(a), utf8_to_utf32(b)));
}

double code_sim_score(const std::string& prediction, const std::string& ground_truth) {
  const size_t start = prediction.find_first_not_of('\n');
  std::string chosen;
  if (start != std::string::npos) {
    for (const auto& line : py_split_on(std::string_view(prediction).substr(start), '\n')) {
      if (line.find('`') == std::string::npos && line.find('#') == std::string::npos &&
          line.find("//") == std::string::npos) {
        chosen = line;
        break;
      }
    }
  }
  return static_cast<double>(fuzz_ratio(chosen, ground_truth)) / 100;
}

std::string ruler_postprocess(const std::string& prediction) {
  std::u32string text = py_strip(utf8_to_utf32(prediction));
  for (char32_t& c : text)
    if (c <= 0x1f) c = U'\n';
  return utf32_to_utf8(py_strip(text));
}

double string_match_all(const std::string& prediction, const std::vector<std::string>& references) {
  if (references.empty()) throw Error("string_match_all: an example without references");
  const std::u32string lowered = py_lower(utf8_to_utf32(prediction));
  double found = 0.0;  // Python's sum() of 1.0/0.0 terms, in order
  for (const auto& r : references) found += contains_lowered(lowered, r) ? 1.0 : 0.0;
  return found / static_cast<double>(references.size());
}

double string_match_part(const std::string& prediction, const std::vector<std::string>& references) {
  if (references.empty()) throw Error("string_match_part: an example without references");
  const std::u32string lowered = py_lower(utf8_to_utf32(prediction));
  for (const auto& r : references)
    if (contains_lowered(lowered, r)) return 1.0;
  return 0.0;
}

std::optional<std::string> last_boxed(const std::string& text) {
  const size_t marker = text.rfind("boxed{");
  if (marker == std::string::npos) return std::nullopt;
  const size_t start = marker + 6;
  int depth = 1;
  for (size_t i = start; i < text.size(); ++i) {
    if (text[i] == '{') ++depth;
    if (text[i] == '}' && --depth == 0) return text.substr(start, i - start);
  }
  return std::nullopt;
}

double boxed_answer_score(const std::string& prediction, const std::string& ground_truth) {
  const auto boxed = last_boxed(prediction);
  return boxed && *boxed == ground_truth ? 1.0 : 0.0;
}

std::optional<std::string> last_number(const std::string& text) {
  auto digit = [&](size_t i) { return i < text.size() && text[i] >= '0' && text[i] <= '9'; };
  std::optional<std::string> last;
  size_t i = 0;
  while (i < text.size()) {
    if (!digit(i)) {
      ++i;
      continue;
    }
    const bool negative = i > 0 && text[i - 1] == '-';
    std::string whole;
    // Digits, and a "," followed by exactly three digits (a thousands separator: "1,234";
    // "1,2,3" is three numbers).
    auto separator = [&](size_t j) {
      return j < text.size() && text[j] == ',' && digit(j + 1) && digit(j + 2) && digit(j + 3) &&
             !digit(j + 4);
    };
    while (digit(i) || (!whole.empty() && separator(i))) {
      if (text[i] != ',') whole += text[i];
      ++i;
    }
    std::string fraction;
    if (i < text.size() && text[i] == '.' && digit(i + 1)) {
      ++i;
      while (digit(i)) fraction += text[i++];
    }
    while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();
    size_t lead = 0;  // "007" is 7
    while (lead + 1 < whole.size() && whole[lead] == '0') ++lead;
    whole = whole.substr(lead);
    std::string number = whole + (fraction.empty() ? "" : "." + fraction);
    if (negative && number != "0") number = "-" + number;
    last = number;
  }
  return last;
}

double last_number_score(const std::string& prediction, const std::string& ground_truth) {
  const size_t mark = ground_truth.rfind("####");
  const auto gold =
      last_number(mark == std::string::npos ? ground_truth : ground_truth.substr(mark + 4));
  const auto ours = last_number(prediction);
  return gold && ours && *gold == *ours ? 1.0 : 0.0;
}

}  // namespace kvs::longbench
