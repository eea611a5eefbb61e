#include "core/files.h"

#include <fstream>
#include <sstream>

#include "core/error.h"

namespace kvs {

std::string read_file(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error_at(path, "cannot open " + what);
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) throw error_at(path, "cannot read " + what);
  return text.str();
}

nlohmann::json read_json_file(const std::string& path, const std::string& what) {
  const std::string text = read_file(path, what);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw error_at(path, std::string("not valid JSON: ") + e.what());
  }
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw error_at(path, "cannot write the file");
}

}  // namespace kvs
