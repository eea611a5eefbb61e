#include "evict/decoding.h"

#include <nlohmann/json.hpp>

#include "core/enum_names.h"
#include "core/error.h"
#include "core/json_fields.h"
#include "core/strfmt.h"
#include "evict/method.h"
#include "evict/policy.h"

namespace kvs::evict {

namespace {
const EnumName<DecodePositions> kPositions[] = {{DecodePositions::Original, "original"},
                                                {DecodePositions::Cache, "cache"}};
}  // namespace

const char* decode_positions_name(DecodePositions positions) {
  return enum_name(positions, kPositions);
}

DecodePositions parse_decode_positions(const std::string& text, const std::string& where) {
  return parse_enum(text, where, "position rule", kPositions);
}

DecodingSchedule decoding_from_json(const nlohmann::json& value, const std::string& where) {
  JsonFields r(value, where);
  DecodingSchedule s;
  s.divide_length = r.integer("divide_length", 0, 1);
  if (s.divide_length > 0 && r.has("interval"))
    throw error_at(where + ".interval",
                   "give interval or divide_length (R-KV's trigger), not both");
  s.interval = s.divide_length > 0 ? s.divide_length : r.integer("interval", std::nullopt, 1);
  s.target = r.integer("target", std::nullopt, 1);
  s.buffer = r.integer("buffer", s.buffer, 1);
  if (r.has("positions"))
    s.positions = parse_decode_positions(r.text("positions", "", true), r.at("positions"));
  r.check_all_read();
  return s;
}

nlohmann::json decoding_to_json(const DecodingSchedule& s) {
  nlohmann::json out = {{"target", s.target}, {"buffer", s.buffer}};
  if (s.divide_length > 0)
    out["divide_length"] = s.divide_length;
  else
    out["interval"] = s.interval;
  // The default is left out, so that a schedule's JSON reads as it was written.
  if (s.positions != DecodePositions::Original)
    out["positions"] = decode_positions_name(s.positions);
  return out;
}

std::string decoding_refusal(const Policy& policy) {
  const MethodInfo& info = policy.method->info();
  if (std::string own = policy.method->decoding_refusal(policy.params); !own.empty()) return own;
  if (policy.base)
    if (std::string own = policy.base->method->decoding_refusal(policy.base->params); !own.empty())
      return own;
  if (info.layer_budgets)
    return info.name + " moves its budget between layers once every layer's prefill is seen";
  if (policy.base && policy.base->method->info().ragged)
    return policy.base->method->info().name +
           " keeps different counts per KV head: as a base its scores would be per head";
  if (policy.cache_per_query_head() || (policy.base && policy.base->cache_per_query_head()))
    return "granularity query_head keeps a cache per query head; set \"granularity\": \"kv_head\"";
  return "";
}

void check_decoding(const Policy& policy, const DecodingSchedule& schedule,
                    const std::string& where) {
  const std::string at = where + ".decoding";
  if (const std::string why = decoding_refusal(policy); !why.empty())
    throw error_at(at, policy.method_name() + " cannot compress while decoding: " + why);
  if (schedule.positions == DecodePositions::Cache && policy.method->info().ragged)
    throw error_at(at + ".positions",
                   policy.method_name() +
                       " may keep different counts per KV head, so its heads' next positions "
                       "within the cache would differ: use \"original\"");
  const int64_t kept = policy.method->always_kept(policy.params);
  if (schedule.target < kept)
    throw error_at(
        at + ".target",
        strfmt("%lld does not hold the %lld entries %s always keeps (its sinks or "
               "window)",
               (long long)schedule.target, (long long)kept, policy.method_name().c_str()));
  const Policy& scorer = policy.base ? *policy.base : policy;
  const int64_t rows = std::max(policy.method->decoding_query_rows(policy.params),
                                scorer.method->decoding_query_rows(scorer.params));
  if (schedule.query_rows() < rows)
    throw error_at(
        schedule.buffer < schedule.interval ? at + ".buffer" : at + ".interval",
        strfmt("a compression reads the queries of min(interval, buffer) = %lld "
               "steps; %s needs %lld",
               (long long)schedule.query_rows(), policy.method_name().c_str(), (long long)rows));
}

}  // namespace kvs::evict
