// Reading a recorded build_info::git_commit() back: whether it names a dirty tree.
#include "core/build_info.h"

namespace kvs::build_info {

bool is_dirty(const std::string& git_commit) {
  return git_commit.find("-dirty") != std::string::npos;
}

}  // namespace kvs::build_info
