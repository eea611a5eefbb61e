#include "store/run_identity.h"

#include <cstdint>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/strfmt.h"

namespace kvs::store {

namespace {

// FNV-1a: a fixed, platform-independent hash (std::hash is neither).
uint64_t fnv1a(const std::string& text) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (const unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

// nlohmann's objects keep their keys sorted, so the dump is canonical.
std::string canonical(const std::string& json_text) {
  return nlohmann::json::parse(json_text).dump();
}

std::string quoted(const std::string& text) { return "'" + text + "'"; }

}  // namespace

void check_json(const std::string& text, const std::string& where) {
  if (!nlohmann::json::accept(text)) throw error_at(where, "is not valid JSON: " + text);
}

std::string default_run_key(const RunSpec& spec) {
  check_json(spec.search_json, "search settings of the run");
  check_json(spec.policy_json, "policy template of the run");
  std::string key = spec.dataset + "/" + spec.profile_family;
  if (spec.segments > 0) key += std::to_string(spec.segments);
  key += "/B" + std::to_string(spec.budget) + "/seed" + std::to_string(spec.split_seed);
  if (spec.dev_limit > 0) key += "/dev" + std::to_string(spec.dev_limit);
  const uint64_t hash = fnv1a(canonical(spec.search_json) + "\n" + canonical(spec.policy_json));
  return key + strfmt("/%08llx", static_cast<unsigned long long>(hash >> 32));
}

std::string identity_mismatch(const RunSpec& recorded, const RunSpec& requested) {
  auto differ = [](const std::string& field, const std::string& a, const std::string& b) {
    return field + " " + a + " (recorded) vs " + b;
  };
  if (recorded.model != requested.model)
    return differ("model", quoted(recorded.model), quoted(requested.model));
  if (recorded.dataset != requested.dataset)
    return differ("dataset", quoted(recorded.dataset), quoted(requested.dataset));
  if (recorded.split_seed != requested.split_seed)
    return differ("split seed", std::to_string(recorded.split_seed),
                  std::to_string(requested.split_seed));
  if (recorded.dev_limit != requested.dev_limit)
    return differ("dev question limit", std::to_string(recorded.dev_limit),
                  std::to_string(requested.dev_limit));
  if (recorded.budget != requested.budget)
    return differ("budget", std::to_string(recorded.budget), std::to_string(requested.budget));
  if (recorded.profile_family != requested.profile_family)
    return differ("profile", quoted(recorded.profile_family), quoted(requested.profile_family));
  if (recorded.segments != requested.segments)
    return differ("segments", std::to_string(recorded.segments),
                  std::to_string(requested.segments));
  if (nlohmann::json::parse(recorded.search_json) != nlohmann::json::parse(requested.search_json))
    return differ("search settings", recorded.search_json, requested.search_json);
  if (nlohmann::json::parse(recorded.policy_json) != nlohmann::json::parse(requested.policy_json))
    return differ("policy template", recorded.policy_json, requested.policy_json);
  if (recorded.job_key != requested.job_key)
    return differ("job", quoted(recorded.job_key), quoted(requested.job_key));
  return "";
}

}  // namespace kvs::store
