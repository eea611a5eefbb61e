// The instruction wording of each task family, with RULER's structure: a template whose
// "{context}" field is the haystack (everything before it and the haystack form the record's
// context, the rest its question), an answer prefix the model continues from (it follows the chat
// wrapper), and for niah and vt the needle sentence and the noise line of the haystack.
// kvsearch ships its own wording (default_wording); `--templates FILE` reads RULER's exact one,
// extracted from the user's RULER checkout by tools/ruler_extract_templates.py. The file is JSON:
//   {"niah": {"template", "answer_prefix", "needle", "noise", "singular_rewrites": [[from, to]...]},
//    "variable_tracking": {"template", "answer_prefix", "noise"},
//    "common_words_extraction": {"template", "answer_prefix"},
//    "freq_words_extraction": {"template", "answer_prefix"},
//    "qa": {"template", "answer_prefix"}}
// Fields in braces, as Python's str.format: niah {type_needle_v} {query}, needle {type_needle_v}
// {key} {value}; vt {query} {num_v}; cwe {num_cw}; qa {query}.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ruler/tasks.h"

namespace kvs::ruler {

struct FamilyWording {
  std::string template_text;
  std::string answer_prefix;
  std::string needle;  // niah
  std::string noise;   // niah, vt: the line a noise haystack repeats
  // niah, when one value is asked for: plain substring replacements, in order, applied to the
  // template and the answer prefix (never to the chat wrapper), as RULER's singular rewrite.
  std::vector<std::pair<std::string, std::string>> singular_rewrites;
};

struct Wording {
  std::string source;  // "kvsearch" or the templates file's path
  std::string sha256;  // of the file; empty for kvsearch's own
  std::map<Family, FamilyWording> families;

  const FamilyWording& of(Family family) const;
};

Wording default_wording();

// Every family and field checked: a missing family or field, an unknown {field} or a template
// without exactly one {context} is a one-line kvs::Error naming the file and the field.
Wording load_wording(const std::string& path);

// The template and answer prefix of a niah task asking for one value (singular_rewrites applied).
FamilyWording singular(const FamilyWording& wording);

// One filled task text: context = the template up to {context}, then the haystack; question = the
// rest of the template; both and the answer prefix filled with `fields` (str.format semantics).
struct TaskText {
  std::string context;
  std::string question;
  std::string answer_prefix;
};
TaskText render(const FamilyWording& wording, const std::string& haystack,
                const std::map<std::string, std::string>& fields);

}  // namespace kvs::ruler
