#include "store/spec_growth.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace kvs::store {

namespace {

bool grows(const nlohmann::json& before, const nlohmann::json& after) {
  if (before.is_object() && after.is_object()) {
    if (before.size() != after.size()) return false;
    for (const auto& [key, value] : before.items())
      if (!after.contains(key) || !grows(value, after.at(key))) return false;
    return true;
  }
  if (before.is_array() && after.is_array())
    return std::all_of(before.begin(), before.end(), [&](const nlohmann::json& entry) {
      return std::find(after.begin(), after.end(), entry) != after.end();
    });
  return before == after;
}

}  // namespace

bool spec_grows(const std::string& before, const std::string& after) {
  return grows(nlohmann::json::parse(before), nlohmann::json::parse(after));
}

}  // namespace kvs::store
