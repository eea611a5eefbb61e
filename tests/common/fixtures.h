// Where the tests' fixtures live (tests/fixtures/, described in its README): $KVS_FIXTURES_DIR,
// which CTest sets, else the folder this build was configured from (KVS_TEST_FIXTURES_DIR).
#pragma once

#include <cstdlib>
#include <string>

namespace kvs::test {

inline std::string fixtures_dir() {
  const char* dir = std::getenv("KVS_FIXTURES_DIR");
  return dir && *dir ? dir : KVS_TEST_FIXTURES_DIR;
}

}  // namespace kvs::test
