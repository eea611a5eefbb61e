#include "longbench/jsonl.h"

#include <filesystem>
#include <fstream>

#include "core/error.h"

namespace kvs::longbench {

namespace {

// nlohmann's messages start with "[json.exception.parse_error.101] parse error at line 1, ";
// the line is ours to report, so keep what follows.
std::string parse_error_detail(const std::string& what) {
  const size_t column = what.find("column ");
  if (column != std::string::npos) return what.substr(column);
  const size_t bracket = what.find("] ");
  return bracket == std::string::npos ? what : what.substr(bracket + 2);
}

const nlohmann::json& require_field(const nlohmann::json& object, const char* field,
                                    const std::string& where) {
  const auto it = object.find(field);
  if (it == object.end()) throw error_at(where, std::string("missing field '") + field + "'");
  return *it;
}

Error wrong_type(const char* field, const char* expected, const nlohmann::json& value,
                 const std::string& where) {
  return error_at(where, std::string("field '") + field + "' must be " + expected + " (got " +
                             value.type_name() + ")");
}

}  // namespace

void for_each_jsonl_object(
    const std::string& path,
    const std::function<void(const nlohmann::json&, const std::string&)>& on_line) {
  if (!std::filesystem::is_regular_file(path)) throw error_at(path, "file not found");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error_at(path, "cannot open file");
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    const std::string where = path + ":" + std::to_string(number);
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      throw error_at(where, "empty line (expected one JSON object per line)");
    nlohmann::json object;
    try {
      object = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      throw error_at(where, "malformed JSON: " + parse_error_detail(e.what()));
    }
    if (!object.is_object())
      throw error_at(where, std::string("expected a JSON object, got ") + object.type_name());
    on_line(object, where);
  }
}

std::string get_string(const nlohmann::json& object, const char* field, const std::string& where) {
  const auto& value = require_field(object, field, where);
  if (!value.is_string()) throw wrong_type(field, "a string", value, where);
  return value.get<std::string>();
}

int64_t get_integer(const nlohmann::json& object, const char* field, const std::string& where) {
  const auto& value = require_field(object, field, where);
  if (!value.is_number_integer()) throw wrong_type(field, "an integer", value, where);
  return value.get<int64_t>();
}

std::vector<std::string> get_string_list(const nlohmann::json& object, const char* field,
                                         const std::string& where) {
  const auto& value = require_field(object, field, where);
  if (!value.is_array()) throw wrong_type(field, "a list of strings", value, where);
  std::vector<std::string> out;
  out.reserve(value.size());
  for (const auto& item : value) {
    if (!item.is_string()) throw wrong_type(field, "a list of strings", item, where);
    out.push_back(item.get<std::string>());
  }
  return out;
}

std::optional<std::vector<std::string>> get_optional_string_list(const nlohmann::json& object,
                                                                 const char* field,
                                                                 const std::string& where) {
  if (require_field(object, field, where).is_null()) return std::nullopt;
  return get_string_list(object, field, where);
}

}  // namespace kvs::longbench
