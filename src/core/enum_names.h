// Enums spelled as words in JSON files and on command lines: one table per enum, read both ways,
// with the project's one-line error for a word that is not in the table.
#pragma once

#include <cstddef>
#include <string>

#include "core/error.h"

namespace kvs {

template <typename Enum>
struct EnumName {
  Enum value;
  const char* name;
};

template <typename Enum, size_t N>
const char* enum_name(Enum value, const EnumName<Enum> (&names)[N]) {
  for (const auto& n : names)
    if (n.value == value) return n.name;
  return "?";
}

// "unknown <what> '<text>' (expected a, b or c)" at `where` when `text` names none of them.
template <typename Enum, size_t N>
Enum parse_enum(const std::string& text, const std::string& where, const char* what,
                const EnumName<Enum> (&names)[N]) {
  std::string expected;
  for (size_t i = 0; i < N; ++i) {
    if (text == names[i].name) return names[i].value;
    expected += std::string(i == 0 ? "" : i + 1 == N ? " or " : ", ") + names[i].name;
  }
  throw error_at(where, "unknown " + std::string(what) + " '" + text + "' (expected " + expected + ")");
}

}  // namespace kvs
