// The synthetic vocabulary of the demo tasks: pronounceable made-up words (consonant-vowel
// syllables), drawn deterministically, so the text is free of any corpus and identical on every
// platform (core/rng.h draws only).
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace kvs::demo {

// `count` distinct lower-case words of two or three syllables, in draw order.
std::vector<std::string> make_lexicon(size_t count, uint64_t seed);

// One element of `items`, drawn uniformly.
const std::string& pick(const std::vector<std::string>& items, std::mt19937_64& gen);

// An integer in [lo, hi], drawn uniformly.
int64_t draw_between(std::mt19937_64& gen, int64_t lo, int64_t hi);

// `count` words drawn independently from the lexicon.
std::vector<std::string> draw_words(const std::vector<std::string>& lexicon, size_t count,
                                    std::mt19937_64& gen);

// The words joined by single spaces.
std::string join_words(const std::vector<std::string>& words, size_t begin, size_t end);

}  // namespace kvs::demo
