#include "model/runtime.h"

#include <ATen/Parallel.h>
#include <torch/cuda.h>
#include <torch/version.h>

#include <thread>

#include "core/error.h"

namespace kvs::model {

void set_cpu_threads(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  at::set_num_threads(threads);
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
