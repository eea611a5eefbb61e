// kvsearch methods: the registered eviction methods, their parameters and references.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/command.h"
#include "core/error.h"
#include "core/files.h"
#include "evict/method.h"
#include "evict/policy.h"

namespace kvs::cli {
namespace {

struct MethodsOptions {
  bool json = false;
  bool markdown = false;
  std::string policies;  // a JSON array of policies to read and write back
};

// Each policy of the file read (checked against its method's declaration) and written back as
// kvsearch records it, one per line; the first bad one is the error, naming its index.
void print_policies(const std::string& path) {
  const nlohmann::json policies = read_json_file(path, "the policies file");
  if (!policies.is_array()) throw error_at(path, "expected a JSON array of policies");
  std::string out;
  for (size_t i = 0; i < policies.size(); ++i)
    out += evict::policy_to_string(evict::policy_from_json(
               policies[i], path + ": policies[" + std::to_string(i) + "]")) +
           "\n";
  std::fputs(out.c_str(), stdout);
}

void print_methods(const MethodsOptions& o) {
  if (!o.policies.empty()) return print_policies(o.policies);
  if (o.json) {
    std::printf("%s\n", evict::methods_to_json().dump(2).c_str());
    return;
  }
  if (o.markdown) {
    std::printf("%s", evict::methods_markdown().c_str());
    return;
  }
  for (const nlohmann::json& m : evict::methods_to_json()) {
    std::printf("%s: %s\n", m["name"].get<std::string>().c_str(),
                m["summary"].get<std::string>().c_str());
    std::printf("  %s; reference: %s, %s%s\n", m["budget"].get<std::string>().c_str(),
                m["paper"].get<std::string>().c_str(), m["code"].get<std::string>().c_str(),
                m["kvpress"].get<std::string>().empty()
                    ? ""
                    : (", kvpress " + m["kvpress"].get<std::string>()).c_str());
    for (const nlohmann::json& p : m["params"]) {
      std::printf("  %-16s %-8s default %-40s %s\n", p["name"].get<std::string>().c_str(),
                  p["type"].get<std::string>().c_str(), p["default"].dump().c_str(),
                  p["doc"].get<std::string>().c_str());
    }
  }
}

void setup_methods(CLI::App& parent) {
  auto options = std::make_shared<MethodsOptions>();
  CLI::App* cmd = parent.add_subcommand(
      "methods", "The eviction methods a policy can name: parameters, defaults, references");
  cmd->callback([options] { print_methods(*options); });
  cmd->add_flag("--json", options->json, "One JSON array");
  cmd->add_flag("--markdown", options->markdown, "The README's table");
  cmd->add_option("--policies", options->policies,
                  "Read a JSON array of policies (each checked against its method) and print "
                  "each as kvsearch records it, one per line");
}

const CommandRegistration methods_registration("methods", setup_methods);

}  // namespace
}  // namespace kvs::cli
