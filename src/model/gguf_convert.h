// A GGUF checkpoint written out as a Hugging Face one: config.json and model.safetensors (f32,
// the dequantized values exactly; Q/K rows in HF order). Nothing else is copied.
#pragma once

#include <string>

#include "model/config.h"

namespace kvs::model {

// model_arg: anything core/checkpoint.h resolves to a GGUF file. Everything is read and checked
// before the first byte is written; an out_dir that holds files is refused.
ModelConfig convert_gguf_to_hf(const std::string& model_arg, const std::string& out_dir);

}  // namespace kvs::model
