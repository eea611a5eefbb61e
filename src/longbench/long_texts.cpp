#include "longbench/long_texts.h"

#include <cctype>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "core/error.h"
#include "core/file_hash.h"
#include "core/files.h"
#include "core/subprocess.h"
#include "tokenizer/utf8.h"

namespace kvs::longbench {

namespace fs = std::filesystem;

namespace {

// The whole Bible in one listing, one verse a line (a line width no verse reaches).
const char* const kKjvRange = "Gen1:1-Rev22:21";
const char* const kKjvWidth = "-l1000000";

int64_t count_words(const std::string& text) {
  int64_t words = 0;
  bool in_word = false;
  for (char c : text) {
    const bool space = std::isspace(static_cast<unsigned char>(c)) != 0;
    if (!space && !in_word) ++words;
    in_word = !space;
  }
  return words;
}

bool is_name(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-')
      return false;
  return true;
}

// "1 Samuel" -> "1-samuel".
std::string slug(const std::string& book) {
  std::string out;
  for (char c : book)
    out += c == ' ' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string package_version(const std::string& package) {
  try {
    const Captured c = capture({"dpkg-query", "-W", "-f=${Version}", package});
    if (c.status == 0 && !c.output.empty()) return c.output;
  } catch (const Error&) {
  }
  return "unknown";
}

struct Pending {
  std::string name, text, origin;
};

}  // namespace

std::vector<std::pair<std::string, std::string>> kjv_books(const std::string& listing,
                                                           const std::string& what) {
  std::vector<std::pair<std::string, std::string>> books;
  std::string chapter;  // the current chapter's verses, one paragraph
  auto close_chapter = [&] {
    if (!chapter.empty()) books.back().second += chapter + "\n";
    chapter.clear();
  };
  size_t pos = 0, line_no = 0;
  while (pos < listing.size()) {
    size_t end = listing.find('\n', pos);
    if (end == std::string::npos) end = listing.size();
    const std::string line = listing.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (line.empty()) continue;
    if (line[0] == ' ') {  // "  12 And God said ..."
      const size_t digits = line.find_first_not_of(' ');
      const size_t text = line.find(' ', digits);
      if (books.empty() || text == std::string::npos ||
          !std::isdigit(static_cast<unsigned char>(line[digits])))
        throw error_at(what + " line " + std::to_string(line_no),
                       "expected a verse (\"  N text\") after a \"Book N\" heading");
      chapter += (chapter.empty() ? "" : " ") + line.substr(text + 1);
      continue;
    }
    const size_t space = line.rfind(' ');  // "1 Samuel 3": the book, then the chapter
    if (space == std::string::npos || space + 1 == line.size() ||
        line.find_first_not_of("0123456789", space + 1) != std::string::npos)
      throw error_at(what + " line " + std::to_string(line_no),
                     "expected a \"Book N\" heading, got \"" + line.substr(0, 60) + "\"");
    const std::string book = line.substr(0, space), number = line.substr(space + 1);
    if (!books.empty()) close_chapter();
    if (books.empty() || books.back().first != book) books.push_back({book, book + "\n"});
    books.back().second += "\nChapter " + number + "\n\n";
  }
  if (books.empty()) throw error_at(what, "no \"Book N\" heading: not a bible listing");
  close_chapter();
  return books;
}

std::vector<LongText> write_long_texts(const LongTextOptions& options) {
  if (options.out_dir.empty()) throw error_at("--out", "no output directory given");
  std::vector<Pending> texts;
  nlohmann::json meta;
  if (options.files.empty()) {
    std::string what = "`" + options.kjv_program + " " + kKjvWidth + " " + kKjvRange + "`";
    Captured listing;
    try {
      listing = capture({options.kjv_program, kKjvWidth, kKjvRange});
    } catch (const Error&) {
      throw Error("the default text needs the program `" + options.kjv_program +
                  "` (Debian's bible-kjv and bible-kjv-text; tools/bootstrap.sh installs them): "
                  "it is not installed; or give your own text files");
    }
    if (listing.status != 0)
      throw error_at(what, "exit status " + std::to_string(listing.status) + ": " +
                               listing.output.substr(0, 200));
    for (auto& [book, text] : kjv_books(listing.output, what)) {
      const std::string name = "kjv-" + std::string(texts.size() < 9 ? "0" : "") +
                               std::to_string(texts.size() + 1) + "-" + slug(book);
      texts.push_back({name, std::move(text), "King James Version, " + book});
    }
    meta["source"] =
        "The King James Version of the Bible (1611), one text per book, as printed by " + what +
        " from Debian's bible-kjv-text " + package_version("bible-kjv-text");
    meta["licence"] =
        "public domain: the 1611 translation's copyright has expired (Debian's copyright file of "
        "bible-kjv says so; the program that prints it is GPL-2+)";
  } else {
    std::map<std::string, std::string> seen;
    for (const std::string& file : options.files) {
      const std::string name = fs::path(file).stem().string();
      if (!is_name(name))
        throw error_at(
            file, "its name's stem \"" + name + "\" must be [A-Za-z0-9_.-]+ (it names the text)");
      if (auto [it, fresh] = seen.emplace(name, file); !fresh)
        throw error_at(file, "names the same text \"" + name + "\" as " + it->second);
      texts.push_back({name, tokenizer::read_utf8_text_file(file), fs::absolute(file).string()});
    }
    meta["source"] = "the user's text files";
    meta["licence"] = "as the user's files carry it (not checked)";
  }
  fs::create_directories(options.out_dir);
  std::vector<LongText> out;
  meta["texts"] = nlohmann::json::array();
  for (const Pending& p : texts) {
    LongText t;
    t.name = p.name;
    t.path = (fs::path(options.out_dir) / (p.name + ".txt")).string();
    t.bytes = static_cast<int64_t>(p.text.size());
    t.words = count_words(p.text);
    write_file(t.path, p.text);
    meta["texts"].push_back({{"name", t.name},
                             {"file", p.name + ".txt"},
                             {"origin", p.origin},
                             {"bytes", t.bytes},
                             {"words", t.words},
                             {"sha256", sha256_hex(p.text)}});
    out.push_back(std::move(t));
  }
  write_file((fs::path(options.out_dir) / "texts.json").string(), meta.dump(2) + "\n");
  return out;
}

}  // namespace kvs::longbench
