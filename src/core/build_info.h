// What a result must carry to be reproducible: the commit and build it came from, and the host.
#pragma once

#include <string>

namespace kvs::build_info {

// The binary's source: the 12-digit commit, "<commit>-dirty-<hash>" when tracked files differed
// from it at build time (hash: 12 digits of the SHA-256 of `git diff HEAD`, computed by
// cmake/write_build_info.cmake); "unknown" outside git. Recorded with every run and split.
std::string git_commit();
std::string build_type();  // CMAKE_BUILD_TYPE
std::string host_name();

// Whether a recorded git_commit names a dirty tree ("-dirty", with or without its diff's hash).
bool is_dirty(const std::string& git_commit);

}  // namespace kvs::build_info
