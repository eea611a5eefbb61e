#include "core/id_list.h"

#include <limits>
#include <sstream>

#include "core/error.h"

namespace kvs {

std::vector<int32_t> parse_id_list(const std::string& text, const std::string& option) {
  std::vector<int32_t> ids;
  if (text.find_first_not_of(' ') == std::string::npos) return ids;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const size_t first = item.find_first_not_of(' ');
    const size_t last = item.find_last_not_of(' ');
    const std::string digits = first == std::string::npos ? "" : item.substr(first, last - first + 1);
    long long value = 0;
    size_t used = 0;
    try {
      value = std::stoll(digits, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (digits.empty() || used != digits.size() || value < std::numeric_limits<int32_t>::min() ||
        value > std::numeric_limits<int32_t>::max())
      throw Error(option + ": '" + item + "' is not an integer id");
    ids.push_back(static_cast<int32_t>(value));
  }
  if (text.back() == ',') throw Error(option + ": the list ends with a comma");
  return ids;
}

}  // namespace kvs
