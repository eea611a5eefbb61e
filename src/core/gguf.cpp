#include "core/gguf.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <set>

#include "core/error.h"
#include "core/float_bits.h"

namespace kvs::gguf {

namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
constexpr uint64_t kHeaderBytes = 24;    // magic, version, tensor count, metadata count
constexpr uint32_t kDefaultAlignment = 32;
constexpr size_t kMaxDims = 4;
constexpr size_t kMaxTensorNameBytes = 63;  // ggml's GGML_MAX_NAME (64) holds the NUL too

enum ValueType : uint32_t {
  UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5, FLOAT32 = 6, BOOL = 7,
  STRING = 8, ARRAY = 9, UINT64 = 10, INT64 = 11, FLOAT64 = 12,
};

const char* value_type_name(uint32_t type) {
  static const char* const names[] = {"uint8",  "int8",  "uint16", "int16", "uint32",
                                      "int32",  "float32", "bool", "string", "array",
                                      "uint64", "int64", "float64"};
  return type <= FLOAT64 ? names[type] : "unknown";
}

bool is_integer_type(uint32_t type) {
  return type <= INT32 || type == UINT64 || type == INT64;
}
bool is_float_type(uint32_t type) { return type == FLOAT32 || type == FLOAT64; }

// Bytes of one scalar value (strings and arrays have their own length fields).
uint64_t scalar_size(uint32_t type) {
  switch (type) {
    case UINT8: case INT8: case BOOL: return 1;
    case UINT16: case INT16: return 2;
    case UINT32: case INT32: case FLOAT32: return 4;
    case UINT64: case INT64: case FLOAT64: return 8;
    default: return 0;
  }
}

// Elements and bytes per block of every ggml type id a file may hold (gguf-py's
// GGML_QUANT_SIZES), with ggml's names; ids not listed are unknown.
struct TypeEntry {
  const char* name;
  BlockLayout layout;
};
const std::map<uint32_t, TypeEntry>& type_table() {
  static const std::map<uint32_t, TypeEntry> table = {
      {0, {"F32", {1, 4}}},          {1, {"F16", {1, 2}}},          {2, {"Q4_0", {32, 18}}},
      {3, {"Q4_1", {32, 20}}},       {6, {"Q5_0", {32, 22}}},       {7, {"Q5_1", {32, 24}}},
      {8, {"Q8_0", {32, 34}}},       {9, {"Q8_1", {32, 40}}},       {10, {"Q2_K", {256, 84}}},
      {11, {"Q3_K", {256, 110}}},    {12, {"Q4_K", {256, 144}}},    {13, {"Q5_K", {256, 176}}},
      {14, {"Q6_K", {256, 210}}},    {15, {"Q8_K", {256, 292}}},    {16, {"IQ2_XXS", {256, 66}}},
      {17, {"IQ2_XS", {256, 74}}},   {18, {"IQ3_XXS", {256, 98}}},  {19, {"IQ1_S", {256, 50}}},
      {20, {"IQ4_NL", {32, 18}}},    {21, {"IQ3_S", {256, 110}}},   {22, {"IQ2_S", {256, 82}}},
      {23, {"IQ4_XS", {256, 136}}},  {24, {"I8", {1, 1}}},          {25, {"I16", {1, 2}}},
      {26, {"I32", {1, 4}}},         {27, {"I64", {1, 8}}},         {28, {"F64", {1, 8}}},
      {29, {"IQ1_M", {256, 56}}},    {30, {"BF16", {1, 2}}},        {34, {"TQ1_0", {256, 54}}},
      {35, {"TQ2_0", {256, 66}}},    {39, {"MXFP4", {32, 17}}},    {40, {"NVFP4", {64, 36}}},     {41, {"Q1_0", {128, 18}}}};
  return table;
}

// One metadata value: a scalar is an array of one element. Integers keep their raw 64 bits
// (sign-extended for signed types) so reads can check that the value fits.
struct Value {
  uint32_t type = 0;          // ValueType
  uint32_t element_type = 0;  // for ARRAY: the type of the elements, else == type
  std::vector<uint64_t> integers;
  std::vector<double> floats;
  std::vector<std::string> strings;

