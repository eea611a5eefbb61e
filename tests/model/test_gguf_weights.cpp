// GGUF loading pieces without a real file: dequantization of hand-made blocks, the tensor name
// map, the inverse Q/K permutation, and the config from llama.* metadata. (Bit-exactness against
// gguf-py on every type is tests/model/test_gguf_reference.py.)
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "common/scratch_dir.h"
#include "core/error.h"
#include "core/gguf.h"
#include "core/safetensors.h"
#include "core/test_gguf_writer.h"
#include "cpu/gguf_dequantize.h"
#include "model/config.h"
#include "model/gguf_weights.h"

namespace {

using kvs::test::GgufWriter;

kvs::gguf::TensorInfo info(uint32_t type, uint64_t elements, const std::vector<uint8_t>& bytes) {
  kvs::gguf::TensorInfo t;
  t.name = "t";
  t.dims = {elements};
  t.type = type;
  t.nbytes = bytes.size();
  t.data = bytes.data();
  return t;
}

void put_half(std::vector<uint8_t>& b, size_t at, float v) {
  const uint16_t h = kvs::float_to_half(v);
  b[at] = static_cast<uint8_t>(h);
  b[at + 1] = static_cast<uint8_t>(h >> 8);
}

TEST(GgufDequantize, Q4_0HighNibblesAreTheSecondHalf) {
  std::vector<uint8_t> block(18);
  put_half(block, 0, 0.5f);
  for (int j = 0; j < 16; ++j) block[2 + j] = static_cast<uint8_t>((15 - j) << 4 | j);
  std::vector<float> out(32);
  kvs::cpu::dequantize(info(2, 32, block), out.data(), "f");
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(out[j], (j - 8) * 0.5f);
    EXPECT_EQ(out[j + 16], (15 - j - 8) * 0.5f);
  }
}

TEST(GgufDequantize, Q4_1AndQ8_0) {
  std::vector<uint8_t> q41(20);
  put_half(q41, 0, 0.25f);
  put_half(q41, 2, -1.0f);
  q41[4] = 0x3A;  // element 0: 10, element 16: 3
  std::vector<float> out(32);
  kvs::cpu::dequantize(info(3, 32, q41), out.data(), "f");
  EXPECT_EQ(out[0], 10 * 0.25f - 1.0f);
  EXPECT_EQ(out[16], 3 * 0.25f - 1.0f);
  EXPECT_EQ(out[1], -1.0f);

  std::vector<uint8_t> q80(34);
  put_half(q80, 0, 2.0f);
  q80[2] = static_cast<uint8_t>(-128);
  q80[33] = 127;
  kvs::cpu::dequantize(info(8, 32, q80), out.data(), "f");
  EXPECT_EQ(out[0], -256.0f);
  EXPECT_EQ(out[31], 254.0f);
}

TEST(GgufDequantize, Q5_0TakesBitFourFromQh) {
  std::vector<uint8_t> block(22);
  put_half(block, 0, 1.0f);
  block[2] = 0x01;  // qh bit 0: element 0
  block[5] = 0x80;  // qh bit 31: element 31
  std::vector<float> out(32);
  kvs::cpu::dequantize(info(6, 32, block), out.data(), "f");
  EXPECT_EQ(out[0], 0.0f);     // (0 | 16) - 16
  EXPECT_EQ(out[1], -16.0f);   // (0 | 0) - 16
  EXPECT_EQ(out[31], 0.0f);
}

TEST(GgufDequantize, UnsupportedTypesNameTheTensorAndType) {
  std::vector<uint8_t> block(84);
  const auto t = info(10, 256, block);
  std::vector<float> out(256);
  try {
    kvs::cpu::dequantize(t, out.data(), "m.gguf");
    FAIL();
  } catch (const kvs::Error& e) {
    EXPECT_NE(std::string(e.what()).find("m.gguf: tensor 't': type Q2_K (type id 10) is not supported"),
              std::string::npos) << e.what();
  }
  EXPECT_FALSE(kvs::cpu::can_dequantize(10));
  EXPECT_TRUE(kvs::cpu::can_dequantize(14));
}

TEST(GgufWeights, NamesMapToTheLlamaLayout) {
  EXPECT_EQ(kvs::model::gguf_tensor_name("model.embed_tokens.weight"), "token_embd.weight");
  EXPECT_EQ(kvs::model::gguf_tensor_name("lm_head.weight"), "output.weight");
  EXPECT_EQ(kvs::model::gguf_tensor_name("model.layers.12.self_attn.k_proj.weight"), "blk.12.attn_k.weight");
  EXPECT_EQ(kvs::model::gguf_tensor_name("model.layers.0.post_attention_layernorm.weight"),
            "blk.0.ffn_norm.weight");
  // qwen2's biases and qwen3's per-head norms, under llama.cpp's names
  EXPECT_EQ(kvs::model::gguf_tensor_name("model.layers.3.self_attn.k_proj.bias"),
            "blk.3.attn_k.bias");
  EXPECT_EQ(kvs::model::gguf_tensor_name("model.layers.0.self_attn.q_norm.weight"),
            "blk.0.attn_q_norm.weight");
  EXPECT_THROW(kvs::model::gguf_tensor_name("model.layers.0.self_attn.o_proj.bias"), kvs::Error);
}

