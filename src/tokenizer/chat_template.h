// Chat templates: how a user message becomes the prompt's token ids.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace kvs::tokenizer {

enum class ChatTemplate {
  None,     // BOS + the raw text (what the PyramidKV reference does for Mistral on LongBench)
  Mistral,  // BOS + "[INST] " + text + " [/INST]"
  // BOS <|start_header_id|> "user" <|end_header_id|> "\n\n" text <|eot_id|>
  // <|start_header_id|> "assistant" <|end_header_id|> "\n\n", each part encoded on its own as
  // Meta's ChatFormat does; the text is encoded as given (HF's Jinja template would trim it).
  Llama3,
  // <|im_start|> "user\n" text <|im_end|> "\n" <|im_start|> "assistant\n", no BOS.
  ChatML,
  // ChatML behind SmolLM2's default system turn ("You are a helpful AI assistant named SmolLM,
  // trained by Hugging Face"), which its template inserts when the chat has no system message.
  SmolLM2,
  // ChatML behind Qwen2.5's default system turn ("You are Qwen, created by Alibaba Cloud. You are a
  // helpful assistant."), which its template inserts when the chat has no system message. Qwen3's
  // template is plain ChatML (thinking on, its default).
  Qwen25,
  // Qwen3's template with enable_thinking=False: ChatML, then an empty thinking section
  // <think> "\n\n" </think> "\n\n" after "assistant\n", so the model answers without one.
  Qwen3NoThinking,
  // DeepSeek-R1-Distill's: BOS <｜User｜> text <｜Assistant｜> <think> "\n" (its template opens the
  // thinking section of the answer).
  DeepSeekR1,
};

// "none" | "mistral" | "llama3" | "chatml" | "smollm2" | "qwen2.5" | "qwen3-no-think" |
// "deepseek-r1"
ChatTemplate parse_chat_template(const std::string& name);
std::string chat_template_name(ChatTemplate t);

// The known template a Jinja chat template's text is, told by its distinctive parts (no Jinja
// engine): SmolLM2's and Qwen2.5's default system turns, ChatML's <|im_start|>/<|im_end|>,
// DeepSeek-R1's <｜User｜>/<｜Assistant｜>, Llama-3's
// <|start_header_id|>/<|eot_id|>, Mistral's [INST]/[/INST]. Throws naming `where` and listing
// the known ones when it is none of them.
ChatTemplate recognise_chat_template(const std::string& template_text, const std::string& where);

// --chat-template for a checkpoint (core/checkpoint.h's --model argument): a name
// (parse_chat_template), or "auto": the template text the checkpoint carries (GGUF's
// tokenizer.chat_template, or chat_template in an HF directory's tokenizer_config.json: a string,
// or the list entry named "default"), recognised; `without_template` (the caller's rule) when it
// carries none.
ChatTemplate resolve_chat_template(const std::string& name, const std::string& model_arg,
                                   ChatTemplate without_template);

// The prompt starts with BOS only where the tokenizer adds one (Tokenizer::adds_bos).
// Throws when the tokenizer lacks the special tokens the template needs (llama3 on SentencePiece).
std::vector<int32_t> build_prompt_ids(const Tokenizer& tokenizer, const std::string& user_text,
                                      ChatTemplate chat_template);

// The one piece of build_prompt_ids's output that holds the user text: the ids of
// tokenizer.encode(before + text + after), encoded on its own between the template's special
// tokens. `after` is what follows the text inside the piece (none here; the caller appends an
// answer prefix that shares the piece, see longbench/prompt.h).
struct TextPiece {
  std::string before, after;
};
TextPiece user_text_piece(ChatTemplate chat_template);

}  // namespace kvs::tokenizer
