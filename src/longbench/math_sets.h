// Math and reasoning sets given by the user as JSON Lines (AIME, MATH-500, GSM8K layouts), written
// as a LongBench-layout directory (`kvsearch data math`) so that every command that reads a
// LongBench directory (run, generate --dataset, experiments, replay, score) evaluates them: each
// problem a record with an empty context, the answer scored by the boxed-answer or last-number
// rule (metrics.h), a prompt that asks for a boxed final answer, and the generation budget of a
// long reasoning trace. Torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kvs::longbench {

// The layouts of the public sets' JSONL files:
//   aime:    {"problem" or "question": text, "answer": text or integer}  (AIME 2024/2025)
//   math500: {"problem": text, "answer": text}                           (MATH-500)
//   gsm8k:   {"question": text, "answer": "... #### 72"}                 (GSM8K)
// An "id", "unique_id" or "question_id" field (text or integer) names the record; else
// "<set>-<line>".
enum class MathLayout { Aime, Math500, Gsm8k };
MathLayout parse_math_layout(const std::string& name);  // throws naming the layouts
std::string math_layout_name(MathLayout layout);

struct MathSetSource {
  std::string name;  // the dataset's name in the directory: [A-Za-z0-9_.-]+
  MathLayout layout = MathLayout::Aime;
  std::string path;  // the user's JSONL file
};
// "NAME:LAYOUT:FILE" (the file may hold ':'); throws naming `flag` and what is wrong.
MathSetSource parse_math_set(const std::string& spec, const std::string& flag);

struct MathSetOptions {
  std::vector<MathSetSource> sets;
  std::string out_dir;
  int64_t max_new_tokens = 4096;  // the generation budget of every set (dataset2maxlen.json)
  // Dev questions per set (dataset2dev.json): a search moves on them, and an experiment records
  // each fixed policy's dev score before its test score; the rest are test questions.
  int64_t dev = 5;
};

struct MathSetSummary {
  std::string name, path, metric;  // the written data file and its scorer
  int64_t records = 0;
};

// The instruction every set's prompt ends with (dataset2prompt.json: "{input}" and this).
extern const char* const kMathInstruction;

// Reads every source (errors name file:line and field; nothing is written unless all read),
// then writes <out>/data/<name>.jsonl, <out>/config/{dataset2prompt, dataset2maxlen,
// dataset2metric, dataset2dev}.json and <out>/math_sets.json (each source's path and SHA-256,
// the layout, the binary).
std::vector<MathSetSummary> write_math_sets(const MathSetOptions& options);

}  // namespace kvs::longbench
