// What the benches share so that a figure means the same thing twice on a loaded machine: the
// machine probes they interleave with their measured work (sgemm rate, read bandwidth), each one
// timed run, and repeated samples summarised as a median with its spread.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <vector>

namespace kvs::bench {

// Median of repeated samples with the lowest and highest one.
struct Spread {
  double median = 0, low = 0, high = 0;
  // (high - low) / median: 0.05 means every sample lies within 5% of the median's scale.
  double relative() const { return median > 0 ? (high - low) / median : 0; }
};

// Throws kvs::Error on an empty sample list.
Spread spread_of(std::vector<double> samples);

// GFLOP/s of one timed [batch x m x k] @ [batch x k x n] product (after one untimed warm-up).
double gemm_gflops(c10::Device device, c10::ScalarType dtype, int64_t batch, int64_t m, int64_t k,
                   int64_t n);

// GB/s of one timed sum over a 256 MiB float32 tensor.
double read_bandwidth_gbps(c10::Device device);

// Waits for queued device work so that a timer around it measures it.
void synchronize_device(c10::Device device);

}  // namespace kvs::bench
