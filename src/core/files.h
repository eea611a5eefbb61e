// Whole files in and out, with the project's one-line errors naming the file: the one place a file
// is read or written whole and a JSON document is parsed from one.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace kvs {

// The bytes of `path`; `what` names the file in the error ("the policy file", "config.json").
std::string read_file(const std::string& path, const std::string& what);

// The JSON document of `path`: "cannot open <what>" or "not valid JSON: ..." naming the file.
nlohmann::json read_json_file(const std::string& path, const std::string& what);

// Writes `text` to `path` (replacing it); "cannot write the file" naming it.
void write_file(const std::string& path, const std::string& text);

}  // namespace kvs
