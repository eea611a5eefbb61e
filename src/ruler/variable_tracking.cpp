// vt: chains of assignments "VAR A = 12345", "VAR B = VAR A ", ... on their own lines of a noise
// haystack; the question asks for every variable that holds the chain's value. An in-context
// example (3-letter names, a short haystack) with its answer comes first.
#include <algorithm>
#include <set>

#include "core/rng.h"
#include "core/strfmt.h"
#include "ruler/generators.h"
#include "ruler/values.h"

namespace kvs::ruler {

namespace {

// The example's haystack: RULER fits it to 500 tokens; a fixed number of lines keeps it
// independent of the tokenizer.
constexpr int64_t kExampleNoiseLines = 16;

struct Chains {
  std::vector<std::vector<std::string>> names;  // per chain, in assignment order
  std::vector<std::string> values;
};

Chains draw_chains(int num_chains, int num_hops, size_t name_length, std::mt19937_64& gen) {
  Chains c;
  std::set<std::string> used;
  std::vector<std::string> names;
  while (names.size() < static_cast<size_t>(num_chains * (num_hops + 1))) {
    std::string name = random_letters(name_length, 'A', gen);
    if (used.insert(name).second) names.push_back(std::move(name));
  }
  for (int chain = 0; chain < num_chains; ++chain) {
    c.names.emplace_back(names.begin() + chain * (num_hops + 1), names.begin() + (chain + 1) * (num_hops + 1));
    c.values.push_back(std::to_string(10000 + bounded_draw(gen, 89999)));  // [10000, 99999)
  }
  return c;
}

// The noise haystack of `lines` lines with the statements at sorted random lines, chain by chain.
std::string chain_haystack(const Chains& c, const std::string& noise, int64_t lines, std::mt19937_64& gen) {
  std::vector<std::string> statements;
  for (size_t chain = 0; chain < c.names.size(); ++chain) {
    statements.push_back("VAR " + c.names[chain][0] + " = " + c.values[chain]);
    for (size_t i = 1; i < c.names[chain].size(); ++i)
      statements.push_back("VAR " + c.names[chain][i] + " = VAR " + c.names[chain][i - 1] + " ");
  }
  auto positions = sample_without_replacement(static_cast<size_t>(lines), statements.size(), gen);
  std::sort(positions.begin(), positions.end());
  const auto all = insert_lines(std::vector<std::string>(static_cast<size_t>(lines), noise), statements, positions);
  return join(all, "\n");
}

}  // namespace

Sample generate_variable_tracking(const TaskSpec& task, const Resources& res, int64_t units,
                                  std::mt19937_64& gen) {
  const auto& p = task.vt;
  const FamilyWording& w = res.wording.of(Family::VariableTracking);
  const std::string num_v = std::to_string(p.num_hops + 1);

  const Chains example = draw_chains(p.num_chains, p.num_hops, 3, gen);
  const TaskText shown = render(w, chain_haystack(example, w.noise, kExampleNoiseLines, gen),
                                {{"query", example.values[0]}, {"num_v", num_v}});
  const std::string example_text = shown.context + shown.question + shown.answer_prefix + " " +
                                   join(example.names[0], " ") + "\n";

  const Chains chains = draw_chains(p.num_chains, p.num_hops, 5, gen);
  const TaskText text = render(w, chain_haystack(chains, w.noise, units, gen),
                               {{"query", chains.values[0]}, {"num_v", num_v}});
  Sample sample;
  sample.context = example_text + "\n" + text.context;
  sample.question = text.question;
  sample.answer_prefix = text.answer_prefix;
  sample.answers = chains.names[0];
  return sample;
}

}  // namespace kvs::ruler