  std::string type_name() const {
    if (type != ARRAY) return value_type_name(type);
    return std::string("array of ") + value_type_name(element_type);
  }
};

// Bounds-checked little-endian reads from the mapping; every error names the file and the field.
class Cursor {
 public:
  Cursor(const std::string& path, const uint8_t* data, uint64_t size)
      : path_(path), data_(data), size_(size) {}

  uint64_t position() const { return pos_; }
  uint64_t remaining() const { return size_ - pos_; }

  const uint8_t* take(uint64_t n, const std::string& field) {
    if (n > remaining())
      throw error_at(path_, field + ": needs " + std::to_string(n) + " bytes at offset " +
                                std::to_string(pos_) + " but the file ends at " +
                                std::to_string(size_) + " (truncated?)");
    const uint8_t* p = data_ + pos_;
    pos_ += n;
    return p;
  }
  uint64_t read_uint(uint64_t bytes, const std::string& field) {
    const uint8_t* p = take(bytes, field);
    uint64_t v = 0;
    for (uint64_t i = bytes; i-- > 0;) v = (v << 8) | p[i];
    return v;
  }
  uint32_t u32(const std::string& field) { return static_cast<uint32_t>(read_uint(4, field)); }
  uint64_t u64(const std::string& field) { return read_uint(8, field); }

  std::string string(const std::string& field) {
    const uint64_t length = u64(field + " length");
    if (length > remaining())
      throw error_at(path_, field + ": string length " + std::to_string(length) +
                                " runs past the end of the file (" + std::to_string(remaining()) +
                                " bytes left at offset " + std::to_string(pos_) + ")");
    const uint8_t* p = take(length, field);
    return std::string(reinterpret_cast<const char*>(p), length);
  }

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw error_at(path_, field + ": " + what);
  }

 private:
  const std::string& path_;
  const uint8_t* data_;
  uint64_t size_;
  uint64_t pos_ = 0;
};

uint64_t sign_extend(uint64_t raw, uint64_t bytes) {
  const unsigned shift = static_cast<unsigned>(64 - 8 * bytes);
  return shift == 0 ? raw : static_cast<uint64_t>(static_cast<int64_t>(raw << shift) >> shift);
}

// Reads one element of a scalar type into value.
void read_scalar(Cursor& in, uint32_t type, Value& value, const std::string& field) {
  switch (type) {
    case STRING:
      value.strings.push_back(in.string(field));
      return;
    case FLOAT32:
      value.floats.push_back(float_from_bits(in.u32(field)));
      return;
    case FLOAT64:
      value.floats.push_back(double_from_bits(in.u64(field)));
      return;
    case BOOL: {
      const uint64_t b = in.read_uint(1, field);
      if (b > 1) in.fail(field, "bool value " + std::to_string(b) + " is neither 0 nor 1");
      value.integers.push_back(b);
      return;
    }
    default: {
      const uint64_t bytes = scalar_size(type);
      const uint64_t raw = in.read_uint(bytes, field);
      const bool is_signed = type == INT8 || type == INT16 || type == INT32 || type == INT64;
      value.integers.push_back(is_signed ? sign_extend(raw, bytes) : raw);
    }
  }
}

