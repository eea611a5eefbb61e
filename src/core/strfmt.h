// printf-style formatting into a std::string, and joining strings (torch-free, no logging).
#pragma once

#include <string>
#include <vector>

namespace kvs {

std::string strfmt(const char* format, ...) __attribute__((format(printf, 1, 2)));

// The parts with `separator` between them ("" for none).
std::string join(const std::vector<std::string>& parts, const std::string& separator);

}  // namespace kvs
