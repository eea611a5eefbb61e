// The tests' scratch directory: a fresh directory under $TMPDIR (or /tmp) for one test, removed
// with its contents at scope exit. Unique per process, so ctest -j can run tests of one binary side
// by side. POSIX calls instead of std::filesystem::remove_all: PyPI's libtorch.so exports its own std::filesystem symbols, and
// its remove_all crashes when our binaries resolve to it.
#pragma once

#include <ftw.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace kvs::test {

class ScratchDir {
 public:
  ScratchDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/kvs_test_XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (!mkdtemp(buffer.data()))
      throw std::runtime_error("cannot create a directory from " + pattern);
    path_ = buffer.data();
  }
  ~ScratchDir() {
    nftw(
        path_.c_str(),
        [](const char* p, const struct stat*, int, struct FTW*) { return ::remove(p); }, 16,
        FTW_DEPTH | FTW_PHYS);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace kvs::test