Value read_value(Cursor& in, const std::string& field) {
  Value value;
  value.type = in.u32(field + " type");
  if (value.type > FLOAT64)
    in.fail(field, "unknown value type " + std::to_string(value.type));
  if (value.type != ARRAY) {
    value.element_type = value.type;
    read_scalar(in, value.type, value, field);
    return value;
  }
  value.element_type = in.u32(field + " element type");
  if (value.element_type == ARRAY) in.fail(field, "arrays of arrays are not supported");
  if (value.element_type > FLOAT64)
    in.fail(field, "unknown array element type " + std::to_string(value.element_type));
  const uint64_t count = in.u64(field + " count");
  // Every element takes at least its scalar size (a string at least its 8-byte length).
  const uint64_t min_element = value.element_type == STRING ? 8 : scalar_size(value.element_type);
  if (count > in.remaining() / min_element)
    in.fail(field, "array of " + std::to_string(count) + " " +
                       value_type_name(value.element_type) + " elements runs past the end of the file (" +
                       std::to_string(in.remaining()) + " bytes left)");
  if (value.element_type == STRING) value.strings.reserve(count);
  else if (is_float_type(value.element_type)) value.floats.reserve(count);
  else value.integers.reserve(count);
  for (uint64_t i = 0; i < count; ++i)
    read_scalar(in, value.element_type, value, field + "[" + std::to_string(i) + "]");
  return value;
}

uint64_t align_up(uint64_t x, uint64_t alignment) {
  const uint64_t rem = x % alignment;
  return rem == 0 ? x : x + (alignment - rem);
}

std::string dims_string(const std::vector<uint64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

}  // namespace

const BlockLayout* block_layout(uint32_t type) {
  const auto it = type_table().find(type);
  return it == type_table().end() ? nullptr : &it->second.layout;
}

std::string type_name(uint32_t type) {
  const auto it = type_table().find(type);
  return it == type_table().end() ? "unknown type id " + std::to_string(type)
                                  : std::string(it->second.name) + " (type id " + std::to_string(type) + ")";
}

struct File::Impl {
  std::string path;
  void* map = nullptr;
  uint64_t size = 0;
  uint32_t version = 0;
  std::map<std::string, Value> metadata;
  std::vector<TensorInfo> tensors;
  std::map<std::string, size_t> tensor_index;

  ~Impl() {
    if (map) ::munmap(map, size);
  }

