#include "bench/tokenizer_benchmark.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "core/error.h"
#include "core/files.h"
#include "core/rng.h"
#include "core/subprocess.h"
#include "core/timer.h"
#include "tokenizer/tiktoken_reader.h"

namespace kvs::bench {

// The tokenizer benchmark speaks the tokenizer module's vocabulary.
using namespace tokenizer;

namespace fs = std::filesystem;

namespace {

// The tiktoken side: builds an Encoding from the same tokenizer file (tiktoken text, or a
// tokenizer.json's byte-level vocab), times encode_ordinary, writes its ids for comparison.
constexpr char kTiktokenScript[] = R"PY(
import json, sys, time, array
try:
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe
except ImportError as e:
    print(json.dumps({"error": "python tiktoken is not installed (%s)" % e}))
    sys.exit(0)
tokenizer_path, pattern_path, text_path, ids_path, repeats = sys.argv[1:6]
with open(tokenizer_path, "rb") as f:
    is_json = f.read(256).lstrip().startswith(b"{")
if is_json:
    data = json.load(open(tokenizer_path, encoding="utf-8"))
    printable = list(range(0x21, 0x7F)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    to_byte, extra = {}, 0
    for b in range(256):
        if b in printable:
            to_byte[chr(b)] = b
        else:
            to_byte[chr(256 + extra)] = b
            extra += 1
    ranks = {bytes(to_byte[c] for c in tok): i for tok, i in data["model"]["vocab"].items()}
    pre = data["pre_tokenizer"]
    pattern = pre["pretokenizers"][0]["pattern"]["Regex"] if pre["type"] == "Sequence" else None
else:
    ranks = load_tiktoken_bpe(tokenizer_path)
    pattern = None
if pattern is None:
    pattern = open(pattern_path, encoding="utf-8").read()
enc = tiktoken.Encoding("kvsearch-bench", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
text = open(text_path, encoding="utf-8").read()
enc.encode_ordinary(text[:10000])
best = None
for _ in range(int(repeats)):
    start = time.perf_counter()
    ids = enc.encode_ordinary(text)
    elapsed = time.perf_counter() - start
    best = elapsed if best is None else min(best, elapsed)
array.array("i", ids).tofile(open(ids_path, "wb"))
print(json.dumps({"tokens": len(ids), "seconds": best, "version": tiktoken.__version__}))
)PY";

const char* const kCommonWords[] = {
    "the",      "of",      "and",       "to",        "in",         "a",      "is",      "that",
    "for",      "it",      "as",        "was",       "with",       "be",     "by",      "on",
    "not",      "he",      "I",         "this",      "are",        "or",     "his",     "from",
    "at",       "which",   "but",       "have",      "an",         "they",   "you",     "were",
    "her",      "she",     "there",     "one",       "all",        "we",     "their",   "has",
    "been",     "would",   "when",      "who",       "will",       "more",   "if",      "no",
    "out",      "so",      "said",      "what",      "up",         "its",    "about",   "into",
    "than",     "them",    "can",       "only",      "other",      "new",    "some",    "could",
    "time",     "these",   "two",       "may",       "then",       "do",     "first",   "any",
    "my",       "now",     "such",      "like",      "our",        "over",   "man",     "me",
    "even",     "most",    "made",      "after",     "also",       "did",    "many",    "before",
    "must",     "through", "back",      "years",     "where",      "much",   "your",    "way",
    "well",     "down",    "should",    "because",   "each",       "just",   "those",   "people",
    "how",      "too",     "little",    "state",     "good",       "very",   "make",    "world",
    "still",    "own",     "see",       "men",       "work",       "long",   "get",     "here",
    "between",  "both",    "life",      "being",     "under",      "never",  "day",     "same",
    "another",  "know",    "while",     "last",      "might",      "us",     "great",   "old",
    "question", "answer",  "passage",   "paragraph", "government", "report", "meeting", "summary",
    "model",    "memory",  "attention", "cache",     "budget",     "layer",  "token",   "context",
};
const char* const kContractions[] = {"don't", "it's", "we'll", "they're", "I'm", "you've", "he'd"};
const char* const kForeignWords[] = {"café", "naïve", "Zürich", "東京",   "Москва", "αλφα",
                                     "🙂", "—",     "São",    "日本語", "résumé", "Ωmega"};
const char* const kSyllables[] = {"ka", "lo", "mer", "tri", "ven", "sol", "qua", "dex",
                                  "in", "ar", "ops", "zen", "ul",  "thi", "bra", "ny"};

template <size_t N>
const char* pick(const char* const (&items)[N], std::mt19937_64& gen) {
  return items[bounded_draw(gen, N)];
}

void write_file(const fs::path& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary);
  out << data;
  if (!out) throw error_at(path.string(), "cannot write benchmark scratch file");
}

// A scratch directory for a few files, removed with them when the benchmark ends. POSIX calls,
// not std::filesystem::remove_all: in a binary linked with PyPI's libtorch.so that symbol binds to
// the copy libtorch exports, which crashes.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "kvsearch-bench-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw Error("bench tokenizer: cannot create a scratch directory");
    path_ = pattern;
  }
  ~ScratchDir() {
    for (const auto& file : files_) ::unlink(file.c_str());
    ::rmdir(path_.c_str());
  }
  fs::path file(const std::string& name) {
    files_.push_back((path_ / name).string());
    return files_.back();
  }

