// The random strings the tasks hide and ask for, drawn with core/rng.h only (identical on every
// platform): RULER's value kinds and formats.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ruler/tasks.h"

namespace kvs::ruler {

std::string random_number(std::mt19937_64& gen);  // 7 digits, uniform in [1000000, 9999999]
std::string random_uuid(std::mt19937_64& gen);    // version-4 UUID from 128 random bits
std::string random_word_pair(const std::vector<std::string>& words, std::mt19937_64& gen);  // "w1-w2"
// One value of `type` (words: a word pair).
std::string random_value(ValueType type, const std::vector<std::string>& words, std::mt19937_64& gen);
std::string random_letters(size_t length, char first, std::mt19937_64& gen);  // from first..first+25

// `count` distinct indices of [0, n), in draw order (a partial Fisher-Yates shuffle).
std::vector<size_t> sample_without_replacement(size_t n, size_t count, std::mt19937_64& gen);

}  // namespace kvs::ruler
