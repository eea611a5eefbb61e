#include "ruler/wording.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.h"
#include "core/file_hash.h"
#include "longbench/format.h"

namespace kvs::ruler {

namespace {

constexpr const char* kContextField = "{context}";

// The fields each text of a family may use.
std::set<std::string> template_fields_of(Family family) {
  switch (family) {
    case Family::Niah:
      return {"context", "type_needle_v", "query"};
    case Family::VariableTracking:
      return {"context", "query", "num_v"};
    case Family::CommonWords:
      return {"context", "num_cw"};
    case Family::FreqWords:
      return {"context"};
    case Family::Qa:
      return {"context", "query"};
  }
  return {};
}

void check_fields(const std::string& text, const std::set<std::string>& allowed,
                  const std::string& where) {
  for (const auto& field : longbench::template_fields(text, where))
    if (!allowed.count(field)) throw Error(where + ": unknown field {" + field + "}");
}

void check_wording(Family family, const FamilyWording& w, const std::string& where) {
  const std::string name = family_name(family);
  const std::string at = where + ": " + name;
  const auto fields = template_fields_of(family);
  check_fields(w.template_text, fields, at + ".template");
  const size_t first = w.template_text.find(kContextField);
  if (first == std::string::npos || w.template_text.find(kContextField, first + 1) != std::string::npos)
    throw Error(at + ".template: needs {context} exactly once");
  auto prefix_fields = fields;
  prefix_fields.erase("context");
  check_fields(w.answer_prefix, prefix_fields, at + ".answer_prefix");
  if (family == Family::Niah) check_fields(w.needle, {"type_needle_v", "key", "value"}, at + ".needle");
  if ((family == Family::Niah || family == Family::VariableTracking) && w.noise.empty())
    throw Error(at + ".noise: must not be empty");
}

std::string string_field(const nlohmann::json& object, const char* field, const std::string& where) {
  if (!object.contains(field)) throw Error(where + ": missing field '" + field + "'");
  if (!object[field].is_string()) throw Error(where + "." + field + ": must be a string");
  return object[field].get<std::string>();
}

constexpr Family kFamilies[] = {Family::Niah, Family::VariableTracking, Family::CommonWords,
                                Family::FreqWords, Family::Qa};

}  // namespace

const FamilyWording& Wording::of(Family family) const { return families.at(family); }

Wording default_wording() {
  const std::string noise =
      "The river runs to the sea. The hills stand green. The road is long. On we go. Home again "
      "at last.";
  Wording w;
  w.source = "kvsearch";
  w.families[Family::Niah] = {
      "A few secret {type_needle_v} are hidden in the text below. Read it closely and remember "
      "them: you will be asked about the {type_needle_v} later.\n{context}\nWhich are all the "
      "secret {type_needle_v} for {query} given in the text above?",
      " The secret {type_needle_v} for {query} given in the text above are",
      "One of the secret {type_needle_v} for {key} is: {value}.",
      noise,
      {{"A few", "A"}, {"Which are all", "Which is"}, {"are", "is"}, {"them", "it"}}};
  w.families[Family::VariableTracking] = {
      "Follow the chains of variable assignments hidden in the text below.\n\n{context}\n"
      "Question: Which variables are assigned the value {query} in the text above?",
      " Answer: Following the chains of assignments above, {num_v} variables are assigned the "
      "value {query}, namely: ",
      "",
      noise,
      {}};
  w.families[Family::CommonWords] = {
      "Here is a numbered list of words. Some words occur more often than the rest; keep track of "
      "the ones that occur most often.\n{context}\nQuestion: Which {num_cw} words occur most often "
      "in the list above?",
      " Answer: The {num_cw} words that occur most often in the list are:",
      "",
      "",
      {}};
  w.families[Family::FreqWords] = {
      "Read the coded text below and count how often each coded word occurs. Find the three coded "
      "words that occur most often. {context}\nQuestion: Give no explanation, and ignore the dots "
      "'....'. Which three words occur most often in the coded text above?",
      " Answer: In the coded text above, the three words that occur most often are:",
      "",
      "",
      {}};
  w.families[Family::Qa] = {
      "Answer the question from the documents below. Reply with the answer only.\n\nThe "
      "documents:\n\n{context}\n\nAnswer the question from the documents above. Reply with the "
      "answer only.\n\nQuestion: {query}",
      " Answer:",
      "",
      "",
      {}};
  for (Family f : kFamilies) check_wording(f, w.of(f), "kvsearch wording");
  return w;
}

Wording load_wording(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error_at(path, "--templates: cannot read the file");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw error_at(path, std::string("--templates: malformed JSON: ") + e.what());
  }
  if (!j.is_object()) throw error_at(path, "--templates: expected a JSON object of family -> wording");
  Wording w;
  w.source = path;
  w.sha256 = sha256_file_hex(path);
  for (Family family : kFamilies) {
    const std::string name = family_name(family);
    const std::string where = path + ": " + name;
    if (!j.contains(name) || !j[name].is_object())
      throw Error(path + ": --templates: missing family '" + name + "'");
    const auto& o = j[name];
    FamilyWording f;
    f.template_text = string_field(o, "template", where);
    f.answer_prefix = string_field(o, "answer_prefix", where);
    if (family == Family::Niah) f.needle = string_field(o, "needle", where);
    if (family == Family::Niah || family == Family::VariableTracking)
      f.noise = string_field(o, "noise", where);
    if (family == Family::Niah && o.contains("singular_rewrites")) {
      const auto& rewrites = o["singular_rewrites"];
      if (!rewrites.is_array()) throw Error(where + ".singular_rewrites: must be a list of [from, to]");
      for (const auto& pair : rewrites) {
        if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() || !pair[1].is_string() ||
            pair[0].get<std::string>().empty())
          throw Error(where + ".singular_rewrites: every entry must be [from, to], from non-empty");
        f.singular_rewrites.emplace_back(pair[0].get<std::string>(), pair[1].get<std::string>());
      }
    }
    check_wording(family, f, path);
    w.families[family] = f;
  }
  return w;
}

namespace {

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t pos = text.find(from); pos != std::string::npos; pos = text.find(from, pos + to.size()))
    text.replace(pos, from.size(), to);
  return text;
}

}  // namespace

FamilyWording singular(const FamilyWording& wording) {
  FamilyWording s = wording;
  for (const auto& [from, to] : wording.singular_rewrites) {
    s.template_text = replace_all(s.template_text, from, to);
    s.answer_prefix = replace_all(s.answer_prefix, from, to);
  }
  return s;
}

TaskText render(const FamilyWording& wording, const std::string& haystack,
                const std::map<std::string, std::string>& fields) {
  const size_t at = wording.template_text.find(kContextField);
  const std::string before = wording.template_text.substr(0, at);
  const std::string after = wording.template_text.substr(at + std::string(kContextField).size());
  TaskText text;
  text.context = longbench::format_template(before, fields, "template") + haystack;
  text.question = longbench::format_template(after, fields, "template");
  text.answer_prefix = longbench::format_template(wording.answer_prefix, fields, "answer_prefix");
  return text;
}

}  // namespace kvs::ruler
