#include "ruler/tasks.h"

#include <algorithm>

#include "core/error.h"

namespace kvs::ruler {

namespace {

TaskSpec niah_task(const std::string& name, Haystack haystack, ValueType key, ValueType value,
                   int keys, int values, int queries) {
  TaskSpec t{name, Family::Niah, {}, {}, {}, {}};
  t.niah = {haystack, key, value, std::max(keys, queries), values, queries};
  return t;
}

TaskSpec family_task(const std::string& name, Family family) { return {name, family, {}, {}, {}, {}}; }

}  // namespace

const std::vector<TaskSpec>& ruler_tasks() {
  using H = Haystack;
  using V = ValueType;
  static const std::vector<TaskSpec> tasks = [] {
    std::vector<TaskSpec> t = {
        niah_task("niah_single_1", H::Noise, V::Words, V::Numbers, 1, 1, 1),
        niah_task("niah_single_2", H::Essay, V::Words, V::Numbers, 1, 1, 1),
        niah_task("niah_single_3", H::Essay, V::Words, V::Uuids, 1, 1, 1),
        niah_task("niah_multikey_1", H::Essay, V::Words, V::Numbers, 4, 1, 1),
        niah_task("niah_multikey_2", H::Needle, V::Words, V::Numbers, 1, 1, 1),
        niah_task("niah_multikey_3", H::Needle, V::Uuids, V::Uuids, 1, 1, 1),
        niah_task("niah_multivalue", H::Essay, V::Words, V::Numbers, 1, 4, 1),
        niah_task("niah_multiquery", H::Essay, V::Words, V::Numbers, 1, 1, 4),
        family_task("vt", Family::VariableTracking),
        family_task("cwe", Family::CommonWords),
        family_task("fwe", Family::FreqWords),
        family_task("qa_1", Family::Qa),
        family_task("qa_2", Family::Qa),
    };
    t.back().qa = QaDataset::HotpotQa;
    return t;
  }();
  return tasks;
}

const TaskSpec& find_task(const std::string& name) {
  std::string names;
  for (const auto& t : ruler_tasks()) {
    if (t.name == name) return t;
    names += (names.empty() ? "" : ", ") + t.name;
  }
  throw Error("--tasks: unknown RULER task '" + name + "' (expected one of: " + names + ")");
}

std::string family_name(Family family) {
  switch (family) {
    case Family::Niah:
      return "niah";
    case Family::VariableTracking:
      return "variable_tracking";
    case Family::CommonWords:
      return "common_words_extraction";
    case Family::FreqWords:
      return "freq_words_extraction";
    case Family::Qa:
      return "qa";
  }
  return "?";
}

int tokens_to_generate(Family family) {
  switch (family) {
    case Family::Niah:
      return 128;
    case Family::VariableTracking:
      return 30;
    case Family::CommonWords:
      return 120;
    case Family::FreqWords:
      return 50;
    case Family::Qa:
      return 32;
  }
  return 0;
}

std::string family_metric(Family family) {
  return family == Family::Qa ? "string_match_part" : "string_match_all";
}

std::string haystack_name(Haystack haystack) {
  switch (haystack) {
    case Haystack::Noise:
      return "noise";
    case Haystack::Essay:
      return "essay";
    case Haystack::Needle:
      return "needle";
  }
  return "?";
}

std::string value_type_name(ValueType type) {
  switch (type) {
    case ValueType::Words:
      return "words";
    case ValueType::Numbers:
      return "numbers";
    case ValueType::Uuids:
      return "uuids";
  }
  return "?";
}

}  // namespace kvs::ruler
