// The one strict reader of a JSON object's fields (policies, experiment specs): each field is
// checked for its type, errors name the field's path ("policy.budget", "spec.methods[0].name"), and
// a field nobody asked for is an error, so a typo never falls back to a default silently.
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

namespace kvs {

class JsonFields {
 public:
  // `where` names the object in errors; anything but an object is refused.
  JsonFields(const nlohmann::json& object, std::string where);

  bool has(const char* key) const { return object_.contains(key); }
  // The field, marked as read; nullptr when absent.
  const nlohmann::json* find(const char* key);
  const nlohmann::json& require(const char* key);

  std::string text(const char* key, const std::string& fallback = "", bool required = false);
  // fallback nullopt: required.
  int64_t integer(const char* key, std::optional<int64_t> fallback,
                  int64_t min_value = std::numeric_limits<int64_t>::min());
  double number(const char* key, double fallback);
  bool boolean(const char* key, bool fallback);
  // An empty array when absent and not required.
  const nlohmann::json& array(const char* key, bool required = false);
  const nlohmann::json* object(const char* key);

  std::string at(const std::string& key) const { return where_ + "." + key; }
  const std::string& where() const { return where_; }

  // Throws on the first field nobody asked for.
  void check_all_read() const;

 private:
  const nlohmann::json* get(const char* key, bool required);

  const nlohmann::json& object_;
  std::string where_;
  std::set<std::string> read_;
};

}  // namespace kvs
