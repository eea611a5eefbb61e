// Logging. Only log.cpp includes spdlog: LibTorch bundles its own fmt headers, which clash with the
// system fmt that Debian's spdlog is built on, so translation units that see torch headers must
// never include spdlog. Messages are plain strings; kvs::strfmt formats printf-style.
#pragma once

#include <string>

namespace kvs {

namespace log {
void set_verbose(bool verbose);
void debug(const std::string& message);
void info(const std::string& message);
void warn(const std::string& message);
}  // namespace log

// printf-style formatting into a std::string.
std::string strfmt(const char* format, ...) __attribute__((format(printf, 1, 2)));

}  // namespace kvs
