#include "ruler/word_list.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/file_hash.h"

namespace kvs::ruler {

namespace {

bool is_plain_word(const std::string& w) {
  if (w.size() < 3 || w.size() > 12) return false;
  return std::all_of(w.begin(), w.end(), [](char c) { return c >= 'a' && c <= 'z'; });
}

}  // namespace

WordList load_word_list(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error_at(path, "the word list is missing (install the Debian package wamerican)");
  WordList list;
  list.source = path;
  list.sha256 = sha256_file_hex(path);
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (is_plain_word(line)) list.words.push_back(line);
  }
  std::sort(list.words.begin(), list.words.end());
  list.words.erase(std::unique(list.words.begin(), list.words.end()), list.words.end());
  if (list.words.size() < 1000) throw error_at(path, "the word list has fewer than 1000 plain words");
  return list;
}

}  // namespace kvs::ruler
