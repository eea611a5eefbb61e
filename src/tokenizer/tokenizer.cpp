#include "tokenizer/tokenizer.h"

#include <filesystem>
#include <fstream>

#include "core/checkpoint.h"
#include "core/error.h"
#include "tokenizer/tiktoken_reader.h"

namespace kvs::tokenizer {

namespace fs = std::filesystem;

namespace {

std::string file_head(const std::string& path, size_t bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error_at(path, "cannot open the tokenizer file");
  std::string head(bytes, '\0');
  in.read(head.data(), static_cast<std::streamsize>(bytes));
  head.resize(static_cast<size_t>(in.gcount()));
  return head;
}

// '{' then '"' or '}' (whitespace allowed): a SentencePiece protobuf, which starts with a newline
// byte, will not look like that.
bool looks_like_json_object(const std::string& head) {
  const char* ws = " \t\r\n";
  const size_t brace = head.find_first_not_of(ws);
  if (brace == std::string::npos || head[brace] != '{') return false;
  const size_t next = head.find_first_not_of(ws, brace + 1);
  return next != std::string::npos && (head[next] == '"' || head[next] == '}');
}

}  // namespace

std::unique_ptr<Tokenizer> load_tokenizer_file(const std::string& path) {
  if (!fs::is_regular_file(path)) throw error_at(path, "tokenizer file not found");
  const std::string head = file_head(path, 256);
  if (head.rfind("GGUF", 0) == 0) return load_gguf_tokenizer(path);
  if (looks_like_json_object(head)) return load_hf_tokenizer_json(path);
  // A tokenizer.model is either Meta's tiktoken text or a SentencePiece protobuf.
  if (looks_like_tiktoken(head)) return load_tiktoken(path);
  return load_sentencepiece(path);
}

std::string find_tokenizer_file(const std::string& model_arg) {
  const Checkpoint checkpoint = resolve_checkpoint(model_arg);
  if (checkpoint.kind == CheckpointKind::gguf) return checkpoint.path;
  const fs::path dir(checkpoint.path);
  for (const fs::path& candidate :
       {dir / "tokenizer.model", dir / "tokenizer.json", dir / "original" / "tokenizer.model"})
    if (fs::is_regular_file(candidate)) return candidate.string();
  throw error_at(checkpoint.path,
                 "no tokenizer in the model directory (looked for tokenizer.model, "
                 "tokenizer.json, original/tokenizer.model)");
}

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& model_arg) {
  return load_tokenizer_file(find_tokenizer_file(model_arg));
}

}  // namespace kvs::tokenizer
