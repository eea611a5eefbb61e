// Reading JSON Lines files with errors that name the file, the line and the field: the loaders of
// LongBench records and of prediction files share these checks.
#pragma once

#include <nlohmann/json.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kvs::longbench {

// Calls on_line(object, "path:N") for every line of the file, each parsed as one JSON object.
// Throws kvs::Error naming path:N for a missing file, malformed JSON or a line that is not an
// object.
void for_each_jsonl_object(const std::string& path,
                           const std::function<void(const nlohmann::json&, const std::string&)>& on_line);

// Field accessors: throw "<where>: field 'name' ..." when missing or of the wrong type.
std::string get_string(const nlohmann::json& object, const char* field, const std::string& where);
int64_t get_integer(const nlohmann::json& object, const char* field, const std::string& where);
std::vector<std::string> get_string_list(const nlohmann::json& object, const char* field,
                                         const std::string& where);
// A list of strings or null (LongBench's all_classes).
std::optional<std::vector<std::string>> get_optional_string_list(const nlohmann::json& object,
                                                                 const char* field,
                                                                 const std::string& where);

}  // namespace kvs::longbench