TEST(GgufWeights, UndoesTheRopePermutation) {
  const int64_t heads = 3, d = 8, half = d / 2;
  const at::Tensor gguf_rows = at::arange(heads * d, at::kFloat).unsqueeze(1).repeat({1, 2});
  const at::Tensor hf = kvs::model::undo_rope_permutation(gguf_rows, heads);
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t s = 0; s < 2; ++s)
      for (int64_t i = 0; i < half; ++i)
        EXPECT_EQ(hf[h * d + s * half + i][1].item<float>(), static_cast<float>(h * d + 2 * i + s));
}

GgufWriter llama_metadata() {
  GgufWriter w;
  w.add_string("general.architecture", "llama");
  w.add_u32("llama.block_count", 30);
  w.add_u32("llama.context_length", 8192);
  w.add_u32("llama.embedding_length", 576);
  w.add_u32("llama.feed_forward_length", 1536);
  w.add_u32("llama.attention.head_count", 9);
  w.add_u32("llama.attention.head_count_kv", 3);
  w.add_f32("llama.rope.freq_base", 100000.0f);
  w.add_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  w.add_u32("llama.rope.dimension_count", 64);
  w.add_u32("tokenizer.ggml.bos_token_id", 1);
  w.add_u32("tokenizer.ggml.eos_token_id", 2);
  return w;
}

TEST(GgufConfig, ReadsTheLlamaMetadata) {
  kvs::test::ScratchDir dir;
  GgufWriter w = llama_metadata();
  w.add_string_array("tokenizer.ggml.tokens", std::vector<std::string>(49152, "x"));
  GgufWriter::write(dir.file("m.gguf"), w.bytes());
  const auto c = kvs::model::config_from_gguf(kvs::gguf::File::open(dir.file("m.gguf")));
  EXPECT_EQ(c.model_type, "llama");
  EXPECT_EQ(c.num_hidden_layers, 30);
  EXPECT_EQ(c.max_position_embeddings, 8192);
  EXPECT_EQ(c.hidden_size, 576);
  EXPECT_EQ(c.intermediate_size, 1536);
  EXPECT_EQ(c.num_attention_heads, 9);
  EXPECT_EQ(c.num_key_value_heads, 3);
  EXPECT_EQ(c.head_dim, 64);
  EXPECT_EQ(c.vocab_size, 49152);  // from the token array: no llama.vocab_size
  EXPECT_EQ(c.rope_theta, 100000.0);
  EXPECT_EQ(c.rms_norm_eps, static_cast<double>(1e-5f));
  EXPECT_TRUE(c.tie_word_embeddings);  // no output.weight
  EXPECT_EQ(c.bos_token_id, 1);
  EXPECT_EQ(c.eos_token_ids, std::vector<int64_t>{2});
}

TEST(GgufConfig, ReadsQwen3MetadataUnderItsOwnName) {
  kvs::test::ScratchDir dir;
  GgufWriter w;
  w.add_string("general.architecture", "qwen3");
  w.add_u32("qwen3.block_count", 28);
  w.add_u32("qwen3.context_length", 40960);
  w.add_u32("qwen3.embedding_length", 1024);
  w.add_u32("qwen3.feed_forward_length", 3072);
  w.add_u32("qwen3.attention.head_count", 16);
  w.add_u32("qwen3.attention.head_count_kv", 8);
  w.add_u32("qwen3.attention.key_length", 128);  // not 1024 / 16
  w.add_u32("qwen3.attention.value_length", 128);
  w.add_f32("qwen3.rope.freq_base", 1000000.0f);
  w.add_f32("qwen3.attention.layer_norm_rms_epsilon", 1e-6f);
  w.add_u32("qwen3.vocab_size", 151936);
  w.add_u32("tokenizer.ggml.bos_token_id", 151643);
  w.add_u32("tokenizer.ggml.eos_token_id", 151645);
  GgufWriter::write(dir.file("q.gguf"), w.bytes());
  const auto c = kvs::model::config_from_gguf(kvs::gguf::File::open(dir.file("q.gguf")));
  EXPECT_EQ(c.model_type, "qwen3");
  EXPECT_TRUE(c.qk_norm);
  EXPECT_FALSE(c.qkv_bias);
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_EQ(c.num_hidden_layers, 28);
  EXPECT_EQ(c.vocab_size, 151936);
  EXPECT_EQ(c.rope_theta, 1e6);
  EXPECT_TRUE(c.tie_word_embeddings);
}

TEST(GgufConfig, RefusesOtherArchitecturesAndMissingKeys) {
  kvs::test::ScratchDir dir;
  GgufWriter gemma;
  gemma.add_string("general.architecture", "gemma3");
  GgufWriter::write(dir.file("q.gguf"), gemma.bytes());
  try {
    kvs::model::config_from_gguf(kvs::gguf::File::open(dir.file("q.gguf")));
    FAIL();
  } catch (const kvs::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              dir.file("q.gguf") +
                  ": metadata 'general.architecture': 'gemma3' is not an architecture the "
                  "runner reads (llama, qwen2, qwen3)");
  }
  GgufWriter no_vocab = llama_metadata();
  GgufWriter::write(dir.file("v.gguf"), no_vocab.bytes());
  try {
    kvs::model::config_from_gguf(kvs::gguf::File::open(dir.file("v.gguf")));
    FAIL();
  } catch (const kvs::Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing required metadata 'llama.vocab_size'"), std::string::npos);
  }
}

}  // namespace
