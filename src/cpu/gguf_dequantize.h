// Dequantization of GGUF tensor data to float32: F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1,
// Q4_K and Q6_K (docs/gguf.md §2). Every product of a scale and a quant is exact in f32, so the
// values are bit-identical to ggml's reference C and to gguf-py's dequantize. Torch-free.
#pragma once

#include <cstdint>
#include <string>

#include "core/gguf.h"

namespace kvs::cpu {

bool can_dequantize(uint32_t type);
// Whether the type is one of the block types above (Q8_0 ... Q6_K), not a plain float type.
bool is_block_quantized(uint32_t type);

// Writes `blocks` whole blocks of that type, read from data, as float32 to out (an F32, F16 or
// BF16 "block" is one element): the values dequantize gives, bit for bit. Throws kvs::Error for
// a type it cannot read.
void dequantize_blocks(uint32_t type, const uint8_t* data, uint64_t blocks, float* out);

// Writes the tensor's elements (ggml order: dims[0] fastest) as float32 to out, which holds
// numel = product of dims floats. Throws kvs::Error naming `where`, the tensor and its type when
// the type is not one of the above.
void dequantize(const gguf::TensorInfo& tensor, float* out, const std::string& where);

}  // namespace kvs::cpu
