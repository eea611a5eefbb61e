// Portable randomness: identical sequences on every platform and standard library.
// std::mt19937_64 is specified exactly by the standard; the distributions are not,
// so bounded draws and shuffles are implemented here.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace kvs {

// Uniform integer in [0, bound) by rejection sampling over the top of the 64-bit range.
uint64_t bounded_draw(std::mt19937_64& gen, uint64_t bound);

// Fisher-Yates shuffle (from the last element down, as Knuth's Algorithm P).
template <typename T>
void portable_shuffle(std::vector<T>& items, std::mt19937_64& gen) {
  for (size_t i = items.size(); i > 1; --i) {
    const size_t j = static_cast<size_t>(bounded_draw(gen, i));
    std::swap(items[i - 1], items[j]);
  }
}

}  // namespace kvs
