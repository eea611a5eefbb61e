#include "core/npy.h"

#include <cstdio>
#include <cstring>
#include <fstream>

#include "core/error.h"

namespace kvs {

void write_npy_f32(const std::string& path, const std::vector<int64_t>& shape,
                   const std::vector<float>& data) {
  int64_t numel = 1;
  std::string dims;
  for (size_t i = 0; i < shape.size(); ++i) {
    numel *= shape[i];
    dims += std::to_string(shape[i]) + (shape.size() == 1 ? "," : (i + 1 < shape.size() ? ", " : ""));
  }
  if (static_cast<size_t>(numel) != data.size())
    throw error_at(path, "npy shape does not match the data size");
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  // Magic (6) + version (2) + length (2) + header + '\n' must be a multiple of 64.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw error_at(tmp, "cannot open for writing");
    const char magic[8] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0};
    out.write(magic, 8);
    const uint16_t len = static_cast<uint16_t>(header.size());
    const char len_bytes[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
    out.write(len_bytes, 2);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    out.write(reinterpret_cast<const char*>(data.data()),
              static_cast<std::streamsize>(data.size() * sizeof(float)));
    if (!out) throw error_at(tmp, "write failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw error_at(path, "cannot rename from .tmp");
}

std::vector<float> read_npy_f32(const std::string& path, std::vector<int64_t>* shape) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error_at(path, "cannot open");
  char magic[10];
  in.read(magic, 10);
  if (!in || std::memcmp(magic, "\x93NUMPY", 6) != 0 || magic[6] != 1)
    throw error_at(path, "not a version 1 .npy file");
  const size_t len = static_cast<uint8_t>(magic[8]) | (static_cast<uint8_t>(magic[9]) << 8);
  std::string header(len, '\0');
  in.read(header.data(), static_cast<std::streamsize>(len));
  if (header.find("'<f4'") == std::string::npos || header.find("False") == std::string::npos)
    throw error_at(path, "only little-endian float32 C-order arrays are supported");
  const size_t open = header.find('('), close = header.find(')');
  if (open == std::string::npos || close == std::string::npos) throw error_at(path, "bad header");
  shape->clear();
  int64_t numel = 1;
  const std::string dims = header.substr(open + 1, close - open - 1);
  size_t pos = 0;
  while (pos < dims.size()) {
    while (pos < dims.size() && (dims[pos] == ' ' || dims[pos] == ',')) ++pos;
    if (pos >= dims.size()) break;
    size_t used = 0;
    const int64_t d = std::stoll(dims.substr(pos), &used);
    shape->push_back(d);
    numel *= d;
    pos += used;
  }
  std::vector<float> data(static_cast<size_t>(numel));
  in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(numel * 4));
  if (!in) throw error_at(path, "file shorter than its shape says");
  return data;
}

}  // namespace kvs
