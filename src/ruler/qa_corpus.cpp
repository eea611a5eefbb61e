#include "ruler/qa_corpus.h"

#include <map>

#include "core/error.h"
#include "core/file_hash.h"
#include "core/files.h"
#include "core/json_fields.h"

namespace kvs::ruler {

namespace {

using nlohmann::json;

// The documents, each distinct text once, in first-seen order.
class DocumentTable {
 public:
  size_t index_of(const std::string& text) {
    const auto [it, added] = index_.emplace(text, documents_.size());
    if (added) documents_.push_back(text);
    return it->second;
  }
  std::vector<std::string> take() { return std::move(documents_); }

 private:
  std::map<std::string, size_t> index_;
  std::vector<std::string> documents_;
};

void add_distinct(std::vector<size_t>& list, size_t index) {
  for (size_t i : list)
    if (i == index) return;
  list.push_back(index);
}

std::string item(const std::string& where, const char* field, size_t index) {
  return where + "." + field + "[" + std::to_string(index) + "]";
}

QaCorpus corpus_of(const std::string& path) {
  QaCorpus corpus;
  corpus.source = path;
  corpus.sha256 = sha256_file_hex(path);
  return corpus;
}

}  // namespace

QaCorpus load_squad(const std::string& path) {
  const std::string file = path + ": --squad";
  const json root = read_json_file(path, "the --squad file");
  if (!root.is_object() || !root.contains("data") || !root["data"].is_array())
    throw error_at(
        file, "expected an object with a list \"data\" of articles (the dev-v2.0.json layout)");
  const json& articles = root["data"];
  DocumentTable table;
  QaCorpus corpus = corpus_of(path);
  size_t impossible = 0;
  for (size_t a = 0; a < articles.size(); ++a) {
    const std::string article_at = file + ": data[" + std::to_string(a) + "]";
    JsonFields article(articles[a], article_at);
    const json& paragraphs = article.array("paragraphs", true);
    std::vector<size_t> article_documents;
    std::vector<std::pair<size_t, const json*>> questions_of;  // each paragraph's document and qas
    for (size_t p = 0; p < paragraphs.size(); ++p) {
      JsonFields paragraph(paragraphs[p], item(article_at, "paragraphs", p));
      const size_t document = table.index_of(paragraph.text("context", "", true));
      add_distinct(article_documents, document);
      questions_of.emplace_back(document, &paragraph.array("qas", true));
    }
    for (size_t p = 0; p < paragraphs.size(); ++p) {
      const auto& [own, qas_of] = questions_of[p];
      const json& qas = *qas_of;
      for (size_t q = 0; q < qas.size(); ++q) {
        const std::string qa_at = item(item(article_at, "paragraphs", p), "qas", q);
        JsonFields qa(qas[q], qa_at);
        const std::string question = qa.text("question", "", true);
        qa.require("is_impossible");
        if (qa.boolean("is_impossible", false)) {
          ++impossible;
          continue;
        }
        QaQuestion entry{question, {}, {own}, {}};
        const json& answers = qa.array("answers", true);
        if (answers.empty())
          throw error_at(qa_at + ".answers", "an answerable question needs an answer");
        for (size_t i = 0; i < answers.size(); ++i)
          entry.answers.push_back(
              JsonFields(answers[i], item(qa_at, "answers", i)).text("text", "", true));
        for (size_t d : article_documents)
          if (d != own) entry.near_documents.push_back(d);
        corpus.questions.push_back(std::move(entry));
      }
    }
  }
  if (corpus.questions.empty())
    throw error_at(file, "no answerable question (" + std::to_string(impossible) +
                             " with is_impossible true); qa_1 asks SQuAD v2's answerable ones");
  corpus.documents = table.take();
  return corpus;
}

QaCorpus load_hotpotqa(const std::string& path) {
  const std::string file = path + ": --hotpotqa";
  const json root = read_json_file(path, "the --hotpotqa file");
  if (!root.is_array())
    throw error_at(file,
                   "expected a JSON list of questions (got " + std::string(root.type_name()) + ")");
  if (root.empty()) throw error_at(file, "the file has no questions");
  DocumentTable table;
  QaCorpus corpus = corpus_of(path);
  for (size_t q = 0; q < root.size(); ++q) {
    const std::string at = file + ": [" + std::to_string(q) + "]";
    JsonFields entry(root[q], at);
    QaQuestion question{entry.text("question", "", true), {entry.text("answer", "", true)}, {}, {}};
    const json& paragraphs = entry.array("context", true);
    if (paragraphs.empty()) throw error_at(at + ".context", "the question has no paragraphs");
    for (size_t p = 0; p < paragraphs.size(); ++p) {
      const std::string paragraph_at = item(at, "context", p);
      const json& pair = paragraphs[p];
      if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() || !pair[1].is_array())
        throw error_at(paragraph_at, "expected [title, [sentences...]]");
      std::string text = pair[0].get<std::string>() + "\n";
      for (size_t s = 0; s < pair[1].size(); ++s) {
        if (!pair[1][s].is_string())
          throw error_at(paragraph_at + "[1][" + std::to_string(s) + "]",
                         "a sentence must be a string");
        text += pair[1][s].get<std::string>();
      }
      add_distinct(question.own_documents, table.index_of(text));
    }
    corpus.questions.push_back(std::move(question));
  }
  corpus.documents = table.take();
  return corpus;
}

}  // namespace kvs::ruler
