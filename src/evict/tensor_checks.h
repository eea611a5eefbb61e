// Shape and value checks on the tensors the eviction module is given; each failure is one
// kvs::Error line naming the tensor.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/ops/isfinite.h>

#include <string>

#include "core/error.h"

namespace kvs::evict {

inline std::string shape_string(const at::Tensor& t) {
  std::string s = "[";
  for (int64_t i = 0; i < t.dim(); ++i) s += (i ? ", " : "") + std::to_string(t.size(i));
  return s + "]";
}

// Defined, floating point, of the given rank; `layout` names the dimensions for the message.
inline void check_float_tensor(const at::Tensor& t, const std::string& name, int64_t rank,
                               const std::string& layout) {
  if (!t.defined()) throw error_at(name, "tensor is missing");
  if (t.dim() != rank) {
    throw error_at(name, "expected " + std::to_string(rank) + " dimensions " + layout +
                             ", got shape " + shape_string(t));
  }
  if (!at::isFloatingType(t.scalar_type())) {
    throw error_at(name, std::string("expected a floating-point tensor, got ") +
                             c10::toString(t.scalar_type()));
  }
}

inline void check_finite(const at::Tensor& t, const std::string& name) {
  if (!at::isfinite(t).all().item<bool>()) throw error_at(name, "contains NaN or infinite values");
}

}  // namespace kvs::evict
