// A small GGUF writer for tests: metadata of any value type, tensors with raw block bytes, the
// padding and alignment of the format. It writes exactly what it is told (including nonsense,
// for the error tests); fields are little-endian.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace kvs::test {

class GgufWriter {
 public:
  enum Type : uint32_t {
    UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5, FLOAT32 = 6, BOOL = 7,
    STRING = 8, ARRAY = 9, UINT64 = 10, INT64 = 11, FLOAT64 = 12,
  };

  uint32_t version = 3;
  uint32_t alignment = 32;  // used for the layout; write general.alignment yourself to change it

  // Scalars: `bytes` is the value's own encoding (see the typed helpers below).
  void add_raw(const std::string& key, uint32_t type, const std::vector<uint8_t>& value) {
    put_string(kv_, key);
    put(kv_, type, 4);
    kv_.insert(kv_.end(), value.begin(), value.end());
    ++kv_count_;
  }
  void add_u32(const std::string& key, uint32_t v) { add_raw(key, UINT32, le(v, 4)); }
  void add_u64(const std::string& key, uint64_t v) { add_raw(key, UINT64, le(v, 8)); }
  void add_i32(const std::string& key, int32_t v) { add_raw(key, INT32, le(static_cast<uint32_t>(v), 4)); }
  void add_f32(const std::string& key, float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    add_raw(key, FLOAT32, le(bits, 4));
  }
  void add_bool(const std::string& key, bool v) { add_raw(key, BOOL, {static_cast<uint8_t>(v)}); }
  void add_string(const std::string& key, const std::string& v) {
    std::vector<uint8_t> bytes;
    put_string(bytes, v);
    add_raw(key, STRING, bytes);
  }
  void add_string_array(const std::string& key, const std::vector<std::string>& items) {
    std::vector<uint8_t> bytes;
    put(bytes, STRING, 4);
    put(bytes, items.size(), 8);
    for (const auto& s : items) put_string(bytes, s);
    add_raw(key, ARRAY, bytes);
  }
  void add_i32_array(const std::string& key, const std::vector<int32_t>& items) {
    std::vector<uint8_t> bytes;
    put(bytes, INT32, 4);
    put(bytes, items.size(), 8);
    for (int32_t v : items) put(bytes, static_cast<uint32_t>(v), 4);
    add_raw(key, ARRAY, bytes);
  }

  // A tensor: dims in ggml order (innermost first), its ggml type id and its raw bytes. The
  // offset is the running aligned sum unless given.
  void add_tensor(const std::string& name, const std::vector<uint64_t>& dims, uint32_t type,
                  const std::vector<uint8_t>& data, int64_t offset = -1) {
    tensors_.push_back({name, dims, type, data, offset});
  }

  std::vector<uint8_t> bytes() const {
    std::vector<uint8_t> out;
    put(out, 0x46554747, 4);
    put(out, version, 4);
    put(out, tensors_.size(), 8);
    put(out, kv_count_, 8);
    out.insert(out.end(), kv_.begin(), kv_.end());
    std::vector<uint8_t> data;
    for (const Tensor& t : tensors_) {
      put_string(out, t.name);
      put(out, t.dims.size(), 4);
      for (uint64_t d : t.dims) put(out, d, 8);
      put(out, t.type, 4);
      const uint64_t offset = t.offset >= 0 ? static_cast<uint64_t>(t.offset) : data.size();
      put(out, offset, 8);
      data.insert(data.end(), t.data.begin(), t.data.end());
      while (data.size() % alignment) data.push_back(0);
    }
    while (out.size() % alignment) out.push_back(0);
    out.insert(out.end(), data.begin(), data.end());
    return out;
  }

  static void write(const std::string& path, const std::vector<uint8_t>& bytes) {
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }

  static std::vector<uint8_t> le(uint64_t v, int n) {
    std::vector<uint8_t> out;
    put(out, v, n);
    return out;
  }

 private:
  struct Tensor {
    std::string name;
    std::vector<uint64_t> dims;
    uint32_t type;
    std::vector<uint8_t> data;
    int64_t offset;
  };

  static void put(std::vector<uint8_t>& out, uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  static void put_string(std::vector<uint8_t>& out, const std::string& s) {
    put(out, s.size(), 8);
    out.insert(out.end(), s.begin(), s.end());
  }

  std::vector<uint8_t> kv_;
  uint64_t kv_count_ = 0;
  std::vector<Tensor> tensors_;
};

}  // namespace kvs::test
