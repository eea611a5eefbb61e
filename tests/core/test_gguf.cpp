#include "core/gguf.h"

#include <gtest/gtest.h>

#include <cstring>

#include "core/error.h"
#include "core/test_gguf_writer.h"
#include "common/scratch_dir.h"

namespace {

using kvs::test::GgufWriter;

class GgufTest : public ::testing::Test {
 protected:
  std::string write(const std::vector<uint8_t>& bytes) {
    const std::string path = dir_.file("model_" + std::to_string(files_++) + ".gguf");
    GgufWriter::write(path, bytes);
    return path;
  }
  // The error File::open throws for these bytes ("" when it opens).
  std::string open_error(const std::vector<uint8_t>& bytes) {
    const std::string path = write(bytes);
    try {
      kvs::gguf::File::open(path);
    } catch (const kvs::Error& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;  // every error names the file
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
      return message;
    }
    return "";
  }

  kvs::test::ScratchDir dir_;
  int files_ = 0;
};

std::vector<uint8_t> q8_block_bytes(size_t blocks) {
  std::vector<uint8_t> bytes(blocks * 34);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7 + 3);
  return bytes;
}

// A valid file with one tensor; error tests patch it.
GgufWriter one_tensor_file() {
  GgufWriter w;
  w.add_string("general.architecture", "llama");
  w.add_tensor("t.weight", {32, 2}, 8, q8_block_bytes(2));
  return w;
}

TEST_F(GgufTest, ReadsEveryValueType) {
  GgufWriter w;
  w.version = 2;
  w.add_raw("u8", GgufWriter::UINT8, {200});
  w.add_raw("i8", GgufWriter::INT8, {0xFE});
  w.add_raw("u16", GgufWriter::UINT16, GgufWriter::le(60000, 2));
  w.add_raw("i16", GgufWriter::INT16, GgufWriter::le(0xFFFF, 2));
  w.add_u32("u32", 4000000000u);
  w.add_i32("i32", -7);
  w.add_f32("f32", 1e-5f);
  w.add_bool("yes", true);
  w.add_bool("no", false);
  w.add_string("s", "héllo");
  w.add_u64("u64", 1ull << 40);
  w.add_raw("i64", GgufWriter::INT64, GgufWriter::le(static_cast<uint64_t>(-5), 8));
  uint64_t bits;
  const double pi = 3.141592653589793;
  std::memcpy(&bits, &pi, 8);
  w.add_raw("f64", GgufWriter::FLOAT64, GgufWriter::le(bits, 8));
  w.add_string_array("strings", {"a", "", "b c"});
  w.add_i32_array("ints", {1, -2, 3});
  std::vector<uint8_t> floats = GgufWriter::le(GgufWriter::FLOAT32, 4);
  for (uint8_t b : GgufWriter::le(2, 8)) floats.push_back(b);
  for (float f : {0.5f, -2.0f}) {
    uint32_t fb;
    std::memcpy(&fb, &f, 4);
    for (uint8_t b : GgufWriter::le(fb, 4)) floats.push_back(b);
  }
  w.add_raw("floats", GgufWriter::ARRAY, floats);

  const auto f = kvs::gguf::File::open(write(w.bytes()));
  EXPECT_EQ(f.version(), 2u);
  EXPECT_EQ(f.get_int("u8"), 200);
  EXPECT_EQ(f.get_int("i8"), -2);
  EXPECT_EQ(f.get_int("u16"), 60000);
  EXPECT_EQ(f.get_int("i16"), -1);
  EXPECT_EQ(f.get_int("u32"), 4000000000ll);
  EXPECT_EQ(f.get_int("i32"), -7);
  EXPECT_EQ(f.get_float("f32"), static_cast<double>(1e-5f));
  EXPECT_TRUE(f.get_bool("yes"));
  EXPECT_FALSE(f.get_bool("no"));
  EXPECT_EQ(f.get_string("s"), "héllo");
  EXPECT_EQ(f.get_int("u64"), 1ll << 40);
  EXPECT_EQ(f.get_int("i64"), -5);
  EXPECT_EQ(f.get_float("f64"), pi);
  EXPECT_EQ(f.get_string_array("strings"), (std::vector<std::string>{"a", "", "b c"}));
  EXPECT_EQ(f.get_int_array("ints"), (std::vector<int64_t>{1, -2, 3}));
  EXPECT_EQ(f.get_float_array("floats"), (std::vector<double>{0.5, -2.0}));
  EXPECT_TRUE(f.has("s"));
  EXPECT_FALSE(f.has("absent"));
  EXPECT_EQ(f.find_string("absent"), std::nullopt);
  EXPECT_EQ(f.find_int("u32"), 4000000000ll);
  EXPECT_EQ(f.find_bool("yes"), true);
  EXPECT_TRUE(f.tensors().empty());
}

