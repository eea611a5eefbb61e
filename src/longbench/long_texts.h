// Long texts for bounded-cache perplexity (`kvsearch data text`): the user's own text files
// (PG19's books are what researchers use), or by default the King James Version of the Bible
// (1611, public domain) as Debian's bible-kjv-text package ships it, one text per book. Written as
// DIR/<name>.txt beside DIR/texts.json, which records where each text came from, its licence, its
// size and its SHA-256, so that a perplexity measured on it names exactly what it read. The texts
// are also declared as two text datasets of a LongBench-shaped directory (config.h), one record
// per text, for experiments and `kvsearch run`: <name>_perplexity (metric "perplexity": the first
// token the prompt, the next 2,047 fed) and <name>_fidelity (metric "fidelity": a 512-token
// prompt, 512 steps of the full cache's own continuation); search/text_evaluation.h scores them.
// Torch-free.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kvs::longbench {

// How a text dataset reads each text: its first `prompt` tokens, then `fed` more.
struct TextReading {
  int64_t prompt = 1;
  int64_t fed = 2047;
};

// "P,L" -> {P, L}, both positive; errors name `what`.
TextReading parse_text_reading(const std::string& text, const std::string& what);

struct LongTextOptions {
  std::string out_dir;
  // The user's files, each one text named after its file name's stem ([A-Za-z0-9_.-]+); empty:
  // the default text.
  std::vector<std::string> files;
  // The program that prints the default text (Debian's bible-kjv: `bible`), looked up on PATH.
  std::string kjv_program = "bible";
  // The text datasets' stem (<name>_perplexity, <name>_fidelity); empty: "kjv" for the default
  // text, "texts" for the user's files.
  std::string name;
  // How each dataset reads its texts. Given: a text must be long enough. Absent: 1,2047 and
  // 512,512, and a dataset no text is long enough for is left out.
  std::optional<TextReading> perplexity, fidelity;
  // Texts of each dataset held out as its dev split (for searches, and the dev evaluation every
  // experiment records): at most this many, and fewer than the dataset's texts.
  int64_t dev = 8;
};

// A text dataset as written: its name, and the texts long enough to hold what it reads (at least
// prompt + fed words, so at least as many tokens: a token never spans two words).
struct TextDataset {
  std::string name;
  std::string path;  // DIR/data/<name>.jsonl
  int64_t texts = 0;
  int64_t dev = 0;  // of them in the dev split
  TextReading reading;
};

struct LongText {
  std::string name;
  std::string path;  // DIR/<name>.txt
  int64_t bytes = 0;
  int64_t words = 0;  // runs of non-space bytes
};

// Checks every input first (a file that cannot be read, is empty or is not UTF-8; two files with
// one stem; the default's program missing or failing; a dataset stem that cannot name one; a
// reading given that no text is long enough for: one line naming it), then writes the texts,
// texts.json and the text datasets. Nothing is written when an input is refused.
struct LongTexts {
  std::vector<LongText> texts;
  std::vector<TextDataset> datasets;  // perplexity, fidelity (those declared)
};
LongTexts write_long_texts(const LongTextOptions& options);

// The `bible -l<wide>` listing ("Genesis 1" headings, "  1 In the beginning ..." verses) -> one
// text per book, "<Book>\n\nChapter N\n\n<verses of the chapter as one paragraph>...", in order;
// throws naming `what` when the listing has no heading or a verse before the first heading.
std::vector<std::pair<std::string, std::string>> kjv_books(const std::string& listing,
                                                           const std::string& what);

}  // namespace kvs::longbench
