// SHA-256 (FIPS 180-4), to record which files (tokenizers, haystacks, templates, a user's data
// sets) generated a data directory: the hex digest equals `sha256sum`'s.
#pragma once

#include <string>

namespace kvs {

std::string sha256_hex(const std::string& bytes);
std::string sha256_file_hex(const std::string& path);  // kvs::Error naming the file if unreadable

}  // namespace kvs
