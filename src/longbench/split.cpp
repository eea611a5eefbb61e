#include "longbench/split.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "core/error.h"
#include "core/rng.h"
#include "longbench/dataset.h"

namespace kvs::longbench {

Split make_split(size_t num_records, size_t dev_size, uint64_t seed) {
  if (dev_size > num_records)
    throw Error("split: " + std::to_string(dev_size) + " dev questions requested from only " +
                std::to_string(num_records) + " records");
  std::vector<size_t> order(num_records);
  std::iota(order.begin(), order.end(), size_t{0});
  std::mt19937_64 gen(seed);
  portable_shuffle(order, gen);
  Split split;
  split.dev.assign(order.begin(), order.begin() + dev_size);
  split.test.assign(order.begin() + dev_size, order.end());
  std::sort(split.dev.begin(), split.dev.end());
  std::sort(split.test.begin(), split.test.end());
  return split;
}

Split dataset_split(const std::string& dataset, size_t num_records, uint64_t seed) {
  return make_split(num_records, dataset_info(dataset).dev_size, seed);
}

}  // namespace kvs::longbench
