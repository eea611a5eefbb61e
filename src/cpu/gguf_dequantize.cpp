#include "cpu/gguf_dequantize.h"

#include <cstring>
#include <vector>

#include "core/error.h"
#include "core/safetensors.h"
#include "cpu/block_lanes.h"

namespace kvs::cpu {

namespace {

using gguf::TensorType;

uint16_t u16_at(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t u32_at(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}
float half_at(const uint8_t* p) { return half_to_float(u16_at(p)); }

}  // namespace

const float* half_float_table() {
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (uint32_t h = 0; h < 65536; ++h) t[h] = half_to_float(static_cast<uint16_t>(h));
    return t;
  }();
  return table.data();
}

namespace {

// 32-element blocks: a half scale d (and a half offset m for the _1 types), then the quants.
// Low nibbles of qs[0..15] are elements 0..15, high nibbles elements 16..31.
void q4_0_block(const uint8_t* b, float* y) {
  const float d = half_at(b);
  const uint8_t* qs = b + 2;
  for (int j = 0; j < 16; ++j) {
    y[j] = static_cast<float>((qs[j] & 0xF) - 8) * d;
    y[j + 16] = static_cast<float>((qs[j] >> 4) - 8) * d;
  }
}

void q4_1_block(const uint8_t* b, float* y) {
  const float d = half_at(b), m = half_at(b + 2);
  const uint8_t* qs = b + 4;
  for (int j = 0; j < 16; ++j) {
    y[j] = static_cast<float>(qs[j] & 0xF) * d + m;
    y[j + 16] = static_cast<float>(qs[j] >> 4) * d + m;
  }
}

// Bit i of qh is bit 4 of element i.
void q5_0_block(const uint8_t* b, float* y) {
  const float d = half_at(b);
  const uint32_t qh = u32_at(b + 2);
  const uint8_t* qs = b + 6;
  for (int j = 0; j < 16; ++j) {
    const int lo = (qs[j] & 0xF) | static_cast<int>(((qh >> j) & 1) << 4);
    const int hi = (qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1) << 4);
    y[j] = static_cast<float>(lo - 16) * d;
    y[j + 16] = static_cast<float>(hi - 16) * d;
  }
}

void q5_1_block(const uint8_t* b, float* y) {
  const float d = half_at(b), m = half_at(b + 2);
  const uint32_t qh = u32_at(b + 4);
  const uint8_t* qs = b + 8;
  for (int j = 0; j < 16; ++j) {
    const int lo = (qs[j] & 0xF) | static_cast<int>(((qh >> j) & 1) << 4);
    const int hi = (qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1) << 4);
    y[j] = static_cast<float>(lo) * d + m;
    y[j + 16] = static_cast<float>(hi) * d + m;
  }
}

void q8_0_block(const uint8_t* b, float* y) {
  const float d = half_at(b);
  const auto* qs = reinterpret_cast<const int8_t*>(b + 2);
  for (int j = 0; j < 32; ++j) y[j] = static_cast<float>(qs[j]) * d;
}

#if defined(__x86_64__)
// The same two blocks with AVX2 (model/block_lanes.h: equal bit for bit).
__attribute__((target("avx2,fma"))) void q4_1_block_avx2(const uint8_t* b, float* y) {
  __m256 lanes[4];
  q4_1_lanes(half_float_table(), b, lanes);
  for (int k = 0; k < 4; ++k) _mm256_storeu_ps(y + 8 * k, lanes[k]);
}

__attribute__((target("avx2,fma"))) void q8_0_block_avx2(const uint8_t* b, float* y) {
  __m256 lanes[4];
  q8_0_lanes(half_float_table(), b, lanes);
  for (int k = 0; k < 4; ++k) _mm256_storeu_ps(y + 8 * k, lanes[k]);
}
#endif

