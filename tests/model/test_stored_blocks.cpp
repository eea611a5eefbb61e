// CPU decode streams a GGUF file's quantized blocks (model/weights.h StoredBlocks) instead of the
// float32 copies: block_row_product must equal row_product on the dequantized rows bit for bit, for
// every type, row count and output range, and a model with its blocks must decode exactly the
// logits of the same model without them.
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "core/gguf.h"
#include "core/safetensors.h"
#include "cpu/gguf_dequantize.h"
#include "cpu/row_product.h"
#include "model/transformer.h"

namespace kvs::test {
namespace {

using gguf::TensorType;

uint32_t id(TensorType t) { return static_cast<uint32_t>(t); }

// Random blocks of `type` for rows x in elements, every half scale finite (about +-0.05).
std::vector<uint8_t> random_blocks(uint32_t type, int64_t rows, int64_t in) {
  const gguf::BlockLayout& layout = *gguf::block_layout(type);
  const int64_t blocks = rows * in / static_cast<int64_t>(layout.elements);
  const at::Tensor bytes =
      at::randint(0, 256, {blocks * static_cast<int64_t>(layout.bytes)}, at::kByte);
  std::vector<uint8_t> data(bytes.data_ptr<uint8_t>(), bytes.data_ptr<uint8_t>() + bytes.numel());
  const int halves = type == id(TensorType::Q8_0) || type == id(TensorType::Q4_0) ? 1 : 2;
  const at::Tensor scales = (at::rand({blocks, halves}) - 0.5) * 0.1;
  for (int64_t b = 0; b < blocks; ++b)
    for (int h = 0; h < halves; ++h) {
      const uint16_t half = float_to_half(scales[b][h].item<float>());
      std::memcpy(data.data() + b * layout.bytes + 2 * h, &half, 2);
    }
  return data;
}

TEST(StoredBlocks, BlockRowProductEqualsRowProductOnTheDequantizedRowsBitForBit) {
  if (!cpu::row_product_available()) GTEST_SKIP() << "no AVX2/FMA on this CPU";
  at::manual_seed(11);
  const int64_t in = 512, out = 23, stride = 30;  // 23 rows: five blocks of four and a tail of 3
  for (const TensorType type :
       {TensorType::Q4_1, TensorType::Q8_0, TensorType::Q4_0, TensorType::Q4_K}) {
    const std::vector<uint8_t> blocks = random_blocks(id(type), out, in);
    const gguf::BlockLayout& layout = *gguf::block_layout(id(type));
    std::vector<float> dequantized(out * in);
    cpu::dequantize_blocks(id(type), blocks.data(), blocks.size() / layout.bytes,
                           dequantized.data());
    // 1 and 2 rows take the fused kernels (Q4_1, Q8_0), more the scratch path.
    for (const int64_t rows : {1, 2, 3, 4, 7, 12}) {
      const at::Tensor x = at::randn({rows, in});
      for (const auto& [begin, end] : {std::pair<int64_t, int64_t>{0, out}, {5, 18}, {20, 23}}) {
        at::Tensor expected = at::full({rows, stride}, 7.0f), got = at::full({rows, stride}, 7.0f);
        cpu::row_product(x.data_ptr<float>(), rows, in, dequantized.data(), begin, end,
                         expected.data_ptr<float>(), stride);
        cpu::block_row_product(x.data_ptr<float>(), rows, in, blocks.data(), id(type), begin, end,
                               got.data_ptr<float>(), stride);
        EXPECT_TRUE(at::equal(got, expected))
            << gguf::type_name(id(type)) << ", " << rows << " rows, outputs [" << begin << ", "
            << end << "): max |diff| " << (got - expected).abs().max().item<double>();
        EXPECT_TRUE(got.narrow(1, out, stride - out).eq(7.0f).all().item<bool>());
      }
    }
  }
  const std::vector<uint8_t> blocks = random_blocks(id(TensorType::Q4_1), 4, 64);
  std::vector<float> x(48), y(4);
  EXPECT_THROW(cpu::block_row_product(x.data(), 1, 48, blocks.data(), id(TensorType::Q4_1), 0, 4,
                                      y.data(), 4),
               Error);
}

// The vector dequantization of Q4_1 and Q8_0 against the formula, for every half-precision scale
// (subnormals, infinities and NaNs included) and every quant.
TEST(StoredBlocks, Q4_1AndQ8_0DequantizeEveryHalfScaleAsTheFormula) {
  const auto same = [](float a, float b) {
    return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
  };
  int mismatches = 0;
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    const uint16_t d = static_cast<uint16_t>(bits), m = static_cast<uint16_t>(bits * 40503u);
    uint8_t q41[20], q80[34];
    std::memcpy(q41, &d, 2);
    std::memcpy(q41 + 2, &m, 2);
    std::memcpy(q80, &d, 2);
    for (int j = 0; j < 16; ++j) q41[4 + j] = static_cast<uint8_t>(bits * 7 + j * 37);
    for (int j = 0; j < 32; ++j) q80[2 + j] = static_cast<uint8_t>(bits * 13 + j * 29);
    float y41[32], y80[32];
    cpu::dequantize_blocks(id(TensorType::Q4_1), q41, 1, y41);
    cpu::dequantize_blocks(id(TensorType::Q8_0), q80, 1, y80);
    const float df = half_to_float(d), mf = half_to_float(m);
    for (int j = 0; j < 16; ++j) {
      mismatches += !same(y41[j], static_cast<float>(q41[4 + j] & 0xF) * df + mf);
      mismatches += !same(y41[j + 16], static_cast<float>(q41[4 + j] >> 4) * df + mf);
    }
    for (int j = 0; j < 32; ++j)
      mismatches += !same(y80[j], static_cast<float>(static_cast<int8_t>(q80[2 + j])) * df);
  }
  EXPECT_EQ(mismatches, 0);
}

// SmolLM2-135M (Q4_1 projections, a Q8_0 embedding that is also its LM head; installed by the
// bootstrap) with and without its stored blocks: the same logits, bit for bit, in prefill and in
// decode of one and of three rows.
TEST(StoredBlocks, SmolLM2DecodesTheSameLogitsWithAndWithoutItsStoredBlocks) {
  if (!cpu::row_product_available()) GTEST_SKIP() << "no AVX2/FMA on this CPU";
  c10::InferenceMode inference;
  const model::Transformer streamed = model::Transformer::load("smollm2-135m", {"cpu", "f32"});
  model::Weights plain_weights = streamed.weights();
  ASSERT_TRUE(plain_weights.lm_head_blocks.present());
  EXPECT_EQ(plain_weights.lm_head_blocks.type, id(TensorType::Q8_0));
  for (model::LayerWeights& layer : plain_weights.layers) {
    for (const model::StoredBlocks* b :
         {&layer.blocks.q_proj, &layer.blocks.k_proj, &layer.blocks.v_proj, &layer.blocks.o_proj,
          &layer.blocks.gate_proj, &layer.blocks.up_proj, &layer.blocks.down_proj}) {
      ASSERT_TRUE(b->present());
      EXPECT_EQ(b->type, id(TensorType::Q4_1));
    }
    layer.blocks = {};
  }
  plain_weights.lm_head_blocks = {};
  const model::Transformer plain(streamed.config(), plain_weights);
  // Q4_1 is 5 bits a weight: decode reads well under a quarter of the float32 bytes.
  EXPECT_LT(4 * model::decode_weight_bytes(streamed.weights()),
            model::decode_weight_bytes(plain.weights()));

  std::vector<int32_t> ids(60);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>((i * 7919 + 13) % 49152);
  model::PrefillOptions options;
  options.decode_capacity = 8;
  model::PrefillResult a = streamed.prefill(ids, options), b = plain.prefill(ids, options);
  EXPECT_TRUE(at::equal(a.logits, b.logits));
  at::Tensor token = a.logits.argmax(-1).view({1, 1});
  for (int step = 0; step < 3; ++step) {
    const at::Tensor la = streamed.extend(token, a.cache), lb = plain.extend(token, b.cache);
    ASSERT_TRUE(at::equal(la, lb))
        << "decode step " << step << ": max |diff| " << (la - lb).abs().max().item<double>();
    token = la.argmax(-1).view({1, 1});
  }
  // Three rows at once (three policies' caches decoding together).
  for (model::DecodeCache* cache : {&a.cache, &b.cache})
    for (model::LayerCache& layer : cache->layers) {
      layer.keys = layer.keys.repeat({3, 1, 1, 1});
      layer.values = layer.values.repeat({3, 1, 1, 1});
      layer.batch = 3;
    }
  a.cache.batch = b.cache.batch = 3;
  const at::Tensor tokens = at::tensor({5L, 77L, 901L}).view({3, 1});
  const at::Tensor la = streamed.extend(tokens, a.cache), lb = plain.extend(tokens, b.cache);
  EXPECT_TRUE(at::equal(la, lb)) << "three rows: max |diff| "
                                 << (la - lb).abs().max().item<double>();
}

}  // namespace
}  // namespace kvs::test