  const Value& require(const std::string& key) const {
    const auto it = metadata.find(key);
    if (it == metadata.end()) throw error_at(path, "missing required metadata '" + key + "'");
    return it->second;
  }
  [[noreturn]] void wrong_type(const std::string& key, const Value& v, const char* expected) const {
    throw error_at(path, "metadata '" + key + "': expected " + expected + ", got " + v.type_name());
  }
  int64_t as_int64(const std::string& key, const Value& v, size_t i) const {
    const uint64_t raw = v.integers[i];
    if (v.element_type == UINT64 && raw > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      throw error_at(path, "metadata '" + key + "': value " + std::to_string(raw) +
                               " does not fit a signed 64-bit integer");
    return static_cast<int64_t>(raw);
  }

  void parse();
  void parse_tensor_infos(Cursor& in, uint64_t count);
  void place_tensors(uint64_t data_start);
};

void File::Impl::parse() {
  const auto* bytes = static_cast<const uint8_t*>(map);
  Cursor in(path, bytes, size);
  const uint32_t magic = in.u32("magic");
  if (magic != kMagic) {
    char shown[64];
    std::snprintf(shown, sizeof shown, "%02x %02x %02x %02x", bytes[0], bytes[1], bytes[2], bytes[3]);
    in.fail("magic", std::string("bytes ") + shown + " are not \"GGUF\" (47 47 55 46): not a GGUF file");
  }
  version = in.u32("version");
  if ((version & 0xFFFF) == 0 && version != 0)
    in.fail("version", "reads as " + std::to_string(version) +
                           ": a big-endian GGUF file, which is not supported");
  if (version < 2 || version > 3)
    in.fail("version", "unsupported GGUF version " + std::to_string(version) + " (2 and 3 are read)");
  const uint64_t tensor_count = in.u64("tensor_count");
  const uint64_t kv_count = in.u64("metadata_kv_count");
  // A KV pair takes at least 8 (key length) + 1 (key) + 4 (type) + 1 bytes; a tensor info
  // 8 + 1 + 4 + 4 + 8. Counts beyond that cannot be honest.
  if (kv_count > in.remaining() / 14)
    in.fail("metadata_kv_count", std::to_string(kv_count) +
                                     " pairs cannot fit in the file's " + std::to_string(size) + " bytes (truncated?)");
  if (tensor_count > in.remaining() / 25)
    in.fail("tensor_count", std::to_string(tensor_count) +
                                " tensor infos cannot fit in the file's " + std::to_string(size) + " bytes (truncated?)");

  for (uint64_t i = 0; i < kv_count; ++i) {
    const std::string where = "metadata pair " + std::to_string(i);
    std::string key = in.string(where + " key");
    if (key.empty()) in.fail(where, "empty key");
    const std::string field = "metadata '" + key + "'";
    if (metadata.count(key)) in.fail(field, "duplicate key");
    metadata.emplace(std::move(key), read_value(in, field));
  }

  uint32_t alignment = kDefaultAlignment;
  if (const auto it = metadata.find("general.alignment"); it != metadata.end()) {
    const Value& v = it->second;
    if (v.type != UINT32)
      in.fail("metadata 'general.alignment'", "expected uint32, got " + v.type_name());
    alignment = static_cast<uint32_t>(v.integers[0]);
    if (alignment == 0 || (alignment & (alignment - 1)) != 0)
      in.fail("metadata 'general.alignment'", std::to_string(alignment) + " is not a power of two");
  }

  parse_tensor_infos(in, tensor_count);
  const uint64_t data_start = align_up(in.position(), alignment);
  for (const TensorInfo& t : tensors)
    if (t.offset % alignment != 0)
      throw error_at(path, "tensor '" + t.name + "': offset " + std::to_string(t.offset) +
                               " is not a multiple of the alignment " + std::to_string(alignment));
  place_tensors(data_start);
}

void File::Impl::parse_tensor_infos(Cursor& in, uint64_t count) {
  tensors.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    TensorInfo t;
    t.name = in.string("tensor info " + std::to_string(i) + " name");
    const std::string field = "tensor '" + t.name + "'";
    if (t.name.empty()) in.fail("tensor info " + std::to_string(i), "empty name");
    if (t.name.size() > kMaxTensorNameBytes)
      in.fail(field, "name is " + std::to_string(t.name.size()) + " bytes, more than " +
                         std::to_string(kMaxTensorNameBytes));
    if (tensor_index.count(t.name)) in.fail(field, "duplicate tensor name");
    const uint32_t n_dims = in.u32(field + " n_dims");
    if (n_dims == 0 || n_dims > kMaxDims)
      in.fail(field, "n_dims " + std::to_string(n_dims) + " is not in 1.." + std::to_string(kMaxDims));
    uint64_t elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      const uint64_t dim = in.u64(field + " dims[" + std::to_string(d) + "]");
      if (dim == 0) in.fail(field, "dimension " + std::to_string(d) + " is 0");
      if (elements > std::numeric_limits<uint64_t>::max() / dim)
        in.fail(field, "dims " + dims_string(t.dims) + " x " + std::to_string(dim) + " overflow");
      elements *= dim;
      t.dims.push_back(dim);
    }
    t.type = in.u32(field + " type");
    const BlockLayout* layout = block_layout(t.type);
    if (!layout) in.fail(field, "unknown tensor type id " + std::to_string(t.type));
    const BlockLayout& b = *layout;
    if (t.dims[0] % b.elements != 0)
      in.fail(field, "row length " + std::to_string(t.dims[0]) + " is not a multiple of the block size " +
                         std::to_string(b.elements) + " of " + type_name(t.type));
    const uint64_t blocks = elements / b.elements;
    if (blocks > std::numeric_limits<uint64_t>::max() / b.bytes)
      in.fail(field, "dims " + dims_string(t.dims) + " give a byte size that overflows");
    t.nbytes = blocks * b.bytes;
    t.offset = in.u64(field + " offset");
    tensor_index.emplace(t.name, tensors.size());
    tensors.push_back(std::move(t));
  }
}

