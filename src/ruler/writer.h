// `kvsearch data ruler`: RULER's tasks at each target length, in the LongBench layout the rest of
// the project reads:
//   <out>/data/<task>_<length>.jsonl  records {input (the question), context (the task text up to
//       and including the haystack), answers, length (prompt tokens + tokens to generate),
//       dataset, language, all_classes, _id, answer_prefix, task, target_length, units, and for
//       niah haystack, needle_depths, needle_offsets, for qa gold_documents};
//   <out>/config/dataset2prompt.json ("{context}{input}"), dataset2maxlen.json (the family's
//       tokens to generate), dataset2metric.json (string_match_all / string_match_part),
//       dataset2chat_template.json (the wrapper the lengths were fitted with);
//   <out>/ruler_generation.json  the parameters: seed, count, lengths, tasks, tokenizer file and
//       SHA-256, chat template, wording, haystack, word list and qa files, kvsearch commit.
// Every sample is fitted alone (length_fit.h) from its own random stream, seeded by the seed, the
// task and length and the sample's index: the same options and tokenizer give byte-identical files.
// Everything is generated and checked before the first file is written.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kvs::ruler {

struct RulerDataOptions {
  std::string model;  // a --model argument (core/checkpoint.h) or a tokenizer file
  std::string out_dir;
  std::vector<int64_t> lengths;
  int64_t count = 100;  // records per dataset (the dev split takes 100)
  uint64_t seed = 42;
  std::vector<std::string> tasks;  // empty: all of RULER's
  std::string haystack_file;       // empty: the Debian licence texts (haystack.h)
  std::string templates_file;      // empty: kvsearch's own wording (wording.h)
  std::string squad_file;          // SQuAD v2 dev (qa_1); empty: qa_1 is skipped with a note
  std::string hotpotqa_file;       // HotpotQA dev distractor (qa_2); empty: qa_2 is skipped
  // Caps every task's tokens to generate (RULER's: niah 128, vt 30, cwe 120, fwe 50, qa 32); the
  // length fit reserves the capped count. 0: RULER's own.
  int max_new_tokens = 0;
  // auto: the checkpoint's own template (none for Mistral, as in RULER's paper), else llama3 for
  // tokenizers with Llama-3's header tokens, else none
  std::string chat_template = "auto";
};

struct RulerDatasetSummary {
  std::string dataset;
  std::string path;
  int64_t records = 0;
  int64_t min_length = 0;  // prompt tokens + tokens to generate
  int64_t max_length = 0;
};

struct RulerDataResult {
  std::vector<RulerDatasetSummary> datasets;
  std::vector<std::string> notes;  // tasks skipped, and why
  std::string chat_template;
};

RulerDataResult write_ruler_data(const RulerDataOptions& options);

}  // namespace kvs::ruler
