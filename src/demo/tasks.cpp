#include "demo/tasks.h"

#include "core/error.h"
#include "demo/kv_recall.h"
#include "demo/passage_retrieval.h"
#include "demo/words.h"

namespace kvs::demo {

namespace {

constexpr size_t kLexiconSize = 384;
constexpr uint64_t kLexiconSeed = 20240611;

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

}  // namespace

std::string DemoTask::question_text(const std::string& input) const {
  std::string text = question_block;
  replace_all(text, "{input}", input);
  return text;
}

TaskInstance DemoTask::generate(const std::vector<std::string>& lexicon, const TaskShape& shape,
                                std::mt19937_64& gen) const {
  switch (kind) {
    case TaskKind::PassageRetrieval:
      return make_passage_retrieval(lexicon, shape, gen);
    case TaskKind::KvRecall:
      return make_kv_recall(lexicon, shape, gen);
  }
  throw Error("unknown demo task kind");
}

const std::vector<DemoTask>& demo_tasks() {
  static const std::vector<DemoTask> tasks = {
      {"demo_passage_retrieval", TaskKind::PassageRetrieval, "retrieval_score",
       "Below are paragraphs, each ending with its number. Repeat the last word at the bottom and "
       "give the number of the paragraph that ends with the words at the bottom.\n\n",
       "\n\nWhich paragraph ends with these words? {input}", 8, TaskShape{25, 50, 1}},
      // The key starts a line, as in the context: SentencePiece gives a word after a newline no
      // leading '▁', so only there does it split into the same tokens as the record's key.
      {"demo_kv_recall", TaskKind::KvRecall, "qa_f1_score",
       "Below is a list of records: a two-word key, then its three-word value. Complete the key at "
       "the bottom with its value.\n\n",
       "\n\nComplete this record:\n{input}", 8, TaskShape{100, 200, 1}},
  };
  return tasks;
}

const DemoTask& demo_task(const std::string& name) {
  std::string names;
  for (const auto& task : demo_tasks()) {
    if (task.name == name) return task;
    names += (names.empty() ? "" : ", ") + task.name;
  }
  throw Error("unknown demo task '" + name + "' (expected one of: " + names + ")");
}

const std::vector<std::string>& demo_lexicon() {
  static const std::vector<std::string> lexicon = make_lexicon(kLexiconSize, kLexiconSeed);
  return lexicon;
}

}  // namespace kvs::demo
