// Token ids given on a command line: "1, 15043,29892" (comma-separated integers, spaces around
// them allowed). The one parser of such lists.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kvs {

// The ids of `text` in order (none for an empty text). A blank item, a non-integer or an id
// outside int32 is a kvs::Error naming `option` and the item.
std::vector<int32_t> parse_id_list(const std::string& text, const std::string& option);

}  // namespace kvs