// 256 elements in 8 sub-blocks of 32, each with a 6-bit scale and a 6-bit min packed in 12 bytes.
void q4_k_block(const uint8_t* b, float* y) {
  const float d = half_at(b), dmin = half_at(b + 2);
  const uint8_t* q = b + 4;
  const uint8_t* qs = b + 16;
  float scale[8], offset[8];
  for (int s = 0; s < 8; ++s) {
    const int sc = s < 4 ? q[s] & 63 : (q[s + 4] & 0xF) | ((q[s - 4] >> 6) << 4);
    const int m = s < 4 ? q[s + 4] & 63 : (q[s + 4] >> 4) | ((q[s] >> 6) << 4);
    scale[s] = d * static_cast<float>(sc);
    offset[s] = dmin * static_cast<float>(m);
  }
  for (int c = 0; c < 4; ++c) {
    const uint8_t* chunk = qs + 32 * c;
    for (int l = 0; l < 32; ++l) {
      y[64 * c + l] = scale[2 * c] * static_cast<float>(chunk[l] & 0xF) - offset[2 * c];
      y[64 * c + 32 + l] = scale[2 * c + 1] * static_cast<float>(chunk[l] >> 4) - offset[2 * c + 1];
    }
  }
}

// 256 elements: low 4 bits in ql[128], high 2 bits in qh[64], 16 int8 scales, then d.
void q6_k_block(const uint8_t* b, float* y) {
  const uint8_t* ql_all = b;
  const uint8_t* qh_all = b + 128;
  const auto* sc_all = reinterpret_cast<const int8_t*>(b + 192);
  const float d = half_at(b + 208);
  for (int n = 0; n < 2; ++n) {
    const uint8_t* ql = ql_all + 64 * n;
    const uint8_t* qh = qh_all + 32 * n;
    const int8_t* sc = sc_all + 8 * n;
    float* out = y + 128 * n;
    for (int l = 0; l < 32; ++l) {
      const int is = l / 16;
      const int q0 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
      const int q1 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
      const int q2 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      const int q3 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
      out[l] = d * static_cast<float>(sc[is + 0]) * static_cast<float>(q0);
      out[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q1);
      out[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q2);
      out[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q3);
    }
  }
}

using BlockFunction = void (*)(const uint8_t* block, float* out);

BlockFunction block_function(uint32_t type) {
  switch (static_cast<TensorType>(type)) {
    case TensorType::Q4_0:
      return q4_0_block;
#if defined(__x86_64__)
    case TensorType::Q4_1:
      return block_lanes_available() ? q4_1_block_avx2 : q4_1_block;
    case TensorType::Q8_0:
      return block_lanes_available() ? q8_0_block_avx2 : q8_0_block;
#else
    case TensorType::Q4_1:
      return q4_1_block;
    case TensorType::Q8_0:
      return q8_0_block;
#endif
    case TensorType::Q5_0:
      return q5_0_block;
    case TensorType::Q5_1:
      return q5_1_block;
    case TensorType::Q4_K:
      return q4_k_block;
    case TensorType::Q6_K:
      return q6_k_block;
    default:
      return nullptr;
  }
}

}  // namespace

bool is_block_quantized(uint32_t type) { return block_function(type) != nullptr; }

bool can_dequantize(uint32_t type) {
  const auto t = static_cast<TensorType>(type);
  return t == TensorType::F32 || t == TensorType::F16 || t == TensorType::BF16 ||
         is_block_quantized(type);
}

void dequantize_blocks(uint32_t type, const uint8_t* data, uint64_t blocks, float* out) {
  switch (static_cast<TensorType>(type)) {
    case TensorType::F32:
      std::memcpy(out, data, blocks * sizeof(float));
      return;
    case TensorType::F16:
      for (uint64_t i = 0; i < blocks; ++i) out[i] = half_at(data + 2 * i);
      return;
    case TensorType::BF16:
      for (uint64_t i = 0; i < blocks; ++i) out[i] = bf16_to_float(u16_at(data + 2 * i));
      return;
    default: {
      const BlockFunction f = block_function(type);
      if (!f) throw Error("dequantize: type " + gguf::type_name(type) + " is not supported");
      const gguf::BlockLayout& layout = *gguf::block_layout(type);
      for (uint64_t i = 0; i < blocks; ++i) f(data + i * layout.bytes, out + i * layout.elements);
    }
  }
}

void dequantize(const gguf::TensorInfo& tensor, float* out, const std::string& where) {
  if (!can_dequantize(tensor.type))
    throw error_at(where, "tensor '" + tensor.name + "': type " + gguf::type_name(tensor.type) +
                              " is not supported (F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, "
                              "Q4_K, Q6_K are)");
  dequantize_blocks(tensor.type, tensor.data,
                    tensor.nbytes / gguf::block_layout(tensor.type)->bytes, out);
}

}  // namespace kvs::cpu
