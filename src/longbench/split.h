// The development / test split of a dataset, identical on every platform:
//   order = [0, 1, ..., n-1] (record indices in file order);
//   gen = std::mt19937_64(seed);  kvs::portable_shuffle(order, gen)   (core/rng.h: Fisher-Yates
//   from the last position down, each j drawn with kvs::bounded_draw(gen, i + 1));
//   dev = the first dev_size entries of order, test = the rest; both returned sorted ascending.
// dev_size is 100 per dataset, 250 for lcc and repobench-p (DatasetInfo::dev_size); the seed is
// 42 unless chosen otherwise. The same seed gives every dataset of equal size the same split.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kvs::longbench {

constexpr uint64_t kDefaultSplitSeed = 42;

struct Split {
  std::vector<size_t> dev;   // record indices, ascending
  std::vector<size_t> test;  // record indices, ascending
};

// Throws kvs::Error when dev_size exceeds the number of records.
Split make_split(size_t num_records, size_t dev_size, uint64_t seed = kDefaultSplitSeed);

// make_split with the dataset's dev size (dataset.h).
Split dataset_split(const std::string& dataset, size_t num_records,
                    uint64_t seed = kDefaultSplitSeed);

}  // namespace kvs::longbench
