// Tiny files in the layouts of SQuAD v2 dev (dev-v2.0.json) and HotpotQA dev distractor, made up
// by the tests. Every text says where it comes from ("article 2 paragraph 3", "topic 4 part 1"),
// so a test can tell which document of a generated context is which.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace kvs::test {

// Some filler prose that makes a document about 60 tokens long.
inline std::string filler(int seed) {
  static const char* words[] = {"river",  "stone",   "quiet",  "harbor",  "lantern",
                                "meadow", "copper",  "window", "orchard", "silver",
                                "valley", "thunder", "garden", "marble",  "forest",
                                "candle", "bridge",  "autumn", "signal"};
  std::string text;
  for (int i = 0; i < 36; ++i) {
    text += std::string(i ? " " : "") + words[(seed * 7 + i * 5) % 19];
    if (i % 9 == 8) text += ".";
  }
  return text;
}

// The answer paragraph p of article a gives.
inline std::string squad_answer(int a, int p) {
  return "amber-" + std::to_string(a) + "-" + std::to_string(p);
}

inline std::string squad_paragraph(int a, int p) {
  return "From article " + std::to_string(a) + " paragraph " + std::to_string(p) +
         ": the code is " + squad_answer(a, p) + ". " + filler(a * 10 + p);
}

// `articles` articles of `paragraphs` paragraphs; each paragraph has two answerable questions (the
// second with three answers, one repeated) and one impossible question between them. The last
// article ends with a copy of article 0's first paragraph (its questions too): one document.
inline nlohmann::json squad_fixture(int articles, int paragraphs) {
  nlohmann::json data = nlohmann::json::array();
  for (int a = 0; a < articles; ++a) {
    nlohmann::json ps = nlohmann::json::array();
    for (int p = 0; p < paragraphs; ++p) {
      const std::string code = squad_answer(a, p);
      nlohmann::json qas = nlohmann::json::array();
      qas.push_back({{"question", "Which code does article " + std::to_string(a) + " paragraph " +
                                      std::to_string(p) + " give?"},
                     {"id", code + "-q0"},
                     {"answers", {{{"text", code}, {"answer_start", 0}}}},
                     {"is_impossible", false}});
      qas.push_back({{"question", "Which code was never given?"},
                     {"id", code + "-q1"},
                     {"answers", nlohmann::json::array()},
                     {"plausible_answers", {{{"text", code}, {"answer_start", 0}}}},
                     {"is_impossible", true}});
      qas.push_back(
          {{"question", "What is the code of article " + std::to_string(a) + " paragraph " +
                            std::to_string(p) + "?"},
           {"id", code + "-q2"},
           {"answers", {{{"text", code}}, {{"text", "the code is " + code}}, {{"text", code}}}},
           {"is_impossible", false}});
      ps.push_back({{"qas", qas}, {"context", squad_paragraph(a, p)}});
    }
    data.push_back({{"title", "Article_" + std::to_string(a)}, {"paragraphs", ps}});
  }
  if (articles > 1) data.back()["paragraphs"].push_back(data[0]["paragraphs"][0]);
  return {{"version", "v2.0"}, {"data", data}};
}

inline std::string hotpot_title(int topic) { return "Topic " + std::to_string(topic); }
inline std::string hotpot_word(int topic) { return "ember" + std::to_string(topic) + "z"; }

// `questions` questions of 10 paragraphs each; paragraph p of question q is topic q * 10 + p, and
// question q's last paragraph is question q + 1's first topic (shared, one document).
inline nlohmann::json hotpotqa_fixture(int questions) {
  nlohmann::json list = nlohmann::json::array();
  for (int q = 0; q < questions; ++q) {
    nlohmann::json context = nlohmann::json::array();
    for (int p = 0; p < 10; ++p) {
      const int topic = p == 9 ? (q + 1) * 10 : q * 10 + p;
      context.push_back(
          {hotpot_title(topic),
           {"Topic " + std::to_string(topic) + " holds the word " + hotpot_word(topic) + ".",
            " " + filler(topic)}});
    }
    list.push_back({{"_id", "q" + std::to_string(q)},
                    {"question", "Which word does topic " + std::to_string(q * 10) + " hold?"},
                    {"answer", hotpot_word(q * 10)},
                    {"supporting_facts",
                     nlohmann::json::array({nlohmann::json::array({hotpot_title(q * 10), 0})})},
                    {"context", context}});
  }
  return list;
}

}  // namespace kvs::test
