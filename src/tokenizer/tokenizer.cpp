#include "tokenizer/tokenizer.h"

#include <filesystem>

#include "core/error.h"

namespace kvs::tokenizer {

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& model_dir) {
  const auto sp = std::filesystem::path(model_dir) / "tokenizer.model";
  if (std::filesystem::exists(sp)) return load_sentencepiece(sp.string());
  throw error_at(model_dir, "no tokenizer.model in the model directory");
}

}  // namespace kvs::tokenizer
