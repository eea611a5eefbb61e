#include "ruler/values.h"

#include <cstdio>
#include <numeric>

#include "core/error.h"
#include "core/rng.h"

namespace kvs::ruler {

std::string random_number(std::mt19937_64& gen) {
  return std::to_string(1000000 + bounded_draw(gen, 9000000));
}

std::string random_uuid(std::mt19937_64& gen) {
  uint64_t hi = gen(), lo = gen();
  hi = (hi & ~0xf000ULL) | 0x4000ULL;                  // version 4
  lo = (lo & ~(0xc000ULL << 48)) | (0x8000ULL << 48);  // RFC 4122 variant
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08llx-%04llx-%04llx-%04llx-%012llx",
                static_cast<unsigned long long>(hi >> 32),
                static_cast<unsigned long long>((hi >> 16) & 0xffff),
                static_cast<unsigned long long>(hi & 0xffff),
                static_cast<unsigned long long>(lo >> 48),
                static_cast<unsigned long long>(lo & 0xffffffffffffULL));
  return buf;
}

std::string random_word_pair(const std::vector<std::string>& words, std::mt19937_64& gen) {
  const auto& first = words[bounded_draw(gen, words.size())];
  return first + "-" + words[bounded_draw(gen, words.size())];
}

std::string random_value(ValueType type, const std::vector<std::string>& words, std::mt19937_64& gen) {
  switch (type) {
    case ValueType::Words:
      return random_word_pair(words, gen);
    case ValueType::Numbers:
      return random_number(gen);
    case ValueType::Uuids:
      return random_uuid(gen);
  }
  throw Error("random_value: unknown value type");
}

std::string random_letters(size_t length, char first, std::mt19937_64& gen) {
  std::string s;
  for (size_t i = 0; i < length; ++i) s.push_back(static_cast<char>(first + bounded_draw(gen, 26)));
  return s;
}

std::vector<size_t> sample_without_replacement(size_t n, size_t count, std::mt19937_64& gen) {
  if (count > n) throw Error("sample_without_replacement: " + std::to_string(count) + " of " + std::to_string(n));
  std::vector<size_t> pool(n);
  std::iota(pool.begin(), pool.end(), size_t{0});
  for (size_t i = 0; i < count; ++i) std::swap(pool[i], pool[i + bounded_draw(gen, n - i)]);
  pool.resize(count);
  return pool;
}

}  // namespace kvs::ruler
