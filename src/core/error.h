// The one error type of the project: what failed, where, and (when useful) what to do.
// The CLI prints it as a single line and exits non-zero.
#pragma once

#include <stdexcept>
#include <string>

namespace kvs {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// "<where>: <what>", the usual shape of an error about a file, field or tensor.
inline Error error_at(const std::string& where, const std::string& what) {
  return Error(where + ": " + what);
}

}  // namespace kvs
