#include "evict/params.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/json_fields.h"
#include "core/strfmt.h"

namespace kvs::evict {

using nlohmann::json;

namespace {

ParamSpec spec_of(std::string name, ParamType type, ParamValue fallback, std::string doc) {
  ParamSpec spec;
  spec.name = std::move(name);
  spec.type = type;
  spec.fallback = std::move(fallback);
  spec.doc = std::move(doc);
  return spec;
}

std::string joined(const std::vector<std::string>& texts) {
  std::string out;
  for (const std::string& t : texts) out += (out.empty() ? "" : ", ") + t;
  return out;
}

void check_range(const ParamSpec& spec, double value, const std::string& where) {
  if (value >= spec.minimum && value <= spec.maximum) return;
  throw error_at(where,
                 std::isinf(spec.maximum)
                     ? strfmt("must be >= %g, got %g", spec.minimum, value)
                     : strfmt("must be in [%g, %g], got %g", spec.minimum, spec.maximum, value));
}

void check_choice(const ParamSpec& spec, const std::string& value, const std::string& where) {
  if (std::find(spec.choices.begin(), spec.choices.end(), value) == spec.choices.end())
    throw error_at(where, "expected one of " + joined(spec.choices) + ", got '" + value + "'");
}

// The value's alternative matches the declared type.
bool holds_type(const ParamValue& value, ParamType type) {
  switch (type) {
    case ParamType::Integer:
      return std::holds_alternative<int64_t>(value);
    case ParamType::Number:
      return std::holds_alternative<double>(value);
    case ParamType::Boolean:
      return std::holds_alternative<bool>(value);
    case ParamType::Choice:
      return std::holds_alternative<std::string>(value);
    case ParamType::Profile:
      return std::holds_alternative<Profile>(value);
  }
  return false;
}

void check_value(const ParamSpec& spec, const ParamValue& value, const std::string& where) {
  if (!holds_type(value, spec.type))
    throw error_at(where, std::string("expected ") + param_type_name(spec.type) + ", got " +
                              param_value_to_json(value).dump());
  if (const auto* i = std::get_if<int64_t>(&value)) check_range(spec, double(*i), where);
  if (const auto* d = std::get_if<double>(&value)) check_range(spec, *d, where);
  if (const auto* s = std::get_if<std::string>(&value)) check_choice(spec, *s, where);
}

}  // namespace

Param<int64_t> integer_param(std::string name, int64_t fallback, int64_t minimum, std::string doc) {
  Param<int64_t> p{spec_of(std::move(name), ParamType::Integer, fallback, std::move(doc))};
  p.spec.minimum = double(minimum);
  return p;
}

Param<double> number_param(std::string name, double fallback, double minimum, std::string doc) {
  Param<double> p{spec_of(std::move(name), ParamType::Number, fallback, std::move(doc))};
  p.spec.minimum = minimum;
  return p;
}

Param<double> number_param(std::string name, double fallback, double minimum, double maximum,
                           std::string doc) {
  Param<double> p = number_param(std::move(name), fallback, minimum, std::move(doc));
  p.spec.maximum = maximum;
  return p;
}

Param<bool> boolean_param(std::string name, bool fallback, std::string doc) {
  return {spec_of(std::move(name), ParamType::Boolean, fallback, std::move(doc))};
}

Param<std::string> choice_param(std::string name, std::string fallback,
                                std::vector<std::string> choices, std::string doc) {
  Param<std::string> p{
      spec_of(std::move(name), ParamType::Choice, std::move(fallback), std::move(doc))};
  p.spec.choices = std::move(choices);
  return p;
}

Param<Profile> profile_param(std::string name, Profile fallback, std::string doc) {
  return {spec_of(std::move(name), ParamType::Profile, std::move(fallback), std::move(doc))};
}

std::string Params::key() const {
  std::string out;
  for (const auto& [name, value] : values_)
    out += name + "=" + param_value_to_json(value).dump() + ";";
  return out;
}

Params default_params(const std::vector<ParamSpec>& specs) {
  Params params;
  for (const ParamSpec& spec : specs) params.values_[spec.name] = spec.fallback;
  return params;
}

Params read_params(const std::vector<ParamSpec>& specs, JsonFields& fields) {
  Params params;
  for (const ParamSpec& spec : specs) {
    const char* name = spec.name.c_str();
    const std::string where = fields.at(spec.name);
    ParamValue value = spec.fallback;
    if (fields.has(name)) {
      switch (spec.type) {
        case ParamType::Integer:
          value = fields.integer(name, std::nullopt);
          break;
        case ParamType::Number:
          value = fields.number(name, 0.0);
          break;
        case ParamType::Boolean:
          value = fields.boolean(name, false);
          break;
        case ParamType::Choice:
          value = fields.text(name, "", true);
          break;
        case ParamType::Profile:
          value = profile_from_json(*fields.find(name), where);
          break;
      }
    }
    check_value(spec, value, where);
    params.values_[spec.name] = std::move(value);
  }
  return params;
}

void check_params(const std::vector<ParamSpec>& specs, const Params& params,
                  const std::string& owner, const std::string& where) {
  for (const ParamSpec& spec : specs) {
    const auto it = params.values().find(spec.name);
    if (it == params.values().end()) throw error_at(where + "." + spec.name, "missing");
    check_value(spec, it->second, where + "." + spec.name);
  }
  for (const auto& [name, value] : params.values()) {
    const bool declared =
        std::any_of(specs.begin(), specs.end(), [&](const ParamSpec& s) { return s.name == name; });
    if (!declared) throw error_at(where + "." + name, "not a parameter of " + owner);
  }
}

json param_value_to_json(const ParamValue& value) {
  return std::visit(
      [](const auto& v) -> json {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, Profile>)
          return profile_to_json(v);
        else
          return json(v);
      },
      value);
}

const char* param_type_name(ParamType type) {
  switch (type) {
    case ParamType::Integer:
      return "integer";
    case ParamType::Number:
      return "number";
    case ParamType::Boolean:
      return "boolean";
    case ParamType::Choice:
      return "text";
    case ParamType::Profile:
      return "profile";
  }
  return "?";
}

json param_spec_to_json(const ParamSpec& spec) {
  json out{{"name", spec.name},
           {"type", param_type_name(spec.type)},
           {"default", param_value_to_json(spec.fallback)},
           {"doc", spec.doc}};
  if (spec.type == ParamType::Integer || spec.type == ParamType::Number) {
    if (!std::isinf(spec.minimum)) out["minimum"] = spec.minimum;
    if (!std::isinf(spec.maximum)) out["maximum"] = spec.maximum;
  }
  if (!spec.choices.empty()) out["choices"] = spec.choices;
  return out;
}

json profile_to_json(const Profile& profile) {
  return json{{"profile", profile_kind_name(profile.kind())}, {"a", profile.params()}};
}

Profile profile_from_json(const json& value, const std::string& where) {
  JsonFields r(value, where);
  const ProfileKind kind = parse_profile_kind(r.text("profile", "", true), r.at("profile"));
  const json& a = r.require("a");
  if (!a.is_array()) throw error_at(r.at("a"), "expected an array of numbers, got " + a.dump());
  std::vector<double> params;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].is_number()) {
      throw error_at(strfmt("%s[%zu]", r.at("a").c_str(), i),
                     "expected a number, got " + a[i].dump());
    }
    params.push_back(a[i].get<double>());
  }
  r.check_all_read();
  return Profile::make(kind, std::move(params), r.at("a"));
}

}  // namespace kvs::evict
