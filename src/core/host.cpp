#include <unistd.h>

#include "core/build_info.h"

namespace kvs::build_info {

std::string host_name() {
  char name[256] = {0};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

}  // namespace kvs::build_info