TEST_F(GgufTest, WrongTypeOrMissingKeyNamesTheKey) {
  GgufWriter w;
  w.add_string("s", "x");
  w.add_u64("big", ~0ull);
  const std::string path = write(w.bytes());
  const auto f = kvs::gguf::File::open(path);
  try {
    f.get_int("s");
    FAIL();
  } catch (const kvs::Error& e) {
    EXPECT_EQ(std::string(e.what()), path + ": metadata 's': expected an integer, got string");
  }
  try {
    f.get_string("llama.block_count");
    FAIL();
  } catch (const kvs::Error& e) {
    EXPECT_EQ(std::string(e.what()), path + ": missing required metadata 'llama.block_count'");
  }
  EXPECT_THROW(f.find_int("s"), kvs::Error);  // present with the wrong type
  EXPECT_THROW(f.get_int("big"), kvs::Error);  // does not fit int64
  EXPECT_THROW(f.get_string_array("s"), kvs::Error);
}

TEST_F(GgufTest, TensorInfosPointIntoTheAlignedDataSection) {
  GgufWriter w;
  w.add_tensor("a", {32, 3}, 8, q8_block_bytes(3));  // 102 bytes, padded to 128
  std::vector<uint8_t> f32(4 * 5);
  for (size_t i = 0; i < f32.size(); ++i) f32[i] = static_cast<uint8_t>(i + 1);
  w.add_tensor("b", {5}, 0, f32);
  const std::vector<uint8_t> bytes = w.bytes();
  const auto f = kvs::gguf::File::open(write(bytes));
  ASSERT_EQ(f.tensors().size(), 2u);
  const kvs::gguf::TensorInfo* a = f.find_tensor("a");
  const kvs::gguf::TensorInfo* b = f.find_tensor("b");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(f.find_tensor("c"), nullptr);
  EXPECT_EQ(a->dims, (std::vector<uint64_t>{32, 3}));
  EXPECT_EQ(a->type, 8u);
  EXPECT_EQ(a->nbytes, 102u);
  EXPECT_EQ(b->offset, 128u);
  EXPECT_EQ(b->nbytes, 20u);
  const uint64_t data_start = bytes.size() - 128 - 32;
  EXPECT_EQ(data_start % 32, 0u);
  EXPECT_EQ(std::memcmp(b->data, bytes.data() + data_start + 128, 20), 0);
  EXPECT_EQ(std::memcmp(a->data, q8_block_bytes(3).data(), 102), 0);
  EXPECT_EQ(f.file_size(), bytes.size());
}

TEST_F(GgufTest, HonoursGeneralAlignment) {
  GgufWriter w;
  w.alignment = 64;
  w.add_u32("general.alignment", 64);
  w.add_tensor("a", {32}, 8, q8_block_bytes(1));
  w.add_tensor("b", {32}, 8, q8_block_bytes(1));
  const std::vector<uint8_t> bytes = w.bytes();
  const auto f = kvs::gguf::File::open(write(bytes));
  EXPECT_EQ(f.find_tensor("b")->offset, 64u);
  EXPECT_EQ(f.find_tensor("b")->data, f.find_tensor("a")->data + 64);
  EXPECT_EQ((f.find_tensor("a")->data - f.find_tensor("a")->data) % 64, 0);
  EXPECT_EQ(bytes.size() % 64, 0u);
}

