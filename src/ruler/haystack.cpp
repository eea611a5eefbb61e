#include "ruler/haystack.h"

#include <cmath>
#include <filesystem>
#include <map>

#include "core/error.h"
#include "core/file_hash.h"
#include "core/files.h"
#include "longbench/text.h"

namespace kvs::ruler {

namespace fs = std::filesystem;

namespace {

// Whitespace runs (Python's str.split semantics, Unicode) separate the words.
std::vector<std::string> split_words(const std::u32string& text) {
  std::vector<std::string> words;
  for (const auto& w : longbench::py_split_whitespace(text)) words.push_back(longbench::utf32_to_utf8(w));
  return words;
}

bool ends_sentence(const std::string& word) {
  size_t end = word.size();
  while (end > 0 && std::string("\"')]}").find(word[end - 1]) != std::string::npos) --end;
  return end > 0 && (word[end - 1] == '.' || word[end - 1] == '!' || word[end - 1] == '?');
}

}  // namespace

EssaySource load_license_essay(const std::string& dir) {
  if (!fs::is_directory(dir))
    throw error_at(dir, "the default essay haystack (package base-files) is missing; give --haystack FILE");
  std::map<std::string, std::string> files;  // the target's name -> its path: symlinks count once
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!fs::is_regular_file(entry.path())) continue;
    const fs::path target = fs::canonical(entry.path());
    files[target.filename().string()] = target.string();
  }
  std::string text;
  std::string names;
  for (const auto& [name, path] : files) {
    text += read_file(path, "the essay haystack file") + "\n";
    names += (names.empty() ? "" : " ") + name;
  }
  EssaySource source;
  source.description = std::string("Debian base-files ") + dir + ": " + names;
  source.sha256 = sha256_hex(text);
  source.words = split_words(longbench::utf8_to_utf32(text));
  if (source.words.empty()) throw error_at(dir, "the essay haystack has no words");
  return source;
}

EssaySource load_essay_file(const std::string& path) {
  const std::string text = read_file(path, "the --haystack file");
  std::u32string decoded;
  try {
    decoded = longbench::utf8_to_utf32(text);
  } catch (const Error&) {
    throw error_at(path, "--haystack: not valid UTF-8 text");
  }
  EssaySource source;
  source.description = "file " + path;
  source.sha256 = sha256_hex(text);
  source.words = split_words(decoded);
  if (source.words.empty()) throw error_at(path, "--haystack: the file has no words");
  return source;
}

std::vector<std::string> essay_sentences(const std::vector<std::string>& words, int64_t count) {
  std::vector<std::string> sentences;
  std::string current;
  for (int64_t i = 0; i < count; ++i) {
    const std::string& word = words[static_cast<size_t>(i) % words.size()];
    current += (current.empty() ? "" : " ") + word;
    if (ends_sentence(word)) sentences.push_back(std::move(current)), current.clear();
  }
  if (!current.empty()) sentences.push_back(std::move(current));
  return sentences;
}

const std::vector<int>& needle_depths() {
  static const std::vector<int> depths = [] {
    std::vector<int> d;
    // numpy's round: half to even (no value of this grid is a tie).
    for (int i = 0; i < 40; ++i) d.push_back(static_cast<int>(std::nearbyint(100.0 * i / 39)));
    return d;
  }();
  return depths;
}

std::vector<std::string> insert_lines(const std::vector<std::string>& lines,
                                      const std::vector<std::string>& items,
                                      const std::vector<size_t>& positions) {
  std::vector<std::string> out;
  out.reserve(lines.size() + items.size());
  size_t next = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    while (next < items.size() && positions[next] == i) out.push_back(items[next++]);
    out.push_back(lines[i]);
  }
  while (next < items.size()) out.push_back(items[next++]);
  return out;
}

}  // namespace kvs::ruler
