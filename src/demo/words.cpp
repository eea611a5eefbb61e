#include "demo/words.h"

#include <set>

#include "core/error.h"
#include "core/rng.h"

namespace kvs::demo {

namespace {

const char* const kConsonants[] = {"b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z"};
const char* const kVowels[] = {"a", "e", "i", "o", "u"};

}  // namespace

std::vector<std::string> make_lexicon(size_t count, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::vector<std::string> words;
  std::set<std::string> seen;
  // 14 * 5 syllables: 4900 two-syllable and 343000 three-syllable words.
  if (count > 100000) throw Error("make_lexicon: at most 100000 words");
  while (words.size() < count) {
    const int syllables = 2 + static_cast<int>(bounded_draw(gen, 2));
    std::string word;
    for (int s = 0; s < syllables; ++s) {
      word += kConsonants[bounded_draw(gen, std::size(kConsonants))];
      word += kVowels[bounded_draw(gen, std::size(kVowels))];
    }
    if (seen.insert(word).second) words.push_back(word);
  }
  return words;
}

const std::string& pick(const std::vector<std::string>& items, std::mt19937_64& gen) {
  if (items.empty()) throw Error("pick: no items to draw from");
  return items[bounded_draw(gen, items.size())];
}

int64_t draw_between(std::mt19937_64& gen, int64_t lo, int64_t hi) {
  if (hi < lo) throw Error("draw_between: empty range");
  return lo + static_cast<int64_t>(bounded_draw(gen, static_cast<uint64_t>(hi - lo + 1)));
}

std::vector<std::string> draw_words(const std::vector<std::string>& lexicon, size_t count,
                                    std::mt19937_64& gen) {
  std::vector<std::string> words;
  words.reserve(count);
  for (size_t i = 0; i < count; ++i) words.push_back(pick(lexicon, gen));
  return words;
}

std::string join_words(const std::vector<std::string>& words, size_t begin, size_t end) {
  std::string out;
  for (size_t i = begin; i < end; ++i) {
    if (i > begin) out += ' ';
    out += words[i];
  }
  return out;
}

}  // namespace kvs::demo
