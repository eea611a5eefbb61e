// kvsearch convert: a GGUF checkpoint written as a Hugging Face one (config.json + f32 safetensors).
#include <CLI/CLI.hpp>

#include "cli/command.h"
#include "core/log.h"
#include "model/gguf_convert.h"

namespace {

void setup_convert(CLI::App& parent) {
  auto* cmd = parent.add_subcommand("convert", "Write a GGUF checkpoint as a Hugging Face one (f32 safetensors)");
  auto model = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  cmd->add_option("--model", *model, "A .gguf file, a directory holding one, or a registered name")->required();
  cmd->add_option("--out", *out, "Output directory (new or empty)")->required();
  cmd->callback([model, out] {
    const auto config = kvs::model::convert_gguf_to_hf(*model, *out);
    kvs::log::info(kvs::strfmt("wrote %s: %.2fM parameters, %lld layers, vocab %lld", out->c_str(),
                               config.parameter_count() / 1e6,
                               static_cast<long long>(config.num_hidden_layers),
                               static_cast<long long>(config.vocab_size)));
  });
}

const kvs::cli::CommandRegistration convert_registration("convert", setup_convert);

}  // namespace
