// A method's parameters, typed. A method declares each parameter once, as a handle
// (`const Param<int64_t> kWindow = integer_param("window", 8, 1, "...")`): its JSON field, type,
// default, range and meaning. The card lists the handles' specs (MethodInfo::params), the policy
// reader checks a policy against them (unknown name, wrong type, out of range: one line naming the
// field), and the method reads its values through the same handles (`params.get(kWindow)`), so no
// call site names a parameter by a string. Torch-free.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <variant>
#include <vector>

#include "core/error.h"
#include "evict/profile.h"

namespace kvs {
class JsonFields;
}

namespace kvs::evict {

// A parameter's value: an integer, a number, a boolean, one text of a list of choices, or a layer
// profile (the paper's lambda coefficients over depth).
using ParamValue = std::variant<int64_t, double, bool, std::string, Profile>;
enum class ParamType { Integer, Number, Boolean, Choice, Profile };

// One declared parameter.
struct ParamSpec {
  std::string name;  // the policy's JSON field
  ParamType type = ParamType::Integer;
  ParamValue fallback = int64_t{0};                           // the default
  double minimum = -std::numeric_limits<double>::infinity();  // integers and numbers
  double maximum = std::numeric_limits<double>::infinity();
  std::vector<std::string> choices;  // a choice's texts
  std::string doc;
};

// A typed handle of a declared parameter: what a method reads its value through.
template <class T>
struct Param {
  ParamSpec spec;
};

Param<int64_t> integer_param(std::string name, int64_t fallback, int64_t minimum, std::string doc);
Param<double> number_param(std::string name, double fallback, double minimum, std::string doc);
Param<double> number_param(std::string name, double fallback, double minimum, double maximum,
                           std::string doc);
Param<bool> boolean_param(std::string name, bool fallback, std::string doc);
// A text taking one of `choices` (fallback among them).
Param<std::string> choice_param(std::string name, std::string fallback,
                                std::vector<std::string> choices, std::string doc);
Param<Profile> profile_param(std::string name, Profile fallback, std::string doc);

// A policy's parameter values, every declared parameter present (its default where the policy's
// JSON leaves it out).
class Params {
 public:
  template <class T>
  const T& get(const Param<T>& param) const {
    const auto it = values_.find(param.spec.name);
    if (it == values_.end() || !std::holds_alternative<T>(it->second))
      throw Error("parameter " + param.spec.name + " is not set: the method does not declare it");
    return std::get<T>(it->second);
  }
  template <class T>
  bool has(const Param<T>& param) const {
    const auto it = values_.find(param.spec.name);
    return it != values_.end() && std::holds_alternative<T>(it->second);
  }
  // Sets a value; Policy::validate then checks it against the declaration.
  template <class T>
  void set(const Param<T>& param, T value) {
    values_[param.spec.name] = std::move(value);
  }
  const std::map<std::string, ParamValue>& values() const { return values_; }
  // Every value, compact (a key under which policies that differ in nothing else share work).
  std::string key() const;

  bool operator==(const Params& other) const { return values_ == other.values_; }
  bool operator!=(const Params& other) const { return !(*this == other); }

 private:
  friend Params default_params(const std::vector<ParamSpec>& specs);
  friend Params read_params(const std::vector<ParamSpec>& specs, JsonFields& fields);
  std::map<std::string, ParamValue> values_;
};

// The declared parameters at their defaults.
Params default_params(const std::vector<ParamSpec>& specs);
// Each declared parameter from the object's fields (absent: its default), checked for its type
// and range; errors read "<where>.<name>: what is wrong". Marks the fields it read.
Params read_params(const std::vector<ParamSpec>& specs, JsonFields& fields);
// Every value declared, of its type and in its range; every declared parameter present.
void check_params(const std::vector<ParamSpec>& specs, const Params& params,
                  const std::string& owner, const std::string& where);

nlohmann::json param_value_to_json(const ParamValue& value);
// A declaration for `kvsearch methods --json`: name, type, default, range, choices, doc.
nlohmann::json param_spec_to_json(const ParamSpec& spec);
const char* param_type_name(ParamType type);

// {"profile": "global" | "segments" | "curve", "a": [...]}
nlohmann::json profile_to_json(const Profile& profile);
Profile profile_from_json(const nlohmann::json& value, const std::string& where);

}  // namespace kvs::evict
