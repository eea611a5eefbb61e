#include "core/json_fields.h"

#include "core/error.h"

namespace kvs {

using nlohmann::json;

JsonFields::JsonFields(const json& object, std::string where) : object_(object), where_(std::move(where)) {
  if (!object_.is_object()) throw error_at(where_, "expected a JSON object, got " + object_.dump());
}

const json* JsonFields::find(const char* key) { return get(key, false); }

const json& JsonFields::require(const char* key) { return *get(key, true); }

const json* JsonFields::get(const char* key, bool required) {
  read_.insert(key);
  const auto it = object_.find(key);
  if (it != object_.end()) return &*it;
  if (required) throw error_at(where_, std::string("missing required field \"") + key + "\"");
  return nullptr;
}

std::string JsonFields::text(const char* key, const std::string& fallback, bool required) {
  const json* v = get(key, required);
  if (!v) return fallback;
  if (!v->is_string()) throw error_at(at(key), "expected a string, got " + v->dump());
  return v->get<std::string>();
}

int64_t JsonFields::integer(const char* key, std::optional<int64_t> fallback, int64_t min_value) {
  const json* v = get(key, !fallback);
  if (!v) return *fallback;
  const bool bounded = min_value != std::numeric_limits<int64_t>::min();
  if (!v->is_number_integer() || v->get<int64_t>() < min_value)
    throw error_at(at(key), std::string("expected an integer") +
                                (bounded ? " >= " + std::to_string(min_value) : "") + ", got " + v->dump());
  return v->get<int64_t>();
}

double JsonFields::number(const char* key, double fallback) {
  const json* v = get(key, false);
  if (!v) return fallback;
  if (!v->is_number()) throw error_at(at(key), "expected a number, got " + v->dump());
  return v->get<double>();
}

bool JsonFields::boolean(const char* key, bool fallback) {
  const json* v = get(key, false);
  if (!v) return fallback;
  if (!v->is_boolean()) throw error_at(at(key), "expected true or false, got " + v->dump());
  return v->get<bool>();
}

const json& JsonFields::array(const char* key, bool required) {
  static const json empty = json::array();
  const json* v = get(key, required);
  if (!v) return empty;
  if (!v->is_array()) throw error_at(at(key), "expected an array, got " + v->dump());
  return *v;
}

const json* JsonFields::object(const char* key) {
  const json* v = get(key, false);
  if (v && !v->is_object()) throw error_at(at(key), "expected a JSON object, got " + v->dump());
  return v;
}

void JsonFields::check_all_read() const {
  for (const auto& item : object_.items())
    if (!read_.count(item.key())) throw error_at(at(item.key()), "unknown field");
}

}  // namespace kvs
