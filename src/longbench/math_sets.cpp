#include "longbench/math_sets.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/build_info.h"
#include "core/error.h"
#include "core/file_hash.h"
#include "core/files.h"
#include "longbench/dataset.h"
#include "longbench/jsonl.h"
#include "longbench/metrics.h"
#include "longbench/text.h"

namespace kvs::longbench {

const char* const kMathInstruction =
    "Please reason step by step, and put your final answer within \\boxed{}.";

namespace {

namespace fs = std::filesystem;

// A text or integer field as text; empty when absent.
std::string text_or_integer(const nlohmann::json& object, const char* field,
                            const std::string& where) {
  if (!object.contains(field) || object.at(field).is_null()) return "";
  const auto& value = object.at(field);
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_integer()) return std::to_string(value.get<int64_t>());
  throw error_at(where, std::string("field '") + field + "' must be a string or an integer");
}

std::string trimmed(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(" \t\r\n") - begin + 1);
}

// `text` as a str.format template that renders it unchanged (format.h): braces doubled.
std::string format_literal(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '{' || c == '}' ? std::string(2, c) : std::string(1, c);
  return out;
}

struct ReadSet {
  MathSetSummary summary;
  std::string lines;
};

ReadSet read_set(const MathSetSource& source, const fs::path& data_dir) {
  ReadSet set;
  set.summary.name = source.name;
  set.summary.path = (data_dir / (source.name + ".jsonl")).string();
  set.summary.metric =
      metric_name(source.layout == MathLayout::Gsm8k ? Metric::LastNumber : Metric::BoxedAnswer);
  int64_t line = 0;
  for_each_jsonl_object(source.path, [&](const nlohmann::json& object, const std::string& where) {
    ++line;
    std::string problem, answer;
    if (source.layout == MathLayout::Gsm8k) {
      problem = get_string(object, "question", where);
      const std::string worked = get_string(object, "answer", where);
      const size_t mark = worked.rfind("####");
      if (mark == std::string::npos)
        throw error_at(where,
                       "field 'answer' has no \"####\" before its final answer (the gsm8k layout)");
      answer = trimmed(worked.substr(mark + 4));
      if (!last_number(answer)) throw error_at(where, "field 'answer': no number after \"####\"");
    } else {
      const char* field = object.contains("problem") || source.layout == MathLayout::Math500
                              ? "problem"
                              : "question";
      problem = get_string(object, field, where);
      answer = trimmed(text_or_integer(object, "answer", where));
    }
    if (trimmed(problem).empty()) throw error_at(where, "the problem is empty");
    if (answer.empty()) throw error_at(where, "field 'answer' is missing or empty");
    std::string id;
    for (const char* field : {"id", "unique_id", "question_id"})
      if (id.empty()) id = text_or_integer(object, field, where);
    if (id.empty()) id = source.name + "-" + std::to_string(line);
    const nlohmann::json record{
        {"input", problem},       {"context", ""},
        {"answers", {answer}},    {"length", py_split_whitespace(utf8_to_utf32(problem)).size()},
        {"dataset", source.name}, {"language", "en"},
        {"all_classes", nullptr}, {"_id", id}};
    set.lines += record.dump() + "\n";
  });
  set.summary.records = line;
  if (line == 0) throw error_at(source.path, "holds no problems");
  return set;
}

}  // namespace

MathLayout parse_math_layout(const std::string& name) {
  if (name == "aime") return MathLayout::Aime;
  if (name == "math500") return MathLayout::Math500;
  if (name == "gsm8k") return MathLayout::Gsm8k;
  throw Error("unknown layout '" + name + "' (expected aime, math500 or gsm8k)");
}

std::string math_layout_name(MathLayout layout) {
  switch (layout) {
    case MathLayout::Aime:
      return "aime";
    case MathLayout::Math500:
      return "math500";
    case MathLayout::Gsm8k:
      return "gsm8k";
  }
  return "?";
}

MathSetSource parse_math_set(const std::string& spec, const std::string& flag) {
  const size_t first = spec.find(':');
  const size_t second = first == std::string::npos ? first : spec.find(':', first + 1);
  if (second == std::string::npos) throw Error(flag + ": '" + spec + "' is not NAME:LAYOUT:FILE");
  MathSetSource source;
  source.name = spec.substr(0, first);
  if (source.name.empty() ||
      source.name.find_first_not_of(
          "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") != std::string::npos)
    throw Error(flag + ": the name '" + source.name + "' must be letters, digits, '_', '.' or '-'");
  try {
    source.layout = parse_math_layout(spec.substr(first + 1, second - first - 1));
  } catch (const Error& e) {
    throw Error(flag + ": " + e.what());
  }
  source.path = spec.substr(second + 1);
  if (source.path.empty()) throw Error(flag + ": '" + spec + "' names no file");
  return source;
}

std::vector<MathSetSummary> write_math_sets(const MathSetOptions& options) {
  if (options.sets.empty()) throw Error("--set: give at least one NAME:LAYOUT:FILE");
  if (options.max_new_tokens <= 0) throw Error("--max-new-tokens must be positive");
  if (options.dev < 0) throw Error("--dev must not be negative");
  const fs::path root(options.out_dir);
  std::vector<ReadSet> sets;
  for (size_t i = 0; i < options.sets.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (options.sets[j].name == options.sets[i].name)
        throw Error("--set: the name '" + options.sets[i].name + "' is given twice");
  for (const auto& source : options.sets) {
    sets.push_back(read_set(source, root / "data"));
    if (options.dev >= sets.back().summary.records)
      throw Error("--dev " + std::to_string(options.dev) + ": " + source.path + " holds only " +
                  std::to_string(sets.back().summary.records) +
                  " problems, and the test split needs at least one");
  }
  nlohmann::ordered_json prompts, maxlen, metrics, dev, provenance;
  provenance["generator"] = "kvsearch data math";
  provenance["kvsearch_commit"] = build_info::git_commit();
  provenance["instruction"] = kMathInstruction;
  provenance["sets"] = nlohmann::ordered_json::array();
  for (size_t i = 0; i < sets.size(); ++i) {
    const auto& s = sets[i].summary;
    const auto& source = options.sets[i];
    prompts[s.name] = "{input}\n" + format_literal(kMathInstruction);
    maxlen[s.name] = options.max_new_tokens;
    metrics[s.name] = s.metric;
    dev[s.name] = options.dev;
    provenance["sets"].push_back({{"name", s.name},
                                  {"layout", math_layout_name(source.layout)},
                                  {"source", fs::absolute(source.path).string()},
                                  {"sha256", sha256_file_hex(source.path)},
                                  {"records", s.records},
                                  {"metric", s.metric}});
  }
  fs::create_directories(root / "data");
  fs::create_directories(root / "config");
  std::vector<MathSetSummary> summaries;
  for (const auto& set : sets) {
    write_file(set.summary.path, set.lines);
    summaries.push_back(set.summary);
  }
  write_file((root / "config" / "dataset2prompt.json").string(), prompts.dump(2) + "\n");
  write_file((root / "config" / "dataset2maxlen.json").string(), maxlen.dump(2) + "\n");
  write_file((root / "config" / "dataset2metric.json").string(), metrics.dump(2) + "\n");
  write_file((root / "config" / "dataset2dev.json").string(), dev.dump(2) + "\n");
  write_file((root / "math_sets.json").string(), provenance.dump(2) + "\n");
  return summaries;
}

}  // namespace kvs::longbench
