#include "core/rng.h"

#include "core/error.h"

namespace kvs {

uint64_t bounded_draw(std::mt19937_64& gen, uint64_t bound) {
  if (bound == 0) throw Error("bounded_draw: bound must be positive");
  // Reject draws from the incomplete last block so every residue is equally likely.
  const uint64_t limit = UINT64_MAX - (UINT64_MAX % bound + 1) % bound;
  uint64_t x = gen();
  while (x > limit) x = gen();
  return x % bound;
}

}  // namespace kvs
