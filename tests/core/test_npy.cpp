#include <gtest/gtest.h>

#include <filesystem>

#include "core/npy.h"

TEST(Npy, RoundTripsShapeAndValues) {
  const auto path = (std::filesystem::temp_directory_path() / "kvs_test.npy").string();
  const std::vector<float> data = {1.f, -2.5f, 3.25f, 0.f, 1e-8f, 7.f};
  kvs::write_npy_f32(path, {2, 3}, data);
  EXPECT_EQ((std::filesystem::file_size(path) - 24) % 64, 0u);  // header padded to 64 bytes
  std::vector<int64_t> shape;
  EXPECT_EQ(kvs::read_npy_f32(path, &shape), data);
  EXPECT_EQ(shape, (std::vector<int64_t>{2, 3}));
  std::filesystem::remove(path);
}
