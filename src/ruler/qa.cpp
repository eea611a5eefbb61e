// qa: the documents of a SQuAD or HotpotQA question among distractor documents, numbered
// "Document i:" and joined by blank lines; the question asks what the documents say.
#include <algorithm>
#include <numeric>

#include "core/error.h"
#include "core/rng.h"
#include "ruler/generators.h"
#include "ruler/values.h"

namespace kvs::ruler {

const QaCorpus& qa_corpus(const TaskSpec& task, const Resources& res) {
  const bool squad = task.qa == QaDataset::Squad;
  if (!res.qa)
    throw Error(
        task.name + ": needs " +
        (squad ? "--squad FILE (SQuAD v2 dev)" : "--hotpotqa FILE (HotpotQA dev distractor)"));
  if (res.question_index >= res.qa->questions.size())
    throw Error(task.name + ": " + res.qa->source + " has " +
                std::to_string(res.qa->questions.size()) + (squad ? " answerable" : "") +
                " questions, too few for sample " + std::to_string(res.question_index));
  return *res.qa;
}

Sample generate_qa(const TaskSpec& task, const Resources& res, int64_t units,
                   std::mt19937_64& gen) {
  const QaCorpus& corpus = qa_corpus(task, res);
  const QaQuestion& q = corpus.questions[res.question_index];
  // As RULER: the question's own documents, then distractors from its article (SQuAD), then, once
  // those are used up, random other documents.
  std::vector<size_t> chosen = q.own_documents;
  const size_t wanted = std::clamp(static_cast<size_t>(std::max<int64_t>(units, 0)), chosen.size(),
                                   corpus.documents.size());
  const size_t extra = wanted - chosen.size();
  if (extra <= q.near_documents.size()) {
    for (size_t i : sample_without_replacement(q.near_documents.size(), extra, gen))
      chosen.push_back(q.near_documents[i]);
  } else {
    std::vector<bool> taken(corpus.documents.size(), false);
    for (size_t d : chosen) taken[d] = true;
    for (size_t d : q.near_documents) taken[d] = true;
    chosen.insert(chosen.end(), q.near_documents.begin(), q.near_documents.end());
    std::vector<size_t> others;
    for (size_t d = 0; d < corpus.documents.size(); ++d)
      if (!taken[d]) others.push_back(d);
    for (size_t i : sample_without_replacement(others.size(), wanted - chosen.size(), gen))
      chosen.push_back(others[i]);
  }
  std::vector<size_t> order(chosen.size());  // order[k]: the chosen document shown k-th
  std::iota(order.begin(), order.end(), size_t{0});
  std::mt19937_64 fixed(res.shuffle_seed);
  portable_shuffle(order, fixed);

  Sample sample;
  std::string documents;
  for (size_t k = 0; k < order.size(); ++k) {
    documents += (k ? "\n\n" : "") + std::string("Document ") + std::to_string(k + 1) + ":\n" +
                 corpus.documents[chosen[order[k]]];
    if (order[k] < q.own_documents.size()) sample.gold_documents.push_back(static_cast<int>(k + 1));
  }
  const TaskText text = render(res.wording.of(Family::Qa), documents, {{"query", q.question}});
  sample.context = text.context;
  sample.question = text.question;
  sample.answer_prefix = text.answer_prefix;
  sample.answers = q.answers;
  return sample;
}

}  // namespace kvs::ruler
