// What a result must carry to be reproducible: the commit and build it came from, and the host.
#pragma once

#include <string>

namespace kvs::build_info {

std::string git_commit();  // short hash, "-dirty" when tracked files had changes; "unknown" outside git
std::string build_type();  // CMAKE_BUILD_TYPE
std::string host_name();

}  // namespace kvs::build_info
