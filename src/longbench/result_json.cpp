#include "longbench/result_json.h"

#include "core/error.h"
#include "longbench/pyfloat.h"

namespace kvs::longbench {

namespace {

// Dataset names are plain ASCII identifiers; json.dumps would not escape them.
std::string quoted(const std::string& key) { return "\"" + key + "\""; }

}  // namespace

std::string result_json(const std::vector<DatasetResult>& results, bool e, int indent) {
  if (indent < 0) throw Error("result_json: negative indent");
  if (results.empty()) return "{}";
  const std::string pad(indent, ' ');
  std::string out = "{";
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    out += (i ? ",\n" : "\n") + pad + quoted(r.dataset) + ": ";
    if (!e) {
      out += python_json_float(r.score);
      continue;
    }
    if (!r.buckets) throw Error("result_json: " + r.dataset + " was scored without length buckets");
    const std::pair<const char*, double> buckets[] = {{"0-4k", r.buckets->up_to_4k},
                                                      {"4-8k", r.buckets->up_to_8k},
                                                      {"8k+", r.buckets->above_8k}};
    out += "{";
    for (size_t b = 0; b < 3; ++b) {
      out += (b ? ",\n" : "\n") + pad + pad + quoted(buckets[b].first) + ": " +
             python_json_float(buckets[b].second);
    }
    out += "\n" + pad + "}";
  }
  return out + "\n}";
}

std::string per_example_json(const std::vector<DatasetResult>& results) {
  std::string out = "{";
  for (size_t i = 0; i < results.size(); ++i) {
    out += (i ? ", " : "") + quoted(results[i].dataset) + ": [";
    for (size_t k = 0; k < results[i].per_example.size(); ++k)
      out += (k ? ", " : "") + python_json_float(results[i].per_example[k]);
    out += "]";
  }
  return out + "}";
}

}  // namespace kvs::longbench
