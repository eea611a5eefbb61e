#include "cpu/features.h"

#include <atomic>
#include <cstdlib>

#include "core/error.h"

namespace kvs::cpu {

namespace {

Level probe() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (avx2 && __builtin_cpu_supports("avx512f")) return Level::Avx512;
  if (avx2) return Level::Avx2;
#endif
  return Level::Scalar;
}

void check_supported(Level wanted, const std::string& field) {
  if (static_cast<int>(wanted) > static_cast<int>(hardware_level()))
    throw error_at(field, std::string("this CPU supports at most ") + level_name(hardware_level()) +
                              ", not " + level_name(wanted));
}

Level from_environment() {
  const char* value = std::getenv("KVS_CPU");
  if (!value || !*value) return hardware_level();
  const std::string field = std::string("KVS_CPU=") + value;
  const Level wanted = parse_level(value, field);
  check_supported(wanted, field);
  return wanted;
}

constexpr int kUnset = -1;
std::atomic<int> current{kUnset};

}  // namespace

Level hardware_level() {
  static const Level probed = probe();
  return probed;
}

Level level() {
  int value = current.load(std::memory_order_relaxed);
  if (value == kUnset) {
    value = static_cast<int>(from_environment());
    current.store(value, std::memory_order_relaxed);
  }
  return static_cast<Level>(value);
}

// Indexed by Level's value.
constexpr const char* kLevelNames[] = {"scalar", "avx2", "avx512"};

const char* level_name(Level level) { return kLevelNames[static_cast<int>(level)]; }

Level parse_level(const std::string& name, const std::string& field) {
  for (int l = 0; l < 3; ++l)
    if (name == kLevelNames[l]) return static_cast<Level>(l);
  throw error_at(field, "unknown CPU level '" + name + "' (scalar, avx2 or avx512)");
}

void set_level(Level level) {
  check_supported(level, std::string("CPU level ") + level_name(level));
  current.store(static_cast<int>(level), std::memory_order_relaxed);
}

}  // namespace kvs::cpu
