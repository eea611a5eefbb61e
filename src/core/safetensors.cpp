#include "core/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/float_bits.h"

namespace kvs {

namespace {

constexpr uint64_t kMaxHeaderBytes = 100ull << 20;  // the reference implementation's limit

const std::map<std::string, DType>& dtype_table() {
  static const std::map<std::string, DType> table = {
      {"F64", DType::F64}, {"F32", DType::F32}, {"F16", DType::F16}, {"BF16", DType::BF16},
      {"I64", DType::I64}, {"I32", DType::I32}, {"I16", DType::I16}, {"I8", DType::I8},
      {"U8", DType::U8},   {"BOOL", DType::BOOL}};
  return table;
}

uint64_t read_u64_le(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

uint64_t json_u64(const nlohmann::json& v, const std::string& where) {
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
    throw error_at(where, "expected a non-negative integer, got " + v.dump());
  return v.get<uint64_t>();
}

TensorEntry parse_entry(const std::string& file, const std::string& name, const nlohmann::json& v) {
  const std::string where = file + ": tensor '" + name + "'";
  if (!v.is_object()) throw error_at(where, "header entry is not an object");
  TensorEntry e;
  e.name = name;
  if (!v.contains("dtype") || !v["dtype"].is_string())
    throw error_at(where, "missing or non-string 'dtype'");
  const auto dt = dtype_table().find(v["dtype"].get<std::string>());
  if (dt == dtype_table().end())
    throw error_at(where, "unknown dtype '" + v["dtype"].get<std::string>() + "'");
  e.dtype = dt->second;
  if (!v.contains("shape") || !v["shape"].is_array())
    throw error_at(where, "missing or non-array 'shape'");
  for (const auto& d : v["shape"]) {
    const uint64_t dim = json_u64(d, where + " shape");
    if (dim > (1ull << 40)) throw error_at(where, "implausible dimension " + std::to_string(dim));
    e.shape.push_back(static_cast<int64_t>(dim));
  }
  if (!v.contains("data_offsets") || !v["data_offsets"].is_array() ||
      v["data_offsets"].size() != 2)
    throw error_at(where, "'data_offsets' must be an array [begin, end]");
  e.begin = json_u64(v["data_offsets"][0], where + " data_offsets");
  e.end = json_u64(v["data_offsets"][1], where + " data_offsets");
  if (e.begin > e.end)
    throw error_at(where, "data_offsets begin " + std::to_string(e.begin) + " > end " +
                              std::to_string(e.end));
  const uint64_t expected = static_cast<uint64_t>(e.numel()) * dtype_size(e.dtype);
  if (e.end - e.begin != expected)
    throw error_at(where, "shape and dtype need " + std::to_string(expected) +
                              " bytes but data_offsets span " + std::to_string(e.end - e.begin));
  return e;
}

}  // namespace

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::F64:
    case DType::I64:
      return 8;
    case DType::F32:
    case DType::I32:
      return 4;
    case DType::F16:
    case DType::BF16:
    case DType::I16:
      return 2;
    case DType::I8:
    case DType::U8:
    case DType::BOOL:
      return 1;
  }
  return 0;
}

const char* dtype_name(DType dtype) {
  for (const auto& [name, dt] : dtype_table())
    if (dt == dtype) return name.c_str();
  return "?";
}

int64_t TensorEntry::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

SafetensorsFile::SafetensorsFile(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw error_at(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throw error_at(path, std::string("cannot stat: ") + std::strerror(errno));
  }
  map_size_ = static_cast<size_t>(st.st_size);
  if (map_size_ < 8) {
    ::close(fd);
    throw error_at(path, "file is " + std::to_string(map_size_) +
                             " bytes, too short for the 8-byte header length (truncated?)");
  }
  map_ = ::mmap(nullptr, map_size_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map_ == MAP_FAILED) {
    map_ = nullptr;
    throw error_at(path, std::string("cannot map: ") + std::strerror(errno));
  }
  try {
    const auto* bytes = static_cast<const uint8_t*>(map_);
    const uint64_t header_len = read_u64_le(bytes);
    if (header_len > map_size_ - 8)
      throw error_at(path, "header length " + std::to_string(header_len) +
                               " runs past the end of the file (" + std::to_string(map_size_) +
                               " bytes; truncated?)");
    if (header_len > kMaxHeaderBytes)
      throw error_at(path, "header length " + std::to_string(header_len) + " exceeds 100 MiB");
    const auto header = nlohmann::json::parse(bytes + 8, bytes + 8 + header_len, nullptr, false);
    if (header.is_discarded()) throw error_at(path, "header is not valid JSON");
    if (!header.is_object()) throw error_at(path, "header is not a JSON object");
    data_ = bytes + 8 + header_len;
    const uint64_t data_size = map_size_ - 8 - header_len;
    for (const auto& [name, value] : header.items()) {
      if (name == "__metadata__") {
        if (!value.is_object()) throw error_at(path, "__metadata__ is not an object");
        for (const auto& [k, v] : value.items()) {
          if (!v.is_string()) throw error_at(path, "__metadata__ value '" + k + "' is not a string");
          metadata_[k] = v.get<std::string>();
        }
        continue;
      }
      tensors_.push_back(parse_entry(path, name, value));
    }
    // The tensors must tile the data section: no overlap, no hole, nothing past the end.
    std::vector<const TensorEntry*> order;
    for (const auto& t : tensors_) order.push_back(&t);
    std::sort(order.begin(), order.end(), [](const TensorEntry* a, const TensorEntry* b) {
      return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
    });
    uint64_t cursor = 0;
    for (const TensorEntry* t : order) {
      if (t->begin < cursor)
        throw error_at(path, "tensor '" + t->name + "' data_offsets [" + std::to_string(t->begin) +
                                 ", " + std::to_string(t->end) + ") overlap the previous tensor");
      if (t->end > data_size)
        throw error_at(path, "tensor '" + t->name + "' data_offsets end " +
                                 std::to_string(t->end) + " is past the data section (" +
                                 std::to_string(data_size) + " bytes; truncated?)");
      if (t->begin > cursor)
        throw error_at(path, "tensor '" + t->name + "' leaves a gap in the data at byte " +
                                 std::to_string(cursor));
      cursor = t->end;
    }
    if (cursor != data_size)
      throw error_at(path, "data section is " + std::to_string(data_size) +
                               " bytes but the tensors cover " + std::to_string(cursor));
  } catch (...) {
    ::munmap(map_, map_size_);
    map_ = nullptr;
    throw;
  }
}

