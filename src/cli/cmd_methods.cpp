// kvsearch methods: the registered eviction methods, their parameters and references.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "evict/method.h"

namespace kvs::cli {
namespace {

struct MethodsOptions {
  bool json = false;
  bool markdown = false;
};

void print_methods(const MethodsOptions& o) {
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
}

const CommandRegistration methods_registration("methods", setup_methods);

}  // namespace
}  // namespace kvs::cli
