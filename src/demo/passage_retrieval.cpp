#include "demo/passage_retrieval.h"

#include <algorithm>

#include "core/error.h"
#include "core/rng.h"
#include "demo/words.h"

namespace kvs::demo {

namespace {

using Paragraph = std::vector<std::string>;

constexpr int64_t kMinWords = 25, kMaxWords = 45;
constexpr int64_t kMinSpan = 8, kMaxSpan = 12;
constexpr uint64_t kDuplicatePercent = 30, kReplaceOneIn = 5;

std::vector<Paragraph> make_paragraphs(const std::vector<std::string>& lexicon, int64_t count,
                                       std::mt19937_64& gen) {
  std::vector<Paragraph> paragraphs;
  for (int64_t i = 0; i < count; ++i) {
    if (i > 0 && bounded_draw(gen, 100) < kDuplicatePercent) {
      Paragraph copy = paragraphs[bounded_draw(gen, paragraphs.size())];
      for (auto& word : copy)
        if (bounded_draw(gen, kReplaceOneIn) == 0) word = pick(lexicon, gen);
      // A copy always ends differently from its source, so both keep a question to ask.
      const std::string last = copy.back();
      while (copy.back() == last) copy.back() = pick(lexicon, gen);
      paragraphs.push_back(std::move(copy));
    } else {
      paragraphs.push_back(
          draw_words(lexicon, static_cast<size_t>(draw_between(gen, kMinWords, kMaxWords)), gen));
    }
  }
  return paragraphs;
}

bool contains_span(const Paragraph& p, const Paragraph& span) {
  return std::search(p.begin(), p.end(), span.begin(), span.end()) != p.end();
}

// The last words of `owner` (8-12 of them) when they occur in no other paragraph, or an empty
// span after enough tries.
Paragraph unique_span(const std::vector<Paragraph>& paragraphs, size_t owner, std::mt19937_64& gen) {
  const Paragraph& p = paragraphs[owner];
  for (int attempt = 0; attempt < 64; ++attempt) {
    const auto length = static_cast<size_t>(draw_between(gen, kMinSpan, kMaxSpan));
    Paragraph span(p.end() - static_cast<std::ptrdiff_t>(length), p.end());
    bool unique = true;
    for (size_t i = 0; i < paragraphs.size() && unique; ++i)
      if (i != owner && contains_span(paragraphs[i], span)) unique = false;
    if (unique) return span;
  }
  return {};
}

}  // namespace

TaskInstance make_passage_retrieval(const std::vector<std::string>& lexicon, const TaskShape& shape,
                                    std::mt19937_64& gen) {
  if (shape.min_items < 1 || shape.max_items < shape.min_items || shape.questions < 1)
    throw Error("passage retrieval: need 1 <= min_items <= max_items and at least one question");
  const int64_t count = draw_between(gen, shape.min_items, shape.max_items);
  const std::vector<Paragraph> paragraphs = make_paragraphs(lexicon, count, gen);

  TaskInstance task;
  for (size_t i = 0; i < paragraphs.size(); ++i) {
    if (i > 0) task.context += '\n';
    task.context += join_words(paragraphs[i], 0, paragraphs[i].size()) + " " + std::to_string(i + 1) + ".";
  }
  std::vector<size_t> order(paragraphs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  portable_shuffle(order, gen);
  // Each paragraph is asked at most once, so a small context gets fewer questions than asked for.
  for (const size_t owner : order) {
    if (static_cast<int64_t>(task.questions.size()) == shape.questions) break;
    const Paragraph span = unique_span(paragraphs, owner, gen);
    if (span.empty()) continue;
    task.questions.push_back(join_words(span, 0, span.size()));
    task.answers.push_back("Paragraph " + std::to_string(owner + 1));
    // The paragraph's last word again, then the number that follows it in the context: the first
    // generated token comes from the prefill's full attention (as SnapKV computes it), so the
    // number is decoded from the compressed cache, as "Paragraph 7" is by Mistral.
    task.completions.push_back(span.back() + " " + std::to_string(owner + 1) + ".");
  }
  if (task.questions.empty())
    throw Error("passage retrieval: no paragraph with a unique span (too many duplicates)");
  return task;
}

}  // namespace kvs::demo
