// Where the user's model and LongBench data live: a flag wins, then an environment variable, then
// the config file, so `kvsearch run --dataset D --profile P` works once the user has said it once.
//   environment: KVSEARCH_MODEL, KVSEARCH_LONGBENCH, KVSEARCH_DB
//   config file: $KVSEARCH_CONFIG, else ./kvsearch.json, else ~/.config/kvsearch/config.json:
//                {"model": "/path/to/Mistral-7B-Instruct-v0.2", "longbench": "/path/to/LongBench",
//                 "db": "results/kvsearch.sqlite"}
#pragma once

#include <string>

namespace kvs {

struct SettingKey {
  const char* config_key;  // "model"
  const char* env_var;     // "KVSEARCH_MODEL"
  const char* flag;        // "--model"
};

inline constexpr SettingKey kModelSetting{"model", "KVSEARCH_MODEL", "--model"};
inline constexpr SettingKey kLongBenchSetting{"longbench", "KVSEARCH_LONGBENCH", "--longbench"};
inline constexpr SettingKey kDatabaseSetting{"db", "KVSEARCH_DB", "--db"};

// The config file in use, or "" when there is none.
std::string config_file_path();

// flag_value if non-empty, else the environment, else the config file, else fallback; throws a
// kvs::Error that says all three ways to set it when nothing gives a value and fallback is empty.
std::string resolve_setting(const SettingKey& key, const std::string& flag_value,
                            const std::string& fallback = "");

}  // namespace kvs
