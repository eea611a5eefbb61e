// The safetensors format, without LibTorch: a memory-mapped reader that validates every
// header field, and a writer. Layout: u64 little-endian header length N, N bytes of JSON
// {name: {dtype, shape, data_offsets: [begin, end)}, "__metadata__": {str: str}}, then the
// data; offsets are relative to byte 8 + N.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kvs {

enum class DType { F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL };

size_t dtype_size(DType dtype);
const char* dtype_name(DType dtype);  // the safetensors spelling, e.g. "BF16"

struct TensorEntry {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t begin = 0;  // relative to the data section
  uint64_t end = 0;
  int64_t numel() const;
};

// A read-only view of one .safetensors file. The mapping lives as long as the object.
class SafetensorsFile {
 public:
  explicit SafetensorsFile(const std::string& path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  const std::vector<TensorEntry>& tensors() const { return tensors_; }
  const TensorEntry* find(const std::string& name) const;  // nullptr when absent
  const TensorEntry& at(const std::string& name) const;    // throws when absent
  const uint8_t* data(const TensorEntry& entry) const { return data_ + entry.begin; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  std::string path_;
  void* map_ = nullptr;
  size_t map_size_ = 0;
  const uint8_t* data_ = nullptr;
  std::vector<TensorEntry> tensors_;
  std::map<std::string, std::string> metadata_;
};

// Collects tensors and writes them as one file (tensors in insertion order, 8-byte aligned
// header as the reference writer does). The bytes are copied at add().
class SafetensorsWriter {
 public:
  void add(const std::string& name, DType dtype, const std::vector<int64_t>& shape,
           const void* bytes, size_t byte_count);
  void set_metadata(const std::string& key, const std::string& value);
  size_t total_bytes() const { return blob_.size(); }
  // Writes to path + ".tmp" and renames, so a failed write leaves nothing half-written.
  void write(const std::string& path) const;

 private:
  struct Item {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;
    uint64_t begin, end;
  };
  std::vector<Item> items_;
  std::vector<uint8_t> blob_;
  std::map<std::string, std::string> metadata_;
};

// fp16 / bf16 <-> fp32 conversions used by loaders and writers.
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
float bf16_to_float(uint16_t b);
uint16_t float_to_bf16(float f);  // round to nearest even

}  // namespace kvs
