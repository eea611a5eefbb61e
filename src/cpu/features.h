// The one CPU feature probe of the project and the one place that picks a kernel's instruction
// set. Every hand-written CPU kernel (this folder) asks `at_least(Level)` before its vector path;
// below that level it runs its fallback (a scalar loop or the plain-ATen path), which is also the
// reference the tests compare it with.
//
// The level is the highest the CPU supports, lowered by the environment variable
// KVS_CPU=scalar|avx2|avx512 (read once, at the first query): the test suite runs every kernel's
// fallback that way on a machine that has the wider instructions. A level above what the CPU
// supports, or an unknown name, is an error naming the variable.
#pragma once

#include <string>

namespace kvs::cpu {

// Ordered: each level includes the ones below it. avx2 means AVX2 with FMA; avx512 means
// AVX-512F on top of avx2.
enum class Level { Scalar = 0, Avx2 = 1, Avx512 = 2 };

// What this CPU supports (probed once).
Level hardware_level();

// The level the kernels use: hardware_level(), or KVS_CPU's value when set.
Level level();

inline bool at_least(Level wanted) { return static_cast<int>(level()) >= static_cast<int>(wanted); }

// "scalar", "avx2", "avx512".
const char* level_name(Level level);

// Parses a level's name; throws kvs::Error naming `field` on an unknown name.
Level parse_level(const std::string& name, const std::string& field);

// Sets the level for this process (the tests loop over the levels the CPU supports); throws
// kvs::Error when the CPU lacks it. Not for use while kernels run on other threads.
void set_level(Level level);

// Sets a level for one scope and restores the previous one at its end.
class ScopedLevel {
 public:
  explicit ScopedLevel(Level level) : previous_(cpu::level()) { set_level(level); }
  ~ScopedLevel() { set_level(previous_); }
  ScopedLevel(const ScopedLevel&) = delete;
  ScopedLevel& operator=(const ScopedLevel&) = delete;

 private:
  Level previous_;
};

}  // namespace kvs::cpu
