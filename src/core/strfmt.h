// printf-style formatting into a std::string (torch-free, no logging).
#pragma once

#include <string>

namespace kvs {

std::string strfmt(const char* format, ...) __attribute__((format(printf, 1, 2)));

}  // namespace kvs