SafetensorsFile::~SafetensorsFile() {
  if (map_) ::munmap(map_, map_size_);
}

const TensorEntry* SafetensorsFile::find(const std::string& name) const {
  for (const auto& t : tensors_)
    if (t.name == name) return &t;
  return nullptr;
}

const TensorEntry& SafetensorsFile::at(const std::string& name) const {
  const TensorEntry* t = find(name);
  if (!t) throw error_at(path_, "no tensor named '" + name + "'");
  return *t;
}

void SafetensorsWriter::add(const std::string& name, DType dtype,
                            const std::vector<int64_t>& shape, const void* bytes,
                            size_t byte_count) {
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  if (static_cast<size_t>(numel) * dtype_size(dtype) != byte_count)
    throw error_at(name, "byte count " + std::to_string(byte_count) + " does not match shape");
  for (const auto& it : items_)
    if (it.name == name) throw error_at(name, "tensor added twice");
  const uint64_t begin = blob_.size();
  blob_.insert(blob_.end(), static_cast<const uint8_t*>(bytes),
               static_cast<const uint8_t*>(bytes) + byte_count);
  items_.push_back({name, dtype, shape, begin, blob_.size()});
}

void SafetensorsWriter::set_metadata(const std::string& key, const std::string& value) {
  metadata_[key] = value;
}

void SafetensorsWriter::write(const std::string& path) const {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata_.empty()) header["__metadata__"] = metadata_;
  for (const auto& it : items_)
    header[it.name] = {{"dtype", dtype_name(it.dtype)},
                       {"shape", it.shape},
                       {"data_offsets", {it.begin, it.end}}};
  std::string text = header.dump();
  text.resize((text.size() + 7) / 8 * 8, ' ');
  uint8_t len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<uint8_t>(static_cast<uint64_t>(text.size()) >> (8 * i));
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw error_at(tmp, "cannot open for writing");
    out.write(reinterpret_cast<const char*>(len), 8);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.write(reinterpret_cast<const char*>(blob_.data()), static_cast<std::streamsize>(blob_.size()));
    if (!out) throw error_at(tmp, "write failed (disk full?)");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw error_at(path, std::string("cannot rename from .tmp: ") + std::strerror(errno));
}

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while ((mant & 0x400) == 0) {
        mant <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((mant & 0x3ff) << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  return float_from_bits(bits);
}

uint16_t float_to_half(float f) {
  const uint32_t x = bits_of(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) return sign | 0x7c00 | (abs > 0x7f800000u ? 0x200 : 0);  // inf / nan
  if (abs >= 0x477ff000u) return sign | 0x7c00;  // rounds to overflow
  if (abs < 0x38800000u) {                        // subnormal or zero in half
    if (abs < 0x33000000u) return sign;           // below half the smallest subnormal
    const uint32_t shift = 126 - (abs >> 23);  // 14..24: half subnormals are units of 2^-24
    const uint32_t mant = (abs & 0x7fffff) | 0x800000;
    uint32_t result = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (result & 1))) ++result;
    return sign | static_cast<uint16_t>(result);
  }
  uint32_t result = ((abs >> 13) - (112u << 10));
  const uint32_t rem = abs & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (result & 1))) ++result;
  return sign | static_cast<uint16_t>(result);
}

float bf16_to_float(uint16_t b) {
  return float_from_bits(static_cast<uint32_t>(b) << 16);
}

uint16_t float_to_bf16(float f) {
  const uint32_t x = bits_of(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40);  // nan
  const uint32_t rounding = 0x7fff + ((x >> 16) & 1);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

}  // namespace kvs
