#include "model/gguf_convert.h"

#include <filesystem>
#include <fstream>
#include <limits>

#include "core/checkpoint.h"
#include "core/error.h"
#include "core/gguf.h"
#include "model/gguf_weights.h"

namespace kvs::model {

namespace fs = std::filesystem;

ModelConfig convert_gguf_to_hf(const std::string& model_arg, const std::string& out_dir) {
  const Checkpoint checkpoint = resolve_checkpoint(model_arg);
  if (checkpoint.kind != CheckpointKind::gguf)
    throw error_at(model_arg, "not a GGUF checkpoint (convert reads .gguf files)");
  if (fs::exists(out_dir) && !fs::is_empty(out_dir))
    throw error_at(out_dir, "the output directory exists and is not empty");
  const gguf::File file = gguf::File::open(checkpoint.path);
  const ModelConfig config = config_from_gguf(file);
  GgufTensorSource source(file, config);
  const Weights weights = load_weights(source, config, at::kCPU, at::kFloat);
  save_weights(out_dir, config, weights, "f32", std::numeric_limits<int64_t>::max());
  const std::string config_path = (fs::path(out_dir) / "config.json").string();
  std::ofstream out(config_path);
  out << config_to_json(config);
  if (!out) throw error_at(config_path, "cannot write");
  return config;
}

}  // namespace kvs::model
