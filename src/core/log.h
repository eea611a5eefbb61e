// Logging. Only log.cpp includes spdlog: LibTorch bundles its own fmt headers, which clash with the
// system fmt that Debian's spdlog is built on, so translation units that see torch headers must
// never include spdlog. Messages are plain strings (kvs::strfmt, core/strfmt.h, formats them).
#pragma once

#include <string>

#include "core/strfmt.h"

namespace kvs {

namespace log {
void set_verbose(bool verbose);
void debug(const std::string& message);
void info(const std::string& message);
void warn(const std::string& message);
}  // namespace log

}  // namespace kvs
