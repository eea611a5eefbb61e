// A float's bit pattern and back (half/bf16 conversion, GGUF scalars, protobuf fixed32): the one
// place the bytes are reinterpreted, by memcpy, which is defined behaviour where a cast is not.
#pragma once

#include <cstdint>
#include <cstring>

namespace kvs {

inline float float_from_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline double double_from_bits(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

inline uint32_t bits_of(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

}  // namespace kvs
