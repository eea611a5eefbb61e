#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/pretokenizer.h"

#include <pcre2.h>

#include "core/error.h"
#include "tokenizer/utf8.h"

namespace kvs::tokenizer {

namespace {

// The Unicode White_Space property (PropList.txt), as class members.
constexpr char kWhiteSpaceMembers[] =
    "\\x{9}-\\x{D}\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}"
    "\\x{205F}\\x{3000}";

// JIT backtracking stack: reserved up front, committed only as deep patterns touch it.
constexpr size_t kJitStackStart = 32 * 1024;
constexpr size_t kJitStackMax = 8 * 1024 * 1024;

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  if (pcre2_get_error_message(code, buffer, sizeof(buffer)) < 0)
    return "error " + std::to_string(code);
  return reinterpret_cast<const char*>(buffer);
}

}  // namespace

const std::string& gpt2_pattern() {
  static const std::string pattern =
      R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
  return pattern;
}

const std::string& qwen2_pattern() {
  static const std::string pattern =
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  return pattern;
}

std::string rewrite_whitespace_classes(const std::string& pattern, const std::string& source) {
  std::string out;
  out.reserve(pattern.size() + 64);
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c != '\\') {
      if (c == '[' && !in_class) {
        in_class = true;
        out += c;
        // A ']' right after '[' or '[^' is a literal member, not the end of the class.
        if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
        if (i + 1 < pattern.size() && pattern[i + 1] == ']') out += pattern[++i];
        continue;
      }
      if (c == ']' && in_class) in_class = false;
      out += c;
      continue;
    }
    if (i + 1 >= pattern.size())
      throw error_at(source, "pre-tokenizer pattern ends with a lone '\\'");
    const char e = pattern[++i];
    if (e == 'Q')
      throw error_at(source,
                     "pre-tokenizer pattern uses \\Q...\\E quoting, which is not supported");
    if (e == 's') {
      out +=
          in_class ? std::string(kWhiteSpaceMembers) : "[" + std::string(kWhiteSpaceMembers) + "]";
    } else if (e == 'S') {
      if (in_class)
        throw error_at(
            source,
            "pre-tokenizer pattern uses \\S inside a character class, which is not supported");
      out += "[^" + std::string(kWhiteSpaceMembers) + "]";
    } else {
      out += '\\';
      out += e;
    }
  }
  return out;
}

struct PreTokenizer::Compiled {
  pcre2_code* code = nullptr;
  ~Compiled() { pcre2_code_free(code); }
};

// What one split() call matches with, shared by its stages. One ovector pair is all a split needs
// (a smaller ovector than the pattern's groups still reports the whole match).
struct PreTokenizer::MatchState {
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> match{
      pcre2_match_data_create(1, nullptr), &pcre2_match_data_free};
  std::unique_ptr<pcre2_match_context, decltype(&pcre2_match_context_free)> context{
      pcre2_match_context_create(nullptr), &pcre2_match_context_free};
  std::unique_ptr<pcre2_jit_stack, decltype(&pcre2_jit_stack_free)> stack{
      pcre2_jit_stack_create(kJitStackStart, kJitStackMax, nullptr), &pcre2_jit_stack_free};
};

PreTokenizer::PreTokenizer(const std::string& pattern, const std::string& source)
    : PreTokenizer(std::vector<std::string>{pattern}, source) {}

PreTokenizer::PreTokenizer(const std::vector<std::string>& patterns, const std::string& source)
    : patterns_(patterns), source_(source) {
  if (patterns.empty()) throw error_at(source, "the pre-tokenizer has no pattern");
  for (const std::string& pattern : patterns) {
    const std::string rewritten = rewrite_whitespace_classes(pattern, source);
    int error = 0;
    PCRE2_SIZE offset = 0;
    auto compiled = std::make_unique<Compiled>();
    compiled->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(rewritten.data()), rewritten.size(),
                                   PCRE2_UTF | PCRE2_UCP, &error, &offset, nullptr);
    if (!compiled->code)
      throw error_at(source, "cannot compile the pre-tokenizer pattern: " + pcre2_message(error));
    // Without JIT (an unsupported platform) pcre2_match interprets the pattern: slower, same
    // result.
    pcre2_jit_compile(compiled->code, PCRE2_JIT_COMPLETE);
    compiled_.push_back(std::move(compiled));
  }
}

PreTokenizer::~PreTokenizer() = default;

void PreTokenizer::split(std::string_view text, std::vector<std::string_view>& pieces) const {
  if (text.empty()) return;
  MatchState state;
  if (!state.match || !state.context || !state.stack)
    throw Error("pre-tokenizer: out of memory for PCRE2 match state");
  pcre2_jit_stack_assign(state.context.get(), nullptr, state.stack.get());
  split_with(0, text, state, pieces);
}

void PreTokenizer::split_with(size_t stage, std::string_view text, MatchState& state,
                              std::vector<std::string_view>& pieces) const {
  const bool last = stage + 1 == compiled_.size();
  auto emit = [&](std::string_view piece) {
    if (last)
      pieces.push_back(piece);
    else
      split_with(stage + 1, piece, state, pieces);
  };
  const pcre2_code* code = compiled_[stage]->code;
  const auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t pos = 0;
  size_t gap_start = 0;
  while (pos < text.size()) {
    // The text was validated once by the caller: skip PCRE2's per-call UTF check (it would rescan
    // the whole text at every match).
    const int rc = pcre2_match(code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK,
                               state.match.get(), state.context.get());
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0)
      throw error_at(source_, "pre-tokenizer pattern failed at byte " + std::to_string(pos) + ": " +
                                  pcre2_message(rc));
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(state.match.get());
    const size_t begin = ovector[0];
    const size_t end = ovector[1];
    if (end == begin) {  // empty match: move past one character and search again
      const size_t n = utf8_sequence_length(text, begin);
      pos = begin + (n == 0 ? 1 : n);
      continue;
    }
    if (begin > gap_start) emit(text.substr(gap_start, begin - gap_start));
    emit(text.substr(begin, end - begin));
    pos = gap_start = end;
  }
  if (gap_start < text.size()) emit(text.substr(gap_start));
}

}  // namespace kvs::tokenizer
