#include "longbench/long_texts.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>
#include <utility>

#include "core/error.h"
#include "core/file_hash.h"
#include "core/files.h"
#include "core/subprocess.h"
#include "longbench/config.h"
#include "longbench/dataset.h"
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
  int64_t words = 0;  // count_words(text), counted once
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

TextReading parse_text_reading(const std::string& text, const std::string& what) {
  const size_t comma = text.find(',');
  TextReading r;
  try {
    if (comma == std::string::npos) throw std::invalid_argument(text);
    size_t used = 0;
    r.prompt = std::stoll(text.substr(0, comma), &used);
    if (used != comma) throw std::invalid_argument(text);
    r.fed = std::stoll(text.substr(comma + 1), &used);
    if (used != text.size() - comma - 1) throw std::invalid_argument(text);
  } catch (const std::logic_error&) {
    throw error_at(what, "\"" + text + "\" is not PROMPT,FED (two token counts, e.g. 512,512)");
  }
  if (r.prompt < 1 || r.fed < 1)
    throw error_at(what, "\"" + text + "\": both token counts must be >= 1");
  return r;
}

LongTexts write_long_texts(const LongTextOptions& options) {
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
  if (options.dev < 0) throw error_at("--dev", "must be >= 0");
  const std::string stem = !options.name.empty()   ? options.name
                           : options.files.empty() ? "kjv"
                                                   : "texts";
  if (!is_name(stem))
    throw error_at("--name", "\"" + stem + "\" must be [A-Za-z0-9_.-]+ (it names the datasets)");
  for (Pending& p : texts) p.words = count_words(p.text);
  // A reading the user gave must find a text long enough; a default one declares its dataset only
  // where some text is.
  std::vector<std::pair<TextDataset, std::string>> declared;
  for (const auto& [given, fallback, metric] :
       {std::tuple{options.perplexity, TextReading{1, 2047}, std::string("perplexity")},
        std::tuple{options.fidelity, TextReading{512, 512}, std::string("fidelity")}}) {
    const TextReading reading = given.value_or(fallback);
    const TextDataset d{stem + "_" + metric, "", 0, 0, reading};
    const int64_t words = reading.prompt + reading.fed;
    if (std::any_of(texts.begin(), texts.end(), [&](const Pending& p) { return p.words >= words; }))
      declared.emplace_back(d, metric);
    else if (given)
      throw error_at("--" + metric, "no text has the " + std::to_string(words) + " words that " +
                                        d.name + " reads (" + std::to_string(reading.prompt) +
                                        " prompt and " + std::to_string(reading.fed) +
                                        " fed tokens)");
  }
  fs::create_directories(options.out_dir);
  LongTexts written;
  std::vector<LongText>& out = written.texts;
  meta["texts"] = nlohmann::json::array();
  for (const Pending& p : texts) {
    LongText t;
    t.name = p.name;
    t.path = (fs::path(options.out_dir) / (p.name + ".txt")).string();
    t.bytes = static_cast<int64_t>(p.text.size());
    t.words = p.words;
    write_file(t.path, p.text);
    meta["texts"].push_back({{"name", t.name},
                             {"file", p.name + ".txt"},
                             {"origin", p.origin},
                             {"bytes", t.bytes},
                             {"words", t.words},
                             {"sha256", sha256_hex(p.text)}});
    out.push_back(std::move(t));
  }
  // The text datasets: one record per text long enough, in the texts' order.
  const fs::path root(options.out_dir);
  meta["datasets"] = nlohmann::json::array();
  if (declared.empty()) {
    write_file((root / "texts.json").string(), meta.dump(2) + "\n");
    return written;
  }
  fs::create_directories(root / "data");
  fs::create_directories(root / "config");
  nlohmann::ordered_json prompts, maxlen, metrics, dev, chat, prompt_tokens;
  for (auto [d, metric] : declared) {
    const int64_t words = d.reading.prompt + d.reading.fed;
    d.path = dataset_path(options.out_dir, d.name);
    std::string lines;
    nlohmann::json names = nlohmann::json::array();
    for (size_t i = 0; i < texts.size(); ++i) {
      if (out[i].words < words) continue;
      const nlohmann::json record{{"input", ""},
                                  {"context", texts[i].text},
                                  {"answers", {out[i].name}},
                                  {"length", out[i].words},
                                  {"dataset", d.name},
                                  {"language", "en"},
                                  {"all_classes", nullptr},
                                  {"_id", out[i].name}};
      lines += record.dump() + "\n";
      names.push_back(out[i].name);
      ++d.texts;
    }
    write_file(d.path, lines);
    prompts[d.name] = "{context}";
    maxlen[d.name] = d.reading.fed;
    metrics[d.name] = metric;
    d.dev = std::min(options.dev, d.texts - 1);
    dev[d.name] = d.dev;
    chat[d.name] = "none";
    prompt_tokens[d.name] = d.reading.prompt;
    meta["datasets"].push_back({{"name", d.name},
                                {"metric", metric},
                                {"prompt_tokens", d.reading.prompt},
                                {"fed_tokens", d.reading.fed},
                                {"dev_texts", d.dev},
                                {"texts", names}});
    written.datasets.push_back(d);
  }
  write_file(prompt_config_path(options.out_dir), prompts.dump(2) + "\n");
  write_file(maxlen_config_path(options.out_dir), maxlen.dump(2) + "\n");
  write_file(metric_config_path(options.out_dir), metrics.dump(2) + "\n");
  write_file(dev_config_path(options.out_dir), dev.dump(2) + "\n");
  write_file(chat_template_config_path(options.out_dir), chat.dump(2) + "\n");
  write_file(prompt_tokens_config_path(options.out_dir), prompt_tokens.dump(2) + "\n");
  write_file((root / "texts.json").string(), meta.dump(2) + "\n");
  return written;
}

}  // namespace kvs::longbench
