// The English word list of niah's word keys and cwe's words: /usr/share/dict/words from the Debian
// package wamerican (tools/bootstrap.sh installs it), keeping the plain lower-case words of 3 to 12
// ASCII letters (no proper nouns, possessives or accents), deduplicated and sorted. RULER uses
// wonderwords' nouns, adjectives and verbs (its keys are adjective-noun pairs; ours are pairs of
// words from this list).
#pragma once

#include <string>
#include <vector>

namespace kvs::ruler {

inline constexpr const char* kDebianWordList = "/usr/share/dict/words";

struct WordList {
  std::string source;  // the path
  std::string sha256;  // of the file
  std::vector<std::string> words;
};

// kvs::Error naming the file (and the package to install) when it is missing or has no words.
WordList load_word_list(const std::string& path = kDebianWordList);

}  // namespace kvs::ruler
