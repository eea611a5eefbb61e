// `kvsearch select` driven through the built binary: a good run against the library, and one
// clear error line with exit status 1 for each kind of bad input.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "core/safetensors.h"
#include "evict/layer_selection.h"
#include "evict/policy.h"
#include "common/scratch_dir.h"

namespace {

struct CliRun {
  int status;
  std::string output;  // stdout and stderr
};

CliRun run(const std::string& args) {
  const char* bin = std::getenv("KVSEARCH_BIN");
  if (!bin || !*bin) bin = KVSEARCH_BUILT_BIN;
  FILE* pipe = popen((std::string(bin) + " " + args + " 2>&1").c_str(), "r");
  std::string out;
  std::array<char, 4096> buffer;
  while (size_t got = fread(buffer.data(), 1, buffer.size(), pipe)) out.append(buffer.data(), got);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

class SelectCli : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return scratch_.file(name); }

  std::string write_tensors(const std::string& name,
                            const std::vector<std::pair<std::string, at::Tensor>>& tensors) {
    kvs::SafetensorsWriter writer;
    for (const auto& [tensor_name, t] : tensors) {
      const at::Tensor c = t.to(at::kFloat).contiguous();
      writer.add(tensor_name, kvs::DType::F32, c.sizes().vec(), c.data_ptr<float>(), c.nbytes());
    }
    writer.write(path(name));
    return path(name);
  }

  std::string write_policy(const std::string& name, const nlohmann::json& policy) {
    std::ofstream(path(name)) << policy.dump();
    return path(name);
  }

  // Expects exit status 1 and exactly one line that contains `needle`.
  void expect_error(const std::string& args, const std::string& needle) {
    const CliRun r = run(args);
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find(needle), std::string::npos) << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
    EXPECT_EQ(r.output.rfind("error: ", 0), 0u) << r.output;
  }

  kvs::test::ScratchDir scratch_;
};

TEST_F(SelectCli, WritesTheKeptPositionsOfEachHead) {
  at::manual_seed(12);
  const at::Tensor q = at::randn({4, 8, 16}), k = at::randn({2, 120, 16});
  const std::string tensors = write_tensors("in.safetensors", {{"q_window", q}, {"keys", k}});
  const kvs::evict::Policy policy = kvs::evict::global_policy(24, 0.2, -0.3);
  const std::string policy_file = write_policy("p.json", kvs::evict::policy_to_json(policy));
  const CliRun r = run("select --tensors " + tensors + " --policy " + policy_file +
                       " --layer 5 --num-layers 32 --out " + path("out.json"));
  ASSERT_EQ(r.status, 0) << r.output;
  const auto json = nlohmann::json::parse(std::ifstream(path("out.json")));
  const at::Tensor expected = kvs::evict::select_layer(q, k, {policy}, 5, 32).front();
  ASSERT_EQ(json.at("kept").size(), 4u);
  for (int64_t h = 0; h < 4; ++h) {
    const auto kept = json["kept"][h].get<std::vector<int64_t>>();
    const at::Tensor row = expected[h].contiguous();
    EXPECT_EQ(kept,
              std::vector<int64_t>(row.data_ptr<int64_t>(), row.data_ptr<int64_t>() + row.numel()));
  }
}

TEST_F(SelectCli, BadInputIsOneClearErrorLine) {
  const at::Tensor q = at::randn({4, 8, 16}), k = at::randn({2, 120, 16});
  const std::string policy =
      write_policy("p.json", {{"kind", "topk"}, {"budget", 32}, {"schedule", "uniform"}});
  const auto select = [&](const std::string& tensors, const std::string& policy_file) {
    return "select --tensors " + tensors + " --policy " + policy_file + " --out " +
           path("out.json");
  };
  expect_error(
      select(write_tensors("rank.safetensors", {{"q_window", q.flatten(0, 1)}, {"keys", k}}),
             policy),
      "q_window\": expected 3 dimensions");
  expect_error(
      select(write_tensors("heads.safetensors", {{"q_window", at::randn({3, 8, 16})}, {"keys", k}}),
             policy),
      "not a multiple of the 2 KV heads");
  expect_error(
      select(write_tensors("dim.safetensors", {{"q_window", at::randn({4, 8, 12})}, {"keys", k}}),
             policy),
      "head_dim");
  at::Tensor bad = k.clone();
  bad[1][7][3] = std::numeric_limits<float>::quiet_NaN();
  expect_error(select(write_tensors("nan.safetensors", {{"q_window", q}, {"keys", bad}}), policy),
               "keys: contains NaN or infinite values");
  expect_error(select(write_tensors("missing.safetensors", {{"q_window", q}}), policy),
               "\"keys\": missing");
  expect_error(
      select(write_tensors("window.safetensors", {{"q_window", q.narrow(1, 0, 4)}, {"keys", k}}),
             policy),
      "window");
  const std::string good = write_tensors("good.safetensors", {{"q_window", q}, {"keys", k}});
  expect_error(
      select(good, write_policy("small.json",
                                {{"kind", "topk"}, {"budget", 7}, {"schedule", "uniform"}})),
      "budget: must hold the window");
  expect_error(
      select(good,
             write_policy("typo.json", {{"kind", "topk"}, {"budget", 32}, {"shedule", "uniform"}})),
      "schedule");
  expect_error(select(good, policy) + " --layer 32 --num-layers 32", "layer");
}

}  // namespace
