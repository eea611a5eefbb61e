// kvsearch tokenize: encode text or decode ids with a checkpoint's tokenizer (or a tokenizer file).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/command.h"
#include "core/error.h"
#include "core/files.h"
#include "tokenizer/tokenizer.h"

namespace kvs::cli {

namespace {

struct TokenizeOptions {
  std::string model;
  std::string tokenizer;
  std::string text;
  std::string file;
  std::string decode;
  std::string jsonl;
  bool special = false;
  bool keep_special = false;
  bool json = false;
};

std::vector<int32_t> parse_ids(const std::string& list) {
  std::vector<int32_t> ids;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    const size_t first = item.find_first_not_of(' ');
    if (first == std::string::npos) continue;
    try {
      size_t used = 0;
      const long value = std::stol(item.substr(first), &used);
      if (item.find_first_not_of(' ', first + used) != std::string::npos)
        throw std::invalid_argument(item);
      ids.push_back(static_cast<int32_t>(value));
    } catch (const std::exception&) {
      throw Error("--decode: '" + item + "' is not an integer id");
    }
  }
  return ids;
}

std::vector<int32_t> encode(const tokenizer::Tokenizer& tok, const std::string& text,
                            bool special) {
  return special ? tok.encode_with_special(text) : tok.encode(text);
}

// One JSON value per line: a string is encoded ({"ids", "decoded"}), an array of ids decoded
// ({"text"}); one JSON object per line out.
void run_jsonl(const tokenizer::Tokenizer& tok, const TokenizeOptions& o) {
  std::ifstream in(o.jsonl, std::ios::binary);
  if (!in) throw error_at(o.jsonl, "cannot open the file");
  std::string line;
  int64_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) continue;
    nlohmann::json value;
    try {
      value = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception&) {
      throw error_at(o.jsonl + ":" + std::to_string(line_no), "not valid JSON");
    }
    nlohmann::json out;
    if (value.is_string()) {
      const auto ids = encode(tok, value.get<std::string>(), o.special);
      out = {{"ids", ids}, {"decoded", tok.decode(ids, !o.keep_special)}};
    } else if (value.is_array()) {
      std::vector<int32_t> ids;
      for (const auto& id : value) {
        if (!id.is_number_integer())
          throw error_at(o.jsonl + ":" + std::to_string(line_no), "an id is not an integer");
        ids.push_back(id.get<int32_t>());
      }
      out = {{"text", tok.decode(ids, !o.keep_special)}};
    } else {
      throw error_at(o.jsonl + ":" + std::to_string(line_no),
                     "expected a JSON string (to encode) or an array of ids (to decode)");
    }
    std::cout << out.dump() << '\n';
  }
}

void run(const TokenizeOptions& o) {
  if (o.model.empty() == o.tokenizer.empty())
    throw Error("tokenize: give exactly one of --model or --tokenizer");
  const int inputs = !o.text.empty() + !o.file.empty() + !o.decode.empty() + !o.jsonl.empty();
  if (inputs != 1) throw Error("tokenize: give exactly one of --text, --file, --decode or --jsonl");
  const auto tok = o.model.empty() ? tokenizer::load_tokenizer_file(o.tokenizer)
                                   : tokenizer::load_tokenizer(o.model);
  if (!o.jsonl.empty()) {
    run_jsonl(*tok, o);
    return;
  }
  if (!o.decode.empty()) {
    const std::string text = tok->decode(parse_ids(o.decode), !o.keep_special);
    if (o.json)
      std::cout << nlohmann::json{{"text", text}}.dump() << '\n';
    else
      std::cout << text << '\n';
    return;
  }
  const auto ids = encode(*tok, o.file.empty() ? o.text : read_file(o.file, "the text file"), o.special);
  if (o.json) {
    std::cout
        << nlohmann::json{{"ids", ids}, {"count", ids.size()}, {"tokenizer", tok->kind()}}.dump()
        << '\n';
    return;
  }
  std::string line;
  for (size_t i = 0; i < ids.size(); ++i) line += (i ? "," : "") + std::to_string(ids[i]);
  std::cout << line << '\n';
}

void setup_tokenize(CLI::App& parent) {
  auto options = std::make_shared<TokenizeOptions>();
  auto* cmd = parent.add_subcommand("tokenize", "Encode text to token ids, or decode ids to text");
  cmd->add_option("--model", options->model,
                  "Checkpoint (its tokenizer): HF directory, .gguf file or registered name");
  cmd->add_option("--tokenizer", options->tokenizer,
                  "Tokenizer file: tokenizer.model (SentencePiece or tiktoken), tokenizer.json or "
                  ".gguf");
  cmd->add_option("--text", options->text, "Text to encode");
  cmd->add_option("--file", options->file, "File whose whole content is encoded");
  cmd->add_option("--decode", options->decode, "Comma-separated ids to decode");
  cmd->add_option(
      "--jsonl", options->jsonl,
      "Batch: each line a JSON string (encoded) or array of ids (decoded); JSON lines out");
  cmd->add_flag("--special", options->special,
                "Special-token text (<|eot_id|>) in the input becomes the special token");
  cmd->add_flag("--keep-special", options->keep_special, "Decode renders special tokens as text");
  cmd->add_flag("--json", options->json, "Print JSON");
  cmd->callback([options] { run(*options); });
}

const CommandRegistration tokenize_registration("tokenize", setup_tokenize);

}  // namespace

}  // namespace kvs::cli
