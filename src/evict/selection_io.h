// `kvsearch select` on stored tensors: reading the window queries and keys of one layer from a
// safetensors file, and writing the kept positions as JSON, so that anyone can check our
// selection against another implementation.
//   input:  q_window [heads, W, head_dim], keys [kv_heads, n, head_dim] (F32, F16 or BF16), and
//           optionally values [kv_heads, n, head_dim]; or every layer's, stacked: q_window
//           [layers, heads, W, head_dim], keys (values) [layers, kv_heads, n, head_dim]
//   output: {"kept": [[positions of cache head 0], ...]}, ascending, window positions included;
//           for stacked layers {"layers": [kept per layer], "counts": [[per head] per layer]}
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace kvs::evict {

struct SelectionInput {
  at::Tensor window_queries;  // [heads, W, head_dim] float32 ([layers, ...] when stacked)
  at::Tensor keys;            // [kv_heads, n, head_dim] float32 ([layers, ...] when stacked)
  at::Tensor values;          // as keys, or undefined when the file has none
  int64_t layers = 0;         // 0: one layer's tensors; else the stacked layers' count
};

// Checks ranks, dtypes, matching head counts and head_dim, n > W and finiteness; every error is
// one line naming the file and the tensor.
SelectionInput load_selection_input(const std::string& path);

// kept [rows, k] int64 -> {"kept": [[...], ...]} written to path.
void write_kept_json(const at::Tensor& kept, const std::string& path);
// Per layer, kept [rows, k] int64 -> {"layers": [[[...], ...], ...], "counts": [[...], ...]}
// (the positions each cache head keeps, and how many) written to path.
// {"layers": [[[positions] per cache head] per layer], "counts": [[count per head] per layer]}.
nlohmann::json kept_layers_to_json(const std::vector<at::Tensor>& layers);
void write_kept_layers_json(const std::vector<at::Tensor>& layers, const std::string& path);

}  // namespace kvs::evict
