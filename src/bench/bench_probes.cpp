#include "bench/bench_probes.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "core/error.h"
#include "core/timer.h"

namespace kvs::bench {

Spread spread_of(std::vector<double> samples) {
  if (samples.empty()) throw Error("spread_of: no samples");
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  const double median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  return Spread{median, samples.front(), samples.back()};
}

void synchronize_device(c10::Device device) {
  if (device.is_cuda()) at::zeros({1}, at::TensorOptions().device(device)).cpu();
}

double gemm_gflops(c10::Device device, c10::ScalarType dtype, int64_t batch, int64_t m, int64_t k,
                   int64_t n) {
  const auto opts = at::TensorOptions().device(device).dtype(dtype);
  const at::Tensor a = at::randn({batch, m, k}, opts), b = at::randn({batch, k, n}, opts);
  at::Tensor out = at::bmm(a, b);  // warm-up: first-touch pages and the BLAS's own setup
  synchronize_device(device);
  const Timer timer;
  at::bmm_out(out, a, b);
  synchronize_device(device);
  return 2.0 * static_cast<double>(batch) * m * k * n / timer.seconds() / 1e9;
}

double read_bandwidth_gbps(c10::Device device) {
  const int64_t bytes = int64_t{256} << 20;
  const at::Tensor t = at::ones({bytes / 4}, at::TensorOptions().device(device).dtype(at::kFloat));
  at::Tensor total = t.sum();
  synchronize_device(device);
  const Timer timer;
  total = t.sum();
  synchronize_device(device);
  return static_cast<double>(bytes) / timer.seconds() / 1e9;
}

}  // namespace kvs::bench