TEST_F(GgufTest, RefusesBadHeaders) {
  const std::vector<uint8_t> good = one_tensor_file().bytes();
  EXPECT_EQ(open_error(good), "");

  EXPECT_NE(open_error({good.begin(), good.begin() + 10}).find("header: the file is 10 bytes"),
            std::string::npos);
  auto bad_magic = good;
  bad_magic[0] = 'X';
  EXPECT_NE(open_error(bad_magic).find("magic: bytes 58 47 55 46 are not \"GGUF\""), std::string::npos);
  for (uint32_t version : {0u, 1u, 4u}) {
    auto v = good;
    v[4] = static_cast<uint8_t>(version);
    EXPECT_NE(open_error(v).find("version: unsupported GGUF version " + std::to_string(version)),
              std::string::npos);
  }
  auto big_endian = good;
  big_endian[4] = 0;
  big_endian[7] = 3;
  EXPECT_NE(open_error(big_endian).find("big-endian"), std::string::npos);
  auto huge_count = good;
  huge_count[23] = 0x7F;  // metadata_kv_count
  EXPECT_NE(open_error(huge_count).find("metadata_kv_count"), std::string::npos);
  auto truncated = good;
  truncated.resize(good.size() - 40);
  EXPECT_NE(open_error(truncated).find("tensor 't.weight': offset 0 + size 68 runs past the end"),
            std::string::npos);
  truncated.resize(40);
  EXPECT_NE(open_error(truncated).find("tensor_count: 1 tensor infos cannot fit"), std::string::npos);
  GgufWriter metadata_only;
  metadata_only.add_string("general.architecture", "llama");
  auto in_key = metadata_only.bytes();
  in_key.resize(40);
  EXPECT_NE(open_error(in_key).find("metadata pair 0 key: string length 20 runs past the end"),
            std::string::npos);
}

TEST_F(GgufTest, RefusesBadMetadata) {
  GgufWriter dup;
  dup.add_u32("k", 1);
  dup.add_u32("k", 2);
  EXPECT_NE(open_error(dup.bytes()).find("metadata 'k': duplicate key"), std::string::npos);

  GgufWriter empty_key;
  empty_key.add_u32("", 1);
  EXPECT_NE(open_error(empty_key.bytes()).find("metadata pair 0: empty key"), std::string::npos);

  GgufWriter bad_bool;
  bad_bool.add_raw("b", GgufWriter::BOOL, {2});
  EXPECT_NE(open_error(bad_bool.bytes()).find("metadata 'b': bool value 2 is neither 0 nor 1"),
            std::string::npos);

  GgufWriter bad_type;
  bad_type.add_raw("x", 13, {0, 0, 0, 0});
  EXPECT_NE(open_error(bad_type.bytes()).find("metadata 'x': unknown value type 13"), std::string::npos);

  GgufWriter nested;
  nested.add_raw("x", GgufWriter::ARRAY, GgufWriter::le(GgufWriter::ARRAY, 4));
  EXPECT_NE(open_error(nested.bytes()).find("arrays of arrays"), std::string::npos);

  GgufWriter long_string;
  std::vector<uint8_t> value = GgufWriter::le(1000, 8);
  value.push_back('a');
  long_string.add_raw("s", GgufWriter::STRING, value);
  EXPECT_NE(open_error(long_string.bytes()).find("metadata 's': string length 1000 runs past the end"),
            std::string::npos);

  GgufWriter long_array;
  std::vector<uint8_t> array = GgufWriter::le(GgufWriter::UINT32, 4);
  for (uint8_t b : GgufWriter::le(1ull << 60, 8)) array.push_back(b);
  long_array.add_raw("a", GgufWriter::ARRAY, array);
  EXPECT_NE(open_error(long_array.bytes()).find("metadata 'a': array of 1152921504606846976 uint32"),
            std::string::npos);

  GgufWriter long_element;
  std::vector<uint8_t> strings = GgufWriter::le(GgufWriter::STRING, 4);
  for (uint8_t b : GgufWriter::le(2, 8)) strings.push_back(b);
  for (uint8_t b : GgufWriter::le(1, 8)) strings.push_back(b);
  strings.push_back('x');
  for (uint8_t b : GgufWriter::le(~0ull, 8)) strings.push_back(b);
  long_element.add_raw("tokens", GgufWriter::ARRAY, strings);
  EXPECT_NE(open_error(long_element.bytes()).find("metadata 'tokens'[1]: string length 18446744073709551615"),
            std::string::npos);

  GgufWriter alignment_type;
  alignment_type.add_u64("general.alignment", 32);
  EXPECT_NE(open_error(alignment_type.bytes()).find("'general.alignment': expected uint32, got uint64"),
            std::string::npos);
  GgufWriter alignment_value;
  alignment_value.add_u32("general.alignment", 48);
  EXPECT_NE(open_error(alignment_value.bytes()).find("48 is not a power of two"), std::string::npos);
}

