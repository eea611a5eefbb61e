#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/safetensors.h"

namespace {

namespace fs = std::filesystem;

std::string temp_path(const std::string& name) {
  return (fs::temp_directory_path() / ("kvs_st_" + name)).string();
}

// Writes a raw file: u64 header length, the header text, then data bytes.
void write_raw(const std::string& path, const std::string& header, size_t data_bytes,
               uint64_t declared_len = UINT64_MAX) {
  std::ofstream out(path, std::ios::binary);
  const uint64_t len = declared_len == UINT64_MAX ? header.size() : declared_len;
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>(len >> (8 * i)));
  out << header;
  out << std::string(data_bytes, '\0');
}

std::string load_error(const std::string& path) {
  try {
    kvs::SafetensorsFile f(path);
  } catch (const kvs::Error& e) {
    return e.what();
  }
  return "";
}

TEST(Safetensors, WriteThenReadRoundTrips) {
  kvs::SafetensorsWriter w;
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};
  const std::vector<uint16_t> b = {kvs::float_to_half(0.5f), kvs::float_to_half(-2.f)};
  w.add("a", kvs::DType::F32, {2, 3}, a.data(), a.size() * 4);
  w.add("b", kvs::DType::F16, {2}, b.data(), b.size() * 2);
  w.set_metadata("format", "pt");
  const auto path = temp_path("roundtrip.safetensors");
  w.write(path);
  kvs::SafetensorsFile f(path);
  ASSERT_EQ(f.tensors().size(), 2u);
  EXPECT_EQ(f.metadata().at("format"), "pt");
  const auto& ea = f.at("a");
  EXPECT_EQ(ea.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(std::memcmp(f.data(ea), a.data(), 24), 0);
  const auto& eb = f.at("b");
  EXPECT_EQ(eb.dtype, kvs::DType::F16);
  const auto* hb = reinterpret_cast<const uint16_t*>(f.data(eb));
  EXPECT_EQ(kvs::half_to_float(hb[1]), -2.f);
  EXPECT_EQ(f.find("missing"), nullptr);
  EXPECT_THROW(f.at("missing"), kvs::Error);
}

TEST(Safetensors, HalfAndBf16ConversionsRoundCorrectly) {
  for (float v : {0.f, 1.f, -1.5f, 65504.f, 6.1035156e-05f, 5.9604645e-08f, 3.14159f}) {
    EXPECT_NEAR(kvs::half_to_float(kvs::float_to_half(v)), v, std::fabs(v) * 1e-3 + 1e-7) << v;
  }
  EXPECT_TRUE(std::isinf(kvs::half_to_float(kvs::float_to_half(1e6f))));
  EXPECT_EQ(kvs::float_to_half(1.0f + 1.0f / 2048), kvs::float_to_half(1.0f));  // tie to even
  EXPECT_EQ(kvs::bf16_to_float(kvs::float_to_bf16(1.0f)), 1.0f);
  EXPECT_EQ(kvs::bf16_to_float(kvs::float_to_bf16(-3.0f)), -3.0f);
  EXPECT_NEAR(kvs::bf16_to_float(kvs::float_to_bf16(3.14159f)), 3.14159f, 0.02f);
}

TEST(Safetensors, RejectsTruncatedFile) {
  const auto path = temp_path("short.safetensors");
  std::ofstream(path, std::ios::binary) << "abc";
  EXPECT_NE(load_error(path).find("too short"), std::string::npos);
}

TEST(Safetensors, RejectsHeaderLengthPastEnd) {
  const auto path = temp_path("hlen.safetensors");
  write_raw(path, "{}", 0, 1000);
  EXPECT_NE(load_error(path).find("runs past the end"), std::string::npos) << load_error(path);
}

TEST(Safetensors, RejectsOverlappingOffsets) {
  const auto path = temp_path("overlap.safetensors");
  write_raw(path,
            R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
            R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
            12);
  EXPECT_NE(load_error(path).find("overlap"), std::string::npos) << load_error(path);
}

TEST(Safetensors, RejectsOutOfRangeOffsets) {
  const auto path = temp_path("range.safetensors");
  write_raw(path, R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", 8);
  EXPECT_NE(load_error(path).find("past the data section"), std::string::npos) << load_error(path);
}

TEST(Safetensors, RejectsUnknownDtype) {
  const auto path = temp_path("dtype.safetensors");
  write_raw(path, R"({"a":{"dtype":"F128","shape":[1],"data_offsets":[0,16]}})", 16);
  EXPECT_NE(load_error(path).find("unknown dtype 'F128'"), std::string::npos) << load_error(path);
}

TEST(Safetensors, RejectsShapeDisagreeingWithByteCount) {
  const auto path = temp_path("bytes.safetensors");
  write_raw(path, R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8);
  EXPECT_NE(load_error(path).find("need 12 bytes"), std::string::npos) << load_error(path);
}

TEST(Safetensors, RejectsMalformedHeaderAndFields) {
  const auto path = temp_path("json.safetensors");
  write_raw(path, R"({"a": {"dtype": )", 0);
  EXPECT_NE(load_error(path).find("not valid JSON"), std::string::npos);
  write_raw(path, R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}})", 0);
  EXPECT_NE(load_error(path).find("non-negative"), std::string::npos);
  write_raw(path, R"({"a":{"dtype":"F32","shape":[1]}})", 4);
  EXPECT_NE(load_error(path).find("data_offsets"), std::string::npos);
  write_raw(path, R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 8);
  EXPECT_NE(load_error(path).find("cover"), std::string::npos);
}

TEST(Safetensors, MissingFileNamesThePath) {
  EXPECT_NE(load_error("/nonexistent/x.safetensors").find("/nonexistent/x.safetensors"),
            std::string::npos);
}

}  // namespace
