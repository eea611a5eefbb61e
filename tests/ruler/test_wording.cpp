#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/scratch_dir.h"
#include "core/error.h"
#include "ruler/wording.h"

namespace kvs::ruler {
namespace {

nlohmann::json wording_json(const Wording& w) {
  nlohmann::json j;
  for (const auto& [family, f] : w.families) {
    nlohmann::json o = {{"template", f.template_text}, {"answer_prefix", f.answer_prefix}};
    if (family == Family::Niah) {
      o["needle"] = f.needle;
      o["singular_rewrites"] = f.singular_rewrites;
    }
    if (family == Family::Niah || family == Family::VariableTracking) o["noise"] = f.noise;
    j[family_name(family)] = o;
  }
  return j;
}

std::string error_of(const std::string& path) {
  try {
    load_wording(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Wording, RenderSplitsAtTheContext) {
  FamilyWording w;
  w.template_text = "Find {query}.\n{context}\nWhat is {query}?";
  w.answer_prefix = " It is {query}:";
  const TaskText t = render(w, "HAY", {{"query", "k"}});
  EXPECT_EQ(t.context, "Find k.\nHAY");
  EXPECT_EQ(t.question, "\nWhat is k?");
  EXPECT_EQ(t.answer_prefix, " It is k:");
}

TEST(Wording, SingularRewritesAreOrderedSubstringReplacements) {
  FamilyWording w;
  w.template_text = "Some {type_needle_v} are here. What are all the {type_needle_v}? {context}";
  w.answer_prefix = " The answers are";
  w.singular_rewrites = {{"Some", "A"}, {"are all", "is"}, {"are", "is"}, {"answers", "answer"}};
  const FamilyWording s = singular(w);
  EXPECT_EQ(s.template_text, "A {type_needle_v} is here. What is the {type_needle_v}? {context}");
  EXPECT_EQ(s.answer_prefix, " The answer is");
}

TEST(Wording, FileRoundTripsAndRecordsItsHash) {
  test::ScratchDir dir;
  const auto path = dir.write("t.json", wording_json(default_wording()).dump());
  const Wording w = load_wording(path);
  EXPECT_EQ(w.source, path);
  EXPECT_EQ(w.sha256.size(), 64u);
  EXPECT_EQ(w.of(Family::Niah).needle, default_wording().of(Family::Niah).needle);
  EXPECT_EQ(w.of(Family::Niah).singular_rewrites, default_wording().of(Family::Niah).singular_rewrites);
}

TEST(Wording, FileMissingAFamilyOrFieldIsNamed) {
  test::ScratchDir dir;
  auto j = wording_json(default_wording());
  j.erase("freq_words_extraction");
  EXPECT_NE(error_of(dir.write("a.json", j.dump())).find("missing family 'freq_words_extraction'"),
            std::string::npos);
  j = wording_json(default_wording());
  j["niah"].erase("needle");
  EXPECT_NE(error_of(dir.write("b.json", j.dump())).find("niah: missing field 'needle'"), std::string::npos);
  j = wording_json(default_wording());
  j["variable_tracking"]["template"] = "no haystack here";
  EXPECT_NE(error_of(dir.write("c.json", j.dump())).find("variable_tracking.template: needs {context}"),
            std::string::npos);
  j = wording_json(default_wording());
  j["common_words_extraction"]["answer_prefix"] = " {nonsense}";
  EXPECT_NE(error_of(dir.write("d.json", j.dump())).find("unknown field {nonsense}"), std::string::npos);
}

}  // namespace
}  // namespace kvs::ruler
