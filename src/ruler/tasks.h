// RULER's 13 synthetic tasks (scripts/synthetic.yaml) and their families' fixed settings
// (scripts/data/synthetic/constants.py): tokens to generate and metric. Plain data, torch-free.
#pragma once

#include <string>
#include <vector>

namespace kvs::ruler {

enum class Family { Niah, VariableTracking, CommonWords, FreqWords, Qa };
enum class Haystack { Noise, Essay, Needle };  // niah: repeated noise line, prose, distractor needles
enum class ValueType { Words, Numbers, Uuids };

struct NiahParams {
  Haystack haystack = Haystack::Noise;
  ValueType key_type = ValueType::Words;
  ValueType value_type = ValueType::Numbers;
  int num_keys = 1;     // needles with distinct keys (raised to num_queries, as RULER does)
  int num_values = 1;   // values per key, one needle each
  int num_queries = 1;  // keys asked for
};

struct VariableTrackingParams {
  int num_chains = 1;
  int num_hops = 4;  // a chain has num_hops + 1 variables
};

struct CommonWordsParams {
  int freq_common = 30;    // repeats of each common word (6 below a 4096-token target)
  int freq_uncommon = 3;   // repeats of each other word (1 below 4096)
  int num_common = 10;     // the words asked for
};

struct FreqWordsParams {
  double alpha = 2.0;      // Zipf exponent of the coded words' counts
  int coded_word_length = 6;
};

enum class QaDataset { Squad, HotpotQa };

struct TaskSpec {
  std::string name;
  Family family;
  NiahParams niah;
  VariableTrackingParams vt;
  CommonWordsParams cwe;
  FreqWordsParams fwe;
  QaDataset qa = QaDataset::Squad;
};

// The 13 tasks in RULER's order: niah_single_1..3, niah_multikey_1..3, niah_multivalue,
// niah_multiquery, vt, cwe, fwe, qa_1, qa_2.
const std::vector<TaskSpec>& ruler_tasks();

// kvs::Error naming the option and listing the task names when unknown.
const TaskSpec& find_task(const std::string& name);

std::string family_name(Family family);  // "niah", "variable_tracking", ... (RULER's names)
int tokens_to_generate(Family family);   // niah 128, vt 30, cwe 120, fwe 50, qa 32
std::string family_metric(Family family);  // "string_match_all", or "string_match_part" for qa
std::string haystack_name(Haystack haystack);  // "noise", "essay", "needle"
std::string value_type_name(ValueType type);   // plural, as the needle sentence uses it

}  // namespace kvs::ruler
