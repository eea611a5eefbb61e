#include "core/settings.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace kvs {

namespace fs = std::filesystem;

std::string config_file_path() {
  if (const char* explicit_path = std::getenv("KVSEARCH_CONFIG")) {
    if (!fs::exists(explicit_path))
      throw error_at(explicit_path, "KVSEARCH_CONFIG names a file that does not exist");
    return explicit_path;
  }
  if (fs::exists("kvsearch.json")) return "kvsearch.json";
  if (const char* home = std::getenv("HOME")) {
    const fs::path user = fs::path(home) / ".config" / "kvsearch" / "config.json";
    if (fs::exists(user)) return user.string();
  }
  return "";
}

std::string resolve_setting(const SettingKey& key, const std::string& flag_value,
                            const std::string& fallback) {
  if (!flag_value.empty()) return flag_value;
  if (const char* env = std::getenv(key.env_var); env && *env) return env;
  const std::string path = config_file_path();
  if (!path.empty()) {
    std::ifstream in(path);
    const auto config = nlohmann::json::parse(in, nullptr, false);
    if (config.is_discarded() || !config.is_object())
      throw error_at(path, "not a valid JSON object");
    if (config.contains(key.config_key)) {
      const auto& value = config[key.config_key];
      if (!value.is_string() || value.get<std::string>().empty())
        throw error_at(path, std::string("field '") + key.config_key + "' must be a non-empty string");
      return value.get<std::string>();
    }
  }
  if (!fallback.empty()) return fallback;
  throw Error(std::string("no ") + key.config_key + " given: pass " + key.flag + ", set " +
              key.env_var + ", or add \"" + key.config_key + "\" to " +
              (path.empty() ? "kvsearch.json (or ~/.config/kvsearch/config.json)" : path));
}

}  // namespace kvs
