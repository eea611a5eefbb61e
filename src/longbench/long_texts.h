// Long texts for bounded-cache perplexity (`kvsearch data text`): the user's own text files
// (PG19's books are what researchers use), or by default the King James Version of the Bible
// (1611, public domain) as Debian's bible-kjv-text package ships it, one text per book. Written as
// DIR/<name>.txt beside DIR/texts.json, which records where each text came from, its licence, its
// size and its SHA-256, so that a perplexity measured on it names exactly what it read. Torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kvs::longbench {

struct LongTextOptions {
  std::string out_dir;
  // The user's files, each one text named after its file name's stem ([A-Za-z0-9_.-]+); empty:
  // the default text.
  std::vector<std::string> files;
  // The program that prints the default text (Debian's bible-kjv: `bible`), looked up on PATH.
  std::string kjv_program = "bible";
};

struct LongText {
  std::string name;
  std::string path;  // DIR/<name>.txt
  int64_t bytes = 0;
  int64_t words = 0;  // runs of non-space bytes
};

// Checks every input first (a file that cannot be read, is empty or is not UTF-8; two files with
// one stem; the default's program missing or failing: one line naming it), then writes the texts
// and texts.json. Nothing is written when an input is refused.
std::vector<LongText> write_long_texts(const LongTextOptions& options);

// The `bible -l<wide>` listing ("Genesis 1" headings, "  1 In the beginning ..." verses) -> one
// text per book, "<Book>\n\nChapter N\n\n<verses of the chapter as one paragraph>...", in order;
// throws naming `what` when the listing has no heading or a verse before the first heading.
std::vector<std::pair<std::string, std::string>> kjv_books(const std::string& listing,
                                                           const std::string& what);

}  // namespace kvs::longbench
