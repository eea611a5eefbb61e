// Process-wide LibTorch settings, behind a torch-free header so the CLI stays light.
#pragma once

#include <string>

namespace kvs::model {

// 0 = all cores. LibTorch 1.13 defaulted to one thread, so the count is always set explicitly.
void set_cpu_threads(int threads);

// Keep freed tensor memory in the process for the next allocation (glibc; a no-op elsewhere).
void reuse_freed_memory();

// "cuda" when LibTorch sees a GPU, else "cpu"; an explicit request is validated.
std::string resolve_device(const std::string& requested);  // "auto" | "cpu" | "cuda"

std::string torch_version();

struct LoadOptions {
  std::string device = "auto";  // auto | cpu | cuda
  // auto (on CUDA the architecture's native_gpu_dtype, model/config.h: bf16 for Qwen, f16 for
  // llama and mistral; fp32 on CPU) | f32 | f16 | bf16
  std::string dtype = "auto";
};

}  // namespace kvs::model
