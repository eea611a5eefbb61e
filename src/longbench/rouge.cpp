#include "longbench/rouge.h"

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "longbench/text.h"

namespace kvs::longbench {

namespace {

using Sentence = std::vector<int>;  // word ids

// Words are compared by id: one vocabulary for both sides.
class Vocabulary {
 public:
  int id(const std::u32string& word) {
    const auto [it, inserted] = ids_.emplace(word, static_cast<int>(ids_.size()));
    return it->second;
  }

 private:
  std::unordered_map<std::u32string, int> ids_;
};

// Rouge.get_scores' sentence split, then rouge_score._split_into_words per sentence.
std::vector<Sentence> split_sentences(const std::string& text, Vocabulary& vocab) {
  std::vector<Sentence> sentences;
  for (const auto& piece : py_split_on(text, '.')) {
    if (piece.empty()) continue;
    const auto words = py_split_whitespace(utf8_to_utf32(piece));
    Sentence sentence;
    if (words.empty()) sentence.push_back(vocab.id(U""));
    for (const auto& w : words) sentence.push_back(vocab.id(w));
    sentences.push_back(std::move(sentence));
  }
  return sentences;
}

size_t distinct_words(const std::vector<Sentence>& sentences) {
  std::unordered_set<int> words;
  for (const auto& s : sentences) words.insert(s.begin(), s.end());
  return words.size();
}

// rouge_score._recon_lcs(x, y): adds the recovered LCS words to `lcs_words`. Returns false when
// the recursive backtrack would exceed the recursion limit.
bool recover_lcs(const Sentence& x, const Sentence& y, std::unordered_set<int>& lcs_words) {
  const size_t n = x.size(), m = y.size();
  // Each backtrack call lowers i or j or both, until one is 0: at least min(n, m) + 1 calls.
  if (std::min(n, m) + 1 > kRougeMaxBacktrackCalls) return false;
  // LCS lengths never exceed min(n, m) < 991: 16 bits suffice.
  const size_t width = m + 1;
  std::vector<uint16_t> table((n + 1) * width, 0);
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      table[i * width + j] = x[i - 1] == y[j - 1]
                                 ? table[(i - 1) * width + j - 1] + 1
                                 : std::max(table[(i - 1) * width + j], table[i * width + j - 1]);
    }
  }
  std::vector<int> recovered;
  size_t i = n, j = m, calls = 1;
  while (i > 0 && j > 0) {
    if (x[i - 1] == y[j - 1]) {
      recovered.push_back(x[i - 1]);
      --i, --j;
    } else if (table[(i - 1) * width + j] > table[i * width + j - 1]) {
      --i;
    } else {
      --j;
    }
    ++calls;
  }
  if (calls > kRougeMaxBacktrackCalls) return false;
  lcs_words.insert(recovered.begin(), recovered.end());
  return true;
}

}  // namespace

double rouge_l_f(const std::string& hypothesis, const std::string& reference) {
  Vocabulary vocab;
  const auto hyp = split_sentences(hypothesis, vocab);
  const auto ref = split_sentences(reference, vocab);
  if (hyp.empty() || ref.empty()) return 0.0;
  const double m = static_cast<double>(distinct_words(ref));
  const double n = static_cast<double>(distinct_words(hyp));
  std::unordered_set<int> lcs_words;
  for (const auto& r : ref) {
    for (const auto& h : hyp) {
      if (!recover_lcs(r, h, lcs_words)) return 0.0;
    }
  }
  const double llcs = static_cast<double>(lcs_words.size());
  const double recall = llcs / m;
  const double precision = llcs / n;
  return 2.0 * ((precision * recall) / (precision + recall + 1e-8));
}

}  // namespace kvs::longbench
