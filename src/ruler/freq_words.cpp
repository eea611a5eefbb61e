// fwe: a text of random coded words whose counts follow Zipf's law (rank 1 is the filler "...");
// the question asks for the three most frequent real words (ranks 2-4).
#include <algorithm>
#include <cmath>
#include <set>

#include "core/rng.h"
#include "core/strfmt.h"
#include "ruler/generators.h"
#include "ruler/values.h"

namespace kvs::ruler {

namespace {

// The Riemann zeta function for s > 1 (scipy.special.zeta(s)): the partial sum, then the
// Euler-Maclaurin tail.
double zeta(double s) {
  constexpr int kTerms = 100000;
  double sum = 0.0;
  for (int k = kTerms - 1; k >= 1; --k) sum += std::pow(k, -s);
  const double n = kTerms;
  return sum + std::pow(n, 1 - s) / (s - 1) + 0.5 * std::pow(n, -s) + s * std::pow(n, -s - 1) / 12;
}

}  // namespace

Sample generate_freq_words(const TaskSpec& task, const Resources& res, int64_t units,
                           std::mt19937_64& gen) {
  const auto& p = task.fwe;
  const FamilyWording& w = res.wording.of(Family::FreqWords);
  // RULER's vocabulary size for vocab_size = -1.
  const int64_t vocab_size =
      std::max<int64_t>(5, (res.target_length - tokens_to_generate(Family::FreqWords)) / 50);
  std::set<std::string> distinct;
  while (static_cast<int64_t>(distinct.size()) < vocab_size)
    distinct.insert(random_letters(static_cast<size_t>(p.coded_word_length), 'a', gen));
  std::vector<std::string> vocab(distinct.begin(), distinct.end());
  portable_shuffle(vocab, gen);
  vocab[0] = "...";
  const double norm = zeta(p.alpha);
  std::vector<std::string> words;
  for (int64_t rank = 1; rank <= vocab_size; ++rank) {
    const auto count = static_cast<int64_t>(static_cast<double>(units) * std::pow(rank, -p.alpha) / norm);
    words.insert(words.end(), static_cast<size_t>(count), vocab[static_cast<size_t>(rank - 1)]);
  }
  portable_shuffle(words, gen);
  const TaskText text = render(w, join(words, " "), {});
  Sample sample;
  sample.context = text.context;
  sample.question = text.question;
  sample.answer_prefix = text.answer_prefix;
  sample.answers = {vocab[1], vocab[2], vocab[3]};
  return sample;
}

}  // namespace kvs::ruler
