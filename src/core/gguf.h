// A GGUF file (llama.cpp's checkpoint format, versions 2 and 3), memory-mapped and validated when
// opened: header, every metadata value, every tensor info, general.alignment; each offset and size
// is checked against the file. Torch-free: the tokenizer reads its vocabulary through this too.
// The format facts are in docs/gguf.md; errors name the file and the key or tensor.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kvs::gguf {

// ggml_type ids of the tensor data (the ones a file may hold; dequantize.h says which are read).
enum class TensorType : uint32_t {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9, Q2_K = 10,
  Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15, BF16 = 30,
};

// How a ggml type packs its elements: one row is dims[0] / elements blocks of `bytes` bytes.
struct BlockLayout {
  uint64_t elements;
  uint64_t bytes;
};
const BlockLayout* block_layout(uint32_t type);  // nullptr for an id ggml does not define
std::string type_name(uint32_t type);            // "Q4_K (type id 12)", or "unknown type id 99"

struct TensorInfo {
  std::string name;
  std::vector<uint64_t> dims;  // ggml order: dims[0] is the innermost (row length)
  uint32_t type = 0;           // a TensorType value, or another ggml id (refused at dequantize)
  uint64_t offset = 0;         // from the start of the data section
  uint64_t nbytes = 0;
  const uint8_t* data = nullptr;  // into the mapping; valid while the File lives
};

class File {
 public:
  // Maps and validates the file; throws kvs::Error ("<path>: <field>: <what is wrong>").
  static File open(const std::string& path);
  ~File();
  File(File&&) noexcept;
  File& operator=(File&&) noexcept;

  const std::string& path() const;
  uint32_t version() const;
  uint64_t file_size() const;

  bool has(const std::string& key) const;
  // Typed reads; each throws naming the key when it is absent or of another type. Integer reads
  // accept any integer value type that holds the value (writers use 32- or 64-bit counts).
  std::string get_string(const std::string& key) const;
  int64_t get_int(const std::string& key) const;
  double get_float(const std::string& key) const;  // FLOAT32 or FLOAT64
  bool get_bool(const std::string& key) const;
  std::vector<std::string> get_string_array(const std::string& key) const;
  std::vector<int64_t> get_int_array(const std::string& key) const;
  std::vector<double> get_float_array(const std::string& key) const;
  // The same, or nullopt when the key is absent (a present key of the wrong type still throws).
  std::optional<std::string> find_string(const std::string& key) const;
  std::optional<int64_t> find_int(const std::string& key) const;
  std::optional<bool> find_bool(const std::string& key) const;

  const std::vector<TensorInfo>& tensors() const;
  const TensorInfo* find_tensor(const std::string& name) const;  // nullptr when absent

 private:
  struct Impl;
  explicit File(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvs::gguf