 private:
  fs::path path_;
  std::vector<std::string> files_;
};

// Runs the tiktoken side; fills result.tiktoken / tiktoken_note / same_ids.
void run_tiktoken(const std::string& tokenizer_file, const std::string& text,
                  const std::vector<int32_t>& our_ids, int repeats, const std::string& python,
                  TokenizerBenchmark& result) {
  ScratchDir scratch;
  const fs::path script = scratch.file("tiktoken_bench.py");
  const fs::path pattern = scratch.file("pattern.txt");
  const fs::path text_file = scratch.file("text.txt");
  const fs::path ids_file = scratch.file("ids.bin");
  write_file(script, kTiktokenScript);
  write_file(pattern, llama3_pattern());
  write_file(text_file, text);
  Captured run;
  try {
    run = capture({python, script.string(), fs::absolute(tokenizer_file).string(), pattern.string(),
                   text_file.string(), ids_file.string(), std::to_string(repeats)});
  } catch (const Error&) {
    result.tiktoken_note = python + " was not found";
    return;
  }
  const std::string& output = run.output;
  const size_t last_line = output.find_last_of('\n', output.size() >= 2 ? output.size() - 2 : 0);
  const std::string line = output.substr(last_line == std::string::npos ? 0 : last_line + 1);
  nlohmann::json reply;
  try {
    reply = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception&) {
    result.tiktoken_note = "the tiktoken run failed: " + line.substr(0, 300);
    return;
  }
  if (reply.contains("error")) {
    result.tiktoken_note = reply.at("error").get<std::string>();
    return;
  }
  EncodeTiming timing;
  timing.tokens = reply.at("tokens").get<int64_t>();
  timing.seconds = reply.at("seconds").get<double>();
  result.tiktoken = timing;
  const std::string ids = read_file(ids_file.string(), "the reference ids");
  result.same_ids =
      ids.size() == our_ids.size() * sizeof(int32_t) &&
      std::equal(our_ids.begin(), our_ids.end(), reinterpret_cast<const int32_t*>(ids.data()));
}

}  // namespace

std::string benchmark_text(int64_t words, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::string text;
  text.reserve(static_cast<size_t>(words) * 6);
  bool sentence_start = true;
  for (int64_t w = 0; w < words; ++w) {
    std::string word;
    const uint64_t kind = bounded_draw(gen, 100);
    if (kind < 70) {
      word = pick(kCommonWords, gen);
    } else if (kind < 82) {
      const uint64_t syllables = 2 + bounded_draw(gen, 3);
      for (uint64_t s = 0; s < syllables; ++s) word += pick(kSyllables, gen);
    } else if (kind < 88) {
      word = std::to_string(bounded_draw(gen, 3000));
      if (bounded_draw(gen, 4) == 0) word += "." + std::to_string(bounded_draw(gen, 100));
    } else if (kind < 94) {
      word = pick(kContractions, gen);
    } else {
      word = pick(kForeignWords, gen);
    }
    if (sentence_start && word[0] >= 'a' && word[0] <= 'z')
      word[0] = static_cast<char>(word[0] - 32);
    sentence_start = false;
    text += word;
    const uint64_t after = bounded_draw(gen, 100);
    if (after < 6) {
      text += ".";
      sentence_start = true;
      if (bounded_draw(gen, 8) == 0) {
        text += "\n\n";
        continue;
      }
    } else if (after < 12) {
      text += ",";
    } else if (after < 13) {
      text += bounded_draw(gen, 2) ? "?" : "!";
      sentence_start = true;
    } else if (after < 14) {
      text += ";";
    }
    text += " ";
  }
  return text;
}

TokenizerBenchmark run_tokenizer_benchmark(const Tokenizer& tokenizer,
                                           const std::string& tokenizer_file, int64_t words,
                                           int repeats, const std::string& python) {
  if (words <= 0) throw Error("bench tokenizer: --words must be positive");
  if (repeats <= 0) throw Error("bench tokenizer: --repeats must be positive");
  TokenizerBenchmark result;
  const std::string text = benchmark_text(words, 42);
  result.words = words;
  result.bytes = static_cast<int64_t>(text.size());

  tokenizer.encode(text.substr(0, 10000));  // warm-up, as on the tiktoken side
  std::vector<int32_t> ids;
  for (int r = 0; r < repeats; ++r) {
    Timer timer;
    ids = tokenizer.encode(text);
    const double seconds = timer.seconds();
    if (r == 0 || seconds < result.ours.seconds) result.ours.seconds = seconds;
  }
  result.ours.tokens = static_cast<int64_t>(ids.size());

  if (tokenizer.kind() != "bpe") {
    result.tiktoken_note =
        "tiktoken compares only with byte-level BPE tokenizers, not " + tokenizer.kind();
    return result;
  }
  run_tiktoken(tokenizer_file, text, ids, repeats, python, result);
  return result;
}

}  // namespace kvs::bench
