#include "evict/selection_io.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/error.h"
#include "core/safetensors.h"
#include "core/strfmt.h"
#include "evict/tensor_checks.h"

namespace kvs::evict {

namespace {

at::Tensor read_float_tensor(const SafetensorsFile& file, const std::string& name, int64_t rank,
                             const std::string& layout) {
  const std::string where = file.path() + ": tensor \"" + name + "\"";
  const TensorEntry* entry = file.find(name);
  if (!entry) throw error_at(where, "missing (expected " + layout + ")");
  if (static_cast<int64_t>(entry->shape.size()) != rank) {
    throw error_at(where, strfmt("expected %lld dimensions %s, got %zu", (long long)rank,
                                 layout.c_str(), entry->shape.size()));
  }
  for (const int64_t size : entry->shape) {
    if (size < 1)
      throw error_at(where, "has an empty dimension " + shape_string(at::empty(entry->shape)));
  }
  at::ScalarType type;
  switch (entry->dtype) {
    case DType::F32:
      type = at::kFloat;
      break;
    case DType::F16:
      type = at::kHalf;
      break;
    case DType::BF16:
      type = at::kBFloat16;
      break;
    default:
      throw error_at(where,
                     std::string("dtype ") + dtype_name(entry->dtype) + " is not F32, F16 or BF16");
  }
  // The mapping is read-only: copy out of it while converting to float32.
  const at::Tensor view = at::from_blob(const_cast<uint8_t*>(file.data(*entry)), entry->shape,
                                        at::TensorOptions().dtype(type));
  const at::Tensor t = view.to(at::kFloat, /*non_blocking=*/false, /*copy=*/true);
  try {
    check_finite(t, name);
  } catch (const Error& e) {
    throw error_at(file.path(), e.what());
  }
  return t;
}

}  // namespace

SelectionInput load_selection_input(const std::string& path) {
  const SafetensorsFile file(path);
  SelectionInput in;
  // Rank 4: every layer's tensors stacked along a leading layer axis.
  const TensorEntry* q = file.find("q_window");
  const int64_t rank = q && q->shape.size() == 4 ? 4 : 3;
  const std::string stack = rank == 4 ? "layers, " : "";
  in.window_queries =
      read_float_tensor(file, "q_window", rank, "[" + stack + "heads, W, head_dim]");
  in.keys = read_float_tensor(file, "keys", rank, "[" + stack + "kv_heads, n, head_dim]");
  if (file.find("values")) {
    in.values = read_float_tensor(file, "values", rank, "[" + stack + "kv_heads, n, head_dim]");
    if (in.values.sizes() != in.keys.sizes()) {
      throw error_at(
          path, "values " + shape_string(in.values) + " differ from keys " + shape_string(in.keys));
    }
  }
  if (rank == 4) {
    in.layers = in.keys.size(0);
    if (in.window_queries.size(0) != in.layers) {
      throw error_at(path, strfmt("q_window stacks %lld layers, keys %lld",
                                  (long long)in.window_queries.size(0), (long long)in.layers));
    }
  }
  const int64_t heads = in.window_queries.size(rank - 3), window = in.window_queries.size(rank - 2);
  const int64_t kv_heads = in.keys.size(rank - 3), n = in.keys.size(rank - 2);
  if (in.window_queries.size(rank - 1) != in.keys.size(rank - 1)) {
    throw error_at(path, strfmt("q_window head_dim %lld differs from keys head_dim %lld",
                                (long long)in.window_queries.size(rank - 1),
                                (long long)in.keys.size(rank - 1)));
  }
  if (kv_heads == 0 || heads % kv_heads != 0) {
    throw error_at(path,
                   strfmt("q_window has %lld heads, not a multiple of the %lld KV heads of keys",
                          (long long)heads, (long long)kv_heads));
  }
  if (window < 1 || n <= window) {
    throw error_at(path, strfmt("keys has %lld tokens, q_window %lld window rows: need n > W >= 1",
                                (long long)n, (long long)window));
  }
  return in;
}

namespace {

nlohmann::json kept_rows(const at::Tensor& kept) {
  const at::Tensor k = kept.to(at::kLong).cpu().contiguous();
  nlohmann::json rows = nlohmann::json::array();
  const int64_t* p = k.data_ptr<int64_t>();
  for (int64_t r = 0; r < k.size(0); ++r) {
    // Ragged rows are left-padded with -1 (layer_selection.h): the list holds the kept ones.
    const int64_t* first =
        std::find_if(p + r * k.size(1), p + (r + 1) * k.size(1), [](int64_t v) { return v >= 0; });
    rows.push_back(std::vector<int64_t>(first, p + (r + 1) * k.size(1)));
  }
  return rows;
}

void write_json(const nlohmann::json& value, const std::string& path) {
  std::ofstream out(path);
  if (!out) throw error_at(path, "cannot open for writing");
  out << value.dump() << "\n";
  if (!out) throw error_at(path, "write failed");
}

}  // namespace

void write_kept_json(const at::Tensor& kept, const std::string& path) {
  write_json(nlohmann::json{{"kept", kept_rows(kept)}}, path);
}

nlohmann::json kept_layers_to_json(const std::vector<at::Tensor>& layers) {
  nlohmann::json out = nlohmann::json::array(), counts = nlohmann::json::array();
  for (const at::Tensor& kept : layers) {
    out.push_back(kept_rows(kept));
    nlohmann::json layer = nlohmann::json::array();
    for (const nlohmann::json& row : out.back()) layer.push_back(row.size());
    counts.push_back(std::move(layer));
  }
  return nlohmann::json{{"layers", out}, {"counts", counts}};
}

void write_kept_layers_json(const std::vector<at::Tensor>& layers, const std::string& path) {
  write_json(kept_layers_to_json(layers), path);
}

}  // namespace kvs::evict
