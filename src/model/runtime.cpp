#include "model/runtime.h"

#include <ATen/Parallel.h>
#include <torch/cuda.h>
#include <torch/version.h>

#include <thread>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "core/error.h"

namespace kvs::model {

void set_cpu_threads(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  at::set_num_threads(threads);
}

void reuse_freed_memory() {
#if defined(__GLIBC__)
  // By default glibc hands every freed block above its mmap threshold, and the heap's free top,
  // back to the kernel, so each layer's activations arrive as fresh pages the kernel zeroes on
  // first touch: 11% of a 2k-token prefill's time. Blocks up to glibc's largest threshold
  // (32 MiB) come from the heap instead, and the heap is never trimmed.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, -1);
  mallopt(M_TOP_PAD, 64 << 20);
#endif
}

std::string resolve_device(const std::string& requested) {
  const bool have_cuda = torch::cuda::is_available();
  if (requested == "auto") return have_cuda ? "cuda" : "cpu";
  if (requested == "cpu") return "cpu";
  if (requested == "cuda") {
    if (!have_cuda) throw Error("--device cuda: no CUDA device is visible to LibTorch");
    return "cuda";
  }
  throw Error("unknown device '" + requested + "' (expected auto, cpu or cuda)");
}

std::string torch_version() { return TORCH_VERSION; }

}  // namespace kvs::model
