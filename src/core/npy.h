// NumPy .npy (format 1.0) writer for float32 arrays, e.g. `generate --dump-logits`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kvs {

// Writes a C-order float32 array of the given shape; data.size() must equal the product of shape.
void write_npy_f32(const std::string& path, const std::vector<int64_t>& shape,
                   const std::vector<float>& data);

// Reads a float32 C-order .npy written by write_npy_f32 or numpy (tests, tools).
std::vector<float> read_npy_f32(const std::string& path, std::vector<int64_t>* shape);

}  // namespace kvs
