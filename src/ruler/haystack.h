// The text haystacks: the essay word stream and the line-based haystacks' insertion.
// The default essay is real English prose every Debian machine has: the licence texts of
// /usr/share/common-licenses (package base-files, Essential), each distinct file once (symlinks
// resolved), in name order. `--haystack FILE` takes any UTF-8 text instead. RULER uses Paul
// Graham's essays, which no project may ship: scores on this haystack are RULER-style, not RULER-PG.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kvs::ruler {

inline constexpr const char* kDebianLicenseDir = "/usr/share/common-licenses";

struct EssaySource {
  std::string description;  // what the data directory records: the files, or the user's file
  std::string sha256;       // of the concatenated text
  std::vector<std::string> words;  // whitespace runs collapsed, split on spaces (RULER's list)
};

// The files of `dir` (the default: kDebianLicenseDir), each distinct target once, by name.
EssaySource load_license_essay(const std::string& dir = kDebianLicenseDir);

// A user's file; kvs::Error naming --haystack when it is missing, empty or not UTF-8.
EssaySource load_essay_file(const std::string& path);

// The first `count` words of the stream (repeated from the start when longer than it), cut into
// sentences: a sentence ends with a word whose last character other than closing quotes and
// brackets is '.', '!' or '?'. Each sentence is its words joined by single spaces.
std::vector<std::string> essay_sentences(const std::vector<std::string>& words, int64_t count);

// The 40 needle depths (percent) of RULER: round(linspace(0, 100, 40)).
const std::vector<int>& needle_depths();

// `lines` with items[k] inserted before the line at positions[k] (positions ascending, each in
// [0, lines.size()), distinct), keeping the items' order.
std::vector<std::string> insert_lines(const std::vector<std::string>& lines,
                                      const std::vector<std::string>& items,
                                      const std::vector<size_t>& positions);

}  // namespace kvs::ruler
