#include "core/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>


namespace kvs {

namespace log {

namespace {
spdlog::logger& logger() {
  static const std::shared_ptr<spdlog::logger> instance = [] {
    auto l = spdlog::stderr_color_mt("kvsearch");
    l->set_pattern("[%H:%M:%S] %^%l%$ %v");
    return l;
  }();
  return *instance;
}
}  // namespace

void set_verbose(bool verbose) {
  logger().set_level(verbose ? spdlog::level::debug : spdlog::level::info);
}
void debug(const std::string& message) { logger().debug(message); }
void info(const std::string& message) { logger().info(message); }
void warn(const std::string& message) { logger().warn(message); }

}  // namespace log

}  // namespace kvs
