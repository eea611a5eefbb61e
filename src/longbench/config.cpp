#include "longbench/config.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "longbench/dataset.h"
#include "longbench/format.h"

namespace kvs::longbench {

namespace {

constexpr size_t kExtraDatasetDevSize = 100;

nlohmann::json read_json_object(const std::string& path) {
  if (!std::filesystem::is_regular_file(path)) throw error_at(path, "config file not found");
  std::ifstream in(path, std::ios::binary);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw error_at(path, std::string("malformed JSON: ") + e.what());
  }
  if (!j.is_object()) throw error_at(path, "expected a JSON object of dataset -> value");
  return j;
}

}  // namespace

std::string prompt_config_path(const std::string& longbench_dir) {
  return (std::filesystem::path(longbench_dir) / "config" / "dataset2prompt.json").string();
}

std::string maxlen_config_path(const std::string& longbench_dir) {
  return (std::filesystem::path(longbench_dir) / "config" / "dataset2maxlen.json").string();
}

std::string metric_config_path(const std::string& longbench_dir) {
  return (std::filesystem::path(longbench_dir) / "config" / "dataset2metric.json").string();
}

std::string dev_config_path(const std::string& longbench_dir) {
  return (std::filesystem::path(longbench_dir) / "config" / "dataset2dev.json").string();
}

std::string chat_template_config_path(const std::string& longbench_dir) {
  return (std::filesystem::path(longbench_dir) / "config" / "dataset2chat_template.json").string();
}

std::string prompt_tokens_config_path(const std::string& longbench_dir) {
  return (std::filesystem::path(longbench_dir) / "config" / "dataset2prompt_tokens.json").string();
}

const std::string& Config::prompt_template(const std::string& dataset) const {
  const auto it = prompt_templates.find(dataset);
  if (it == prompt_templates.end())
    throw Error("dataset2prompt.json: no prompt template for '" + dataset + "'");
  return it->second;
}

int Config::max_new_tokens_for(const std::string& dataset) const {
  const auto it = max_new_tokens.find(dataset);
  if (it == max_new_tokens.end())
    throw Error("dataset2maxlen.json: no max_new_tokens for '" + dataset + "'");
  return it->second;
}

int64_t Config::prompt_tokens_for(const std::string& dataset) const {
  const auto it = prompt_tokens.find(dataset);
  if (it == prompt_tokens.end())
    throw Error("dataset2prompt_tokens.json: no prompt tokens for text dataset '" + dataset + "'");
  return it->second;
}

std::optional<tokenizer::ChatTemplate> Config::declared_chat_template(const std::string& dataset) const {
  const auto it = chat_templates.find(dataset);
  if (it == chat_templates.end()) return std::nullopt;
  return it->second;
}

Config load_config(const std::string& longbench_dir) {
  Config config;
  const std::string prompt_path = prompt_config_path(longbench_dir);
  const nlohmann::json prompts = read_json_object(prompt_path);
  for (const auto& [key, value] : prompts.items()) {
    if (!value.is_string())
      throw error_at(prompt_path, "template of '" + key + "' must be a string");
    config.prompt_templates[key] = value.get<std::string>();
  }
  const std::string maxlen_path = maxlen_config_path(longbench_dir);
  const nlohmann::json maxlens = read_json_object(maxlen_path);
  for (const auto& [key, value] : maxlens.items()) {
    if (!value.is_number_integer() || value.get<int64_t>() <= 0 || value.get<int64_t>() > 1 << 20)
      throw error_at(maxlen_path, "max_new_tokens of '" + key + "' must be a positive integer");
    config.max_new_tokens[key] = value.get<int>();
  }
  const std::string chat_path = chat_template_config_path(longbench_dir);
  if (std::filesystem::exists(chat_path)) {
    const nlohmann::json chats = read_json_object(chat_path);
    for (const auto& [key, value] : chats.items()) {
      if (!value.is_string())
        throw error_at(chat_path, "chat template of '" + key + "' must be a string");
      try {
        config.chat_templates[key] = tokenizer::parse_chat_template(value.get<std::string>());
      } catch (const Error& e) {
        throw error_at(chat_path, "'" + key + "': " + e.what());
      }
    }
  }
  std::vector<std::string> required;
  const std::string metric_path = metric_config_path(longbench_dir);
  std::map<std::string, size_t> dev_sizes;  // declared datasets' dev splits, where not 100
  const std::string dev_path = dev_config_path(longbench_dir);
  const nlohmann::json devs =
      std::filesystem::exists(dev_path) ? read_json_object(dev_path) : nlohmann::json::object();
  for (const auto& [key, value] : devs.items()) {
    if (!value.is_number_integer() || value.get<int64_t>() < 0)
      throw error_at(dev_path, "dev questions of '" + key + "' must be a non-negative integer");
    dev_sizes[key] = value.get<size_t>();
  }
  if (std::filesystem::exists(metric_path)) {
    const nlohmann::json metrics = read_json_object(metric_path);
    for (const auto& [key, value] : metrics.items()) {
      if (!value.is_string()) throw error_at(metric_path, "metric of '" + key + "' must be a string");
      const size_t dev = dev_sizes.count(key) ? dev_sizes.at(key) : kExtraDatasetDevSize;
      DatasetInfo info{key, Metric::QaF1, false, false, false, 0, dev};
      try {
        info.metric = metric_from_name(value.get<std::string>());
        register_dataset(info);
      } catch (const Error& e) {
        throw error_at(metric_path, e.what());
      }
      required.push_back(key);
    }
    for (const auto& [key, dev] : dev_sizes)
      if (!metrics.contains(key))
        throw error_at(dev_path, "'" + key + "' is not a dataset of dataset2metric.json");
  } else {
    for (const auto& d : english_datasets()) required.push_back(d.name);
  }
  const std::string tokens_path = prompt_tokens_config_path(longbench_dir);
  const nlohmann::json tokens = std::filesystem::exists(tokens_path) ? read_json_object(tokens_path)
                                                                     : nlohmann::json::object();
  for (const auto& [key, value] : tokens.items()) {
    if (std::find(required.begin(), required.end(), key) != required.end() &&
        is_text_metric(dataset_info(key).metric)) {
      if (!value.is_number_integer() || value.get<int64_t>() < 1 || value.get<int64_t>() > 1 << 20)
        throw error_at(tokens_path, "prompt tokens of '" + key + "' must be a positive integer");
      config.prompt_tokens[key] = value.get<int64_t>();
    } else {
      throw error_at(tokens_path, "'" + key + "' is not a text dataset of dataset2metric.json");
    }
  }
  for (const auto& name : required) {
    if (is_text_metric(dataset_info(name).metric) && !config.prompt_tokens.count(name))
      throw error_at(tokens_path, "no prompt tokens for the text dataset '" + name + "'");
    if (!config.prompt_templates.count(name))
      throw error_at(prompt_path, "no prompt template for '" + name + "'");
    template_fields(config.prompt_templates[name], prompt_path + ": template of '" + name + "'");
    if (!config.max_new_tokens.count(name))
      throw error_at(maxlen_path, "no max_new_tokens for '" + name + "'");
  }
  return config;
}

}  // namespace kvs::longbench
