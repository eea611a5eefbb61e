// The tests' one scratch directory: a fresh directory under $TMPDIR (or /tmp) for one test,
// removed with its contents at scope exit. Unique per process and object, so ctest -j can run the
// tests of one binary side by side. Removal uses POSIX calls, not std::filesystem::remove_all:
// PyPI's libtorch.so exports its own std::filesystem symbols, and its remove_all crashes when our
// binaries resolve to it.
#pragma once

#include <ftw.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace kvs::test {

class ScratchDir {
 public:
  // `tag` names the directory (kvs_<tag>_XXXXXX) so that a leftover one tells which test made it.
  explicit ScratchDir(const std::string& tag = "test") {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/kvs_" + tag + "_XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (!mkdtemp(buffer.data()))
      throw std::runtime_error("cannot create a directory from " + pattern);
    path_ = buffer.data();
  }
  ~ScratchDir() {
    nftw(
        path_.c_str(),
        [](const char* p, const struct stat*, int, struct FTW*) { return ::remove(p), 0; }, 16,
        FTW_DEPTH | FTW_PHYS);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  // The path of `name` inside the directory (nothing is created).
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  std::filesystem::path operator/(const std::string& name) const {
    return std::filesystem::path(path_) / name;
  }
  // Writes `text` to <dir>/<relative>, creating parent folders; returns the full path.
  std::string write(const std::string& relative, const std::string& text) const {
    const auto full = std::filesystem::path(path_) / relative;
    std::filesystem::create_directories(full.parent_path());
    std::ofstream out(full, std::ios::binary);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + full.string());
    return full.string();
  }

 private:
  std::string path_;
};

}  // namespace kvs::test
