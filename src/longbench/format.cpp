#include "longbench/format.h"

#include "core/error.h"

namespace kvs::longbench {

namespace {

// Walks the template once; literal text goes to on_text, each field name to on_field.
template <typename OnText, typename OnField>
void parse_template(const std::string& tmpl, const std::string& where, OnText on_text,
                    OnField on_field) {
  size_t i = 0;
  while (i < tmpl.size()) {
    const char c = tmpl[i];
    if (c == '}') {
      if (i + 1 < tmpl.size() && tmpl[i + 1] == '}') {
        on_text("}");
        i += 2;
        continue;
      }
      throw error_at(where, "single '}' at byte " + std::to_string(i) + " of the template");
    }
    if (c != '{') {
      const size_t next = tmpl.find_first_of("{}", i);
      const size_t end = next == std::string::npos ? tmpl.size() : next;
      on_text(tmpl.substr(i, end - i));
      i = end;
      continue;
    }
    if (i + 1 < tmpl.size() && tmpl[i + 1] == '{') {
      on_text("{");
      i += 2;
      continue;
    }
    // A replacement field: up to the '}' that closes it (str.format allows nested braces in a
    // format spec, which this subset rejects anyway).
    size_t depth = 1, j = i + 1;
    for (; j < tmpl.size() && depth > 0; ++j) {
      if (tmpl[j] == '{') ++depth;
      if (tmpl[j] == '}') --depth;
    }
    if (depth > 0) throw error_at(where, "'{' at byte " + std::to_string(i) + " is never closed");
    const std::string field = tmpl.substr(i + 1, j - i - 2);
    if (field.empty() || field.find_first_not_of("0123456789") == std::string::npos)
      throw error_at(where, "positional field '{" + field + "}' (only named fields are supported)");
    if (field.find_first_of(".[]!:{}") != std::string::npos)
      throw error_at(where, "unsupported replacement field '{" + field +
                                "}' (only plain names like {context} are supported)");
    on_field(field);
    i = j;
  }
}

}  // namespace

std::vector<std::string> template_fields(const std::string& tmpl, const std::string& where) {
  std::vector<std::string> fields;
  parse_template(
      tmpl, where, [](const std::string&) {},
      [&](const std::string& name) { fields.push_back(name); });
  return fields;
}

std::string format_template(const std::string& tmpl,
                            const std::map<std::string, std::string>& fields,
                            const std::string& where) {
  std::string out;
  out.reserve(tmpl.size());
  parse_template(
      tmpl, where, [&](const std::string& text) { out += text; },
      [&](const std::string& name) {
        const auto it = fields.find(name);
        if (it == fields.end()) throw error_at(where, "the template uses {" + name + "}, which the record lacks");
        out += it->second;
      });
  return out;
}

}  // namespace kvs::longbench