TEST_F(GgufTest, RefusesBadTensorInfos) {
  GgufWriter unknown = one_tensor_file();
  unknown.add_tensor("u", {32}, 99, q8_block_bytes(1));
  EXPECT_NE(open_error(unknown.bytes()).find("tensor 'u': unknown tensor type id 99"), std::string::npos);

  GgufWriter row;
  row.add_tensor("r", {33, 2}, 8, q8_block_bytes(2));
  EXPECT_NE(open_error(row.bytes()).find(
                "tensor 'r': row length 33 is not a multiple of the block size 32 of Q8_0 (type id 8)"),
            std::string::npos);

  GgufWriter dims;
  dims.add_tensor("d", {32, 1, 1, 1, 1}, 8, q8_block_bytes(1));
  EXPECT_NE(open_error(dims.bytes()).find("tensor 'd': n_dims 5 is not in 1..4"), std::string::npos);

  GgufWriter zero;
  zero.add_tensor("z", {32, 0}, 8, {});
  EXPECT_NE(open_error(zero.bytes()).find("tensor 'z': dimension 1 is 0"), std::string::npos);

  GgufWriter overflow;
  overflow.add_tensor("o", {1ull << 32, 1ull << 32, 16}, 0, {});
  EXPECT_NE(open_error(overflow.bytes()).find("tensor 'o': dims"), std::string::npos);

  GgufWriter duplicate = one_tensor_file();
  duplicate.add_tensor("t.weight", {32}, 8, q8_block_bytes(1));
  EXPECT_NE(open_error(duplicate.bytes()).find("tensor 't.weight': duplicate tensor name"),
            std::string::npos);

  GgufWriter past_end = one_tensor_file();
  past_end.add_tensor("p", {32}, 8, q8_block_bytes(1), 1 << 20);
  EXPECT_NE(open_error(past_end.bytes()).find("tensor 'p': offset 1048576 + size 34 runs past the end"),
            std::string::npos);

  GgufWriter huge_offset = one_tensor_file();
  huge_offset.add_tensor("h", {32}, 8, q8_block_bytes(1), static_cast<int64_t>(~0ull << 5 >> 1));
  EXPECT_NE(open_error(huge_offset.bytes()).find("tensor 'h': offset"), std::string::npos);

  GgufWriter too_big = one_tensor_file();
  too_big.add_tensor("b", {32, 1000}, 8, q8_block_bytes(1));
  EXPECT_NE(open_error(too_big.bytes()).find("tensor 'b': offset 96 + size 34000 runs past the end"),
            std::string::npos);

  GgufWriter misaligned = one_tensor_file();
  misaligned.add_tensor("m", {32}, 8, q8_block_bytes(1), 70);
  EXPECT_NE(open_error(misaligned.bytes()).find("tensor 'm': offset 70 is not a multiple of the alignment 32"),
            std::string::npos);

  GgufWriter long_name;
  long_name.add_tensor(std::string(64, 'n'), {32}, 8, q8_block_bytes(1));
  EXPECT_NE(open_error(long_name.bytes()).find("name is 64 bytes"), std::string::npos);
}

TEST_F(GgufTest, KnowsTheBlockLayouts) {
  EXPECT_EQ(kvs::gguf::block_layout(12)->elements, 256u);
  EXPECT_EQ(kvs::gguf::block_layout(12)->bytes, 144u);
  EXPECT_EQ(kvs::gguf::block_layout(14)->bytes, 210u);
  EXPECT_EQ(kvs::gguf::block_layout(4), nullptr);  // removed from ggml
  EXPECT_EQ(kvs::gguf::type_name(3), "Q4_1 (type id 3)");
  EXPECT_EQ(kvs::gguf::type_name(99), "unknown type id 99");
}

}  // namespace
