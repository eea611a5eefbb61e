// Shared by the store tests: a scratch directory and small, fully populated records.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "common/scratch_dir.h"
#include "core/error.h"
#include "store/records.h"

namespace kvs::store::test_support {

using kvs::test::ScratchDir;

inline RunSpec make_spec(const std::string& key) {
  RunSpec s;
  s.key = key;
  s.model = "tiny-mistral";
  s.model_path = "/models/tiny-mistral";
  s.dataset = "passage_retrieval_en";
  s.longbench_dir = "/data/longbench";
  s.split_seed = 42;
  s.dev_limit = 20;
  s.budget = 64;
  s.profile_family = "segments";
  s.segments = 3;
  s.search_json = R"({"max_evals":14,"step":0.3,"tau":0.1})";
  s.policy_json = R"({"window":8,"selector":"greedy_diverse"})";
  s.git_commit = "abc123def456";
  s.build_type = "Release";
  s.command_line = "kvsearch run --dataset passage_retrieval_en --profile segments";
  s.host = "node01";
  return s;
}

inline PredictionRecord make_prediction(int64_t index, double score) {
  PredictionRecord p;
  p.question_index = index;
  p.question_id = "q" + std::to_string(index);
  p.prediction = "Paragraph " + std::to_string(index) + " \xC3\xA9t\xC3\xA9\n'quoted'";
  p.score = score;
  if (index % 2 == 0) p.official_score = score;
  p.prompt_tokens = 2000 + index;
  p.generated_tokens = 32;
  p.seconds = 0.25 * static_cast<double>(index + 1);
  return p;
}

// A state with awkward doubles (not exact in decimal) and `questions` predictions.
inline StateRecord make_state(int64_t order, int questions = 3) {
  StateRecord s;
  s.eval_order = order;
  s.latent = {std::asinh(-0.15), 0.1 + 0.2, -0.3 * static_cast<double>(order), 1e-300, 0, 0};
  s.lambda1 = {0.0, 0.0, 0.30452029344714265};
  s.lambda2 = {-0.15, 0.15 + static_cast<double>(order), -1.0 / 3.0};
  s.policy_json = R"({"lambda1":[0,0,0],"order":)" + std::to_string(order) + "}";
  s.dev_score = 61.5 + static_cast<double>(order) / 7.0;
  s.accepted = order % 2 == 0;
  s.best_so_far = 62.25;
  if (order > 0) {
    s.changed_coordinate = order % 6;
    s.delta = order % 2 ? 0.3 : -0.3;
  }
  s.seconds = 12.5;
  for (int q = 0; q < questions; ++q) s.predictions.push_back(make_prediction(q, q / 3.0));
  // Every other state records where its cache went (a layer-wise allocator's counts differ).
  if (order % 2 == 0)
    s.cache = CacheLayout{questions, 1.0 / 3.0 + order, 4096.5, 4096, {{0.1 + 0.2, 7}, {9.25, 2}}};
  // Each split names its binary: a run resumed on another build has states of both.
  s.git_commit = order < 2 ? "abc123def456" : "fedcba987654-dirty-0123456789ab";
  return s;
}

inline ReplayRecord make_replay(int questions = 4) {
  ReplayRecord r;
  r.score = 70.17;
  r.official_score = 70.25;
  r.seconds = 99.5;
  for (int q = 0; q < questions; ++q) r.predictions.push_back(make_prediction(100 + q, 0.5));
  r.cache = CacheLayout{questions, 40.5, 8192, 6144, {{12.5, 1.0 / 7.0}, {20, 7}}};
  r.cache->largest_entries = 287.75;  // as a decode-time policy records it
  r.cache->bound_entries = 288;
  r.git_commit = "0a1b2c3d4e5f";  // the test split's own build
  return r;
}

inline void expect_same(const RunSpec& a, const RunSpec& b) {
  EXPECT_EQ(a.key, b.key);
  EXPECT_EQ(a.job_key, b.job_key);
  EXPECT_EQ(a.model, b.model);
  EXPECT_EQ(a.model_path, b.model_path);
  EXPECT_EQ(a.dataset, b.dataset);
  EXPECT_EQ(a.longbench_dir, b.longbench_dir);
  EXPECT_EQ(a.split_seed, b.split_seed);
  EXPECT_EQ(a.dev_limit, b.dev_limit);
  EXPECT_EQ(a.budget, b.budget);
  EXPECT_EQ(a.profile_family, b.profile_family);
  EXPECT_EQ(a.segments, b.segments);
  EXPECT_EQ(a.search_json, b.search_json);
  EXPECT_EQ(a.policy_json, b.policy_json);
  EXPECT_EQ(a.git_commit, b.git_commit);
  EXPECT_EQ(a.build_type, b.build_type);
  EXPECT_EQ(a.command_line, b.command_line);
  EXPECT_EQ(a.host, b.host);
}

inline void expect_same(const std::vector<PredictionRecord>& a,
                        const std::vector<PredictionRecord>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].question_index, b[i].question_index);
    EXPECT_EQ(a[i].question_id, b[i].question_id);
    EXPECT_EQ(a[i].prediction, b[i].prediction);
    EXPECT_EQ(a[i].score, b[i].score);
    EXPECT_EQ(a[i].official_score, b[i].official_score);
    EXPECT_EQ(a[i].prompt_tokens, b[i].prompt_tokens);
    EXPECT_EQ(a[i].generated_tokens, b[i].generated_tokens);
    EXPECT_EQ(a[i].seconds, b[i].seconds);
  }
}

// Bit-exact: the store must give back the doubles it was given.
inline void expect_same(const StateRecord& a, const StateRecord& b) {
  EXPECT_EQ(a.eval_order, b.eval_order);
  EXPECT_EQ(a.latent, b.latent);
  EXPECT_EQ(a.lambda1, b.lambda1);
  EXPECT_EQ(a.lambda2, b.lambda2);
  EXPECT_EQ(a.policy_json, b.policy_json);
  EXPECT_EQ(a.dev_score, b.dev_score);
  EXPECT_EQ(a.accepted, b.accepted);
  EXPECT_EQ(a.best_so_far, b.best_so_far);
  EXPECT_EQ(a.changed_coordinate, b.changed_coordinate);
  EXPECT_EQ(a.delta, b.delta);
  EXPECT_EQ(a.seconds, b.seconds);
  expect_same(a.predictions, b.predictions);
  EXPECT_EQ(a.cache, b.cache);
  EXPECT_EQ(a.git_commit, b.git_commit);
}

// Runs `action`, which must throw a kvs::Error whose message contains every one of `parts`.
inline void expect_error(const std::function<void()>& action,
                         const std::vector<std::string>& parts) {
  try {
    action();
    ADD_FAILURE() << "no kvs::Error thrown; expected one mentioning '" << parts.front() << "'";
  } catch (const kvs::Error& e) {
    const std::string message = e.what();
    for (const std::string& part : parts)
      EXPECT_NE(message.find(part), std::string::npos)
          << "error '" << message << "' does not mention '" << part << "'";
    EXPECT_EQ(message.find('\n'), std::string::npos) << "error spans lines: " << message;
  }
}

}  // namespace kvs::store::test_support
