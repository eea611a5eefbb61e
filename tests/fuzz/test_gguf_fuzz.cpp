// Seeded mutations of a small valid GGUF file (bit flips, truncations, length and count fields set
// huge, random bytes): each must open or throw kvs::Error. Built with AddressSanitizer and UBSan
// (tests/fuzz/CMakeLists.txt), so a read out of bounds or undefined behaviour fails the test.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "core/error.h"
#include "core/gguf.h"
#include "core/test_gguf_writer.h"
#include "common/scratch_dir.h"

namespace {

using kvs::test::GgufWriter;

std::vector<uint8_t> seed_file() {
  GgufWriter w;
  w.add_string("general.architecture", "llama");
  w.add_u32("llama.block_count", 2);
  w.add_f32("llama.rope.freq_base", 10000.0f);
  w.add_bool("tokenizer.ggml.add_bos_token", false);
  w.add_string_array("tokenizer.ggml.tokens", {"<s>", "a", "bc", "\xc4\xa0"});
  w.add_i32_array("tokenizer.ggml.token_type", {3, 1, 1, 1});
  std::vector<uint8_t> q8(2 * 34, 0x11), f32(4 * 8, 0x3f), q4k(144, 0x22);
  w.add_tensor("token_embd.weight", {32, 2}, 8, q8);
  w.add_tensor("output_norm.weight", {8}, 0, f32);
  w.add_tensor("blk.0.ffn_down.weight", {256}, 12, q4k);
  return w.bytes();
}

// Reads everything an opened file offers, the way the loader and tokenizer do.
void exercise(const kvs::gguf::File& f) {
  uint64_t checksum = 0;
  for (const auto& t : f.tensors()) {
    ASSERT_NE(t.data, nullptr);
    if (t.nbytes > 0) checksum += t.data[0] + t.data[t.nbytes - 1];
    EXPECT_EQ(f.find_tensor(t.name), &t);
  }
  for (const char* key : {"general.architecture", "llama.block_count", "llama.rope.freq_base",
                          "tokenizer.ggml.add_bos_token", "tokenizer.ggml.tokens", "tokenizer.ggml.token_type"}) {
    try { checksum += f.get_string(key).size(); } catch (const kvs::Error&) {}
    try { checksum += static_cast<uint64_t>(f.get_int(key)); } catch (const kvs::Error&) {}
    try { checksum += static_cast<uint64_t>(f.get_float(key)); } catch (const kvs::Error&) {}
    try { checksum += f.get_bool(key); } catch (const kvs::Error&) {}
    try { checksum += f.get_string_array(key).size(); } catch (const kvs::Error&) {}
    try { checksum += f.get_int_array(key).size(); } catch (const kvs::Error&) {}
    try { checksum += f.get_float_array(key).size(); } catch (const kvs::Error&) {}
  }
  ::testing::Test::RecordProperty("checksum", std::to_string(checksum));
}

void mutate(std::vector<uint8_t>& bytes, std::mt19937_64& rng) {
  const int edits = 1 + static_cast<int>(rng() % 3);
  for (int e = 0; e < edits && !bytes.empty(); ++e) {
    const size_t at = rng() % bytes.size();
    switch (rng() % 4) {
      case 0:  // flip a bit
        bytes[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
        break;
      case 1:  // truncate
        bytes.resize(at);
        break;
      case 2: {  // a length, count, dim or offset field set huge
        static const uint64_t huge[] = {~0ull, 1ull << 63, (1ull << 32) - 1, 1ull << 32,
                                        1ull << 40, 0x7FFFFFFFFFFFFFFFull};
        const uint64_t v = huge[rng() % 6] - rng() % 3;
        for (size_t i = 0; i < 8 && at + i < bytes.size(); ++i)
          bytes[at + i] = static_cast<uint8_t>(v >> (8 * i));
        break;
      }
      default:  // a random byte
        bytes[at] = static_cast<uint8_t>(rng());
    }
  }
}

TEST(GgufFuzz, MutatedHeadersOpenOrThrowKvsError) {
  const std::vector<uint8_t> seed = seed_file();
  kvs::test::ScratchDir dir;
  const std::string path = dir.file("fuzz.gguf");
  GgufWriter::write(path, seed);
  ASSERT_NO_THROW(exercise(kvs::gguf::File::open(path)));

  std::mt19937_64 rng(20261201);
  constexpr int kCases = 10000;
  int opened = 0, refused = 0;
  for (int i = 0; i < kCases; ++i) {
    std::vector<uint8_t> bytes = seed;
    mutate(bytes, rng);
    GgufWriter::write(path, bytes);
    try {
      exercise(kvs::gguf::File::open(path));
      ++opened;
    } catch (const kvs::Error& e) {
      EXPECT_NE(std::string(e.what()).rfind(path + ": ", 0), std::string::npos) << e.what();
      ++refused;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "case " << i << ": not a kvs::Error: " << e.what();
    }
  }
  EXPECT_EQ(opened + refused, kCases);
  EXPECT_GT(opened, 0);   // mutations inside string bytes or tensor data keep the file valid
  EXPECT_GT(refused, kCases / 4);
}

}  // namespace
