// The question-answering datasets of RULER's qa tasks, read from the user's files (RULER downloads
// them; kvsearch ships neither): qa_1 from SQuAD v2 dev (dev-v2.0.json), qa_2 from HotpotQA dev
// distractor (hotpot_dev_distractor_v1.json). As RULER's qa.py reads them: SQuAD keeps the
// answerable questions and its documents are the distinct paragraphs; a HotpotQA document is the
// title, a newline and the sentences joined as they are (each carries its own leading space).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace kvs::ruler {

struct QaQuestion {
  std::string question;
  std::vector<std::string> answers;  // SQuAD: every answer text, repeats kept; HotpotQA: the one
  std::vector<size_t>
      own_documents;  // always in the sample (SQuAD: its paragraph, HotpotQA: its 10)
  std::vector<size_t> near_documents;  // SQuAD: the other paragraphs of its article, drawn first
};

struct QaCorpus {
  std::string source;                  // the file's path
  std::string sha256;                  // of the file
  std::vector<std::string> documents;  // distinct, in the file's order
  std::vector<QaQuestion> questions;   // in the file's order: sample i asks question i
};

// kvs::Error naming the file, the option and the field (data[3].paragraphs[0].qas[2].question)
// for a missing file, malformed JSON, a missing or mistyped field, an answerable question without
// answers, or a file without any answerable question.
QaCorpus load_squad(const std::string& path);
QaCorpus load_hotpotqa(const std::string& path);

}  // namespace kvs::ruler