void File::Impl::place_tensors(uint64_t data_start) {
  if (tensors.empty()) return;
  if (data_start > size)
    throw error_at(path, "data section: starts at " + std::to_string(data_start) +
                             ", past the end of the file (" + std::to_string(size) + " bytes; truncated?)");
  const uint64_t data_bytes = size - data_start;
  const auto* bytes = static_cast<const uint8_t*>(map);
  for (TensorInfo& t : tensors) {
    if (t.offset > data_bytes || t.nbytes > data_bytes - t.offset)
      throw error_at(path, "tensor '" + t.name + "': offset " + std::to_string(t.offset) + " + size " +
                               std::to_string(t.nbytes) + " runs past the end of the data section (" +
                               std::to_string(data_bytes) + " bytes; truncated?)");
    t.data = bytes + data_start + t.offset;
  }
}

File::File(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
File::~File() = default;
File::File(File&&) noexcept = default;
File& File::operator=(File&&) noexcept = default;

File File::open(const std::string& path) {
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw error_at(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw error_at(path, std::string("cannot stat: ") + std::strerror(err));
  }
  impl->size = static_cast<uint64_t>(st.st_size);
  if (impl->size < kHeaderBytes) {
    ::close(fd);
    throw error_at(path, "header: the file is " + std::to_string(impl->size) +
                             " bytes, too short for the 24-byte GGUF header (truncated?)");
  }
  void* map = ::mmap(nullptr, impl->size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int err = errno;
  ::close(fd);
  if (map == MAP_FAILED) throw error_at(path, std::string("cannot map: ") + std::strerror(err));
  impl->map = map;
  impl->parse();
  return File(std::move(impl));
}

const std::string& File::path() const { return impl_->path; }
uint32_t File::version() const { return impl_->version; }
uint64_t File::file_size() const { return impl_->size; }

bool File::has(const std::string& key) const { return impl_->metadata.count(key) > 0; }

std::string File::get_string(const std::string& key) const {
  const Value& v = impl_->require(key);
  if (v.type != STRING) impl_->wrong_type(key, v, "a string");
  return v.strings[0];
}

int64_t File::get_int(const std::string& key) const {
  const Value& v = impl_->require(key);
  if (v.type == ARRAY || !is_integer_type(v.type)) impl_->wrong_type(key, v, "an integer");
  return impl_->as_int64(key, v, 0);
}

double File::get_float(const std::string& key) const {
  const Value& v = impl_->require(key);
  if (!is_float_type(v.type)) impl_->wrong_type(key, v, "a float");
  return v.floats[0];
}

bool File::get_bool(const std::string& key) const {
  const Value& v = impl_->require(key);
  if (v.type != BOOL) impl_->wrong_type(key, v, "a bool");
  return v.integers[0] != 0;
}

std::vector<std::string> File::get_string_array(const std::string& key) const {
  const Value& v = impl_->require(key);
  if (v.type != ARRAY || v.element_type != STRING) impl_->wrong_type(key, v, "an array of strings");
  return v.strings;
}

std::vector<int64_t> File::get_int_array(const std::string& key) const {
  const Value& v = impl_->require(key);
  if (v.type != ARRAY || !is_integer_type(v.element_type))
    impl_->wrong_type(key, v, "an array of integers");
  std::vector<int64_t> out;
  out.reserve(v.integers.size());
  for (size_t i = 0; i < v.integers.size(); ++i) out.push_back(impl_->as_int64(key, v, i));
  return out;
}

std::vector<double> File::get_float_array(const std::string& key) const {
  const Value& v = impl_->require(key);
  if (v.type != ARRAY || !is_float_type(v.element_type)) impl_->wrong_type(key, v, "an array of floats");
  return v.floats;
}

std::optional<std::string> File::find_string(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return get_string(key);
}

std::optional<int64_t> File::find_int(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return get_int(key);
}

std::optional<bool> File::find_bool(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return get_bool(key);
}

const std::vector<TensorInfo>& File::tensors() const { return impl_->tensors; }

const TensorInfo* File::find_tensor(const std::string& name) const {
  const auto it = impl_->tensor_index.find(name);
  return it == impl_->tensor_index.end() ? nullptr : &impl_->tensors[it->second];
}

}  // namespace kvs::gguf
