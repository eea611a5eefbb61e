#include "model/runner_bench.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <array>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"
#include "core/log.h"
#include "core/timer.h"
#include "model/generate.h"
#include "model/transformer.h"

namespace kvs::model {

namespace {

// VmRSS / VmHWM from /proc/self/status, in bytes (0 where unavailable).
int64_t proc_status_kb(const std::string& key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key + ":", 0) == 0) return std::stoll(line.substr(key.size() + 1)) * 1024;
  return 0;
}

void reset_peak_rss() { std::ofstream("/proc/self/clear_refs") << "5"; }

void synchronize(at::Device device) {
  if (device.is_cuda()) at::zeros({1}, at::TensorOptions().device(device)).cpu();
}

template <typename F>
double best_seconds(int repeats, at::Device device, F&& work) {
  double best = 1e30;
  for (int i = 0; i < repeats; ++i) {
    synchronize(device);
    Timer timer;
    work();
    synchronize(device);
    best = std::min(best, timer.seconds());
  }
  return best;
}

// The best sgemm (or the run dtype's gemm) rate the BLAS reaches here: over a square 2048 product
// and the model's own prefill shapes at this prompt length, so the prefill fraction compares
// like with like.
double measure_gemm_peak_gflops(at::Device device, at::ScalarType dtype, const ModelConfig& c,
                                int64_t tokens, int repeats) {
  const auto opts = at::TensorOptions().device(device).dtype(dtype);
  const int64_t h = c.hidden_size, inter = c.intermediate_size;
  const int64_t qkv = c.head_dim * (c.num_attention_heads + 2 * c.num_key_value_heads);
  const std::vector<std::array<int64_t, 3>> shapes = {
      {2048, 2048, 2048}, {tokens, h, qkv}, {tokens, h, inter}, {tokens, inter, h}};
  double best = 0;
  for (const auto& [m, k, n] : shapes) {
    const at::Tensor a = at::randn({m, k}, opts), b = at::randn({k, n}, opts);
    at::Tensor out = at::mm(a, b);  // warm-up
    const double s = best_seconds(repeats + 2, device, [&] { out = at::mm(a, b); });
    best = std::max(best, 2.0 * static_cast<double>(m) * k * n / s / 1e9);
  }
  return best;
}

double measure_read_bandwidth_gbps(at::Device device, int repeats) {
  const int64_t bytes = int64_t{512} << 20;
  const at::Tensor t = at::ones({bytes / 4}, at::TensorOptions().device(device).dtype(at::kFloat));
  at::Tensor total = t.sum();
  const double s = best_seconds(repeats + 2, device, [&] { total = t.sum(); });
  return static_cast<double>(bytes) / s / 1e9;
}

int64_t dtype_bytes(at::ScalarType t) { return static_cast<int64_t>(c10::elementSize(t)); }

}  // namespace

RunnerBenchResult bench_runner(const RunnerBenchOptions& options) {
  if (options.prompt_tokens < 1 || options.new_tokens < 1)
    throw Error("bench runner: --prompt-tokens and --new-tokens must be positive");
  const Transformer model = Transformer::load(options.model_dir, options.load);
  const ModelConfig& c = model.config();
  if (options.prompt_tokens + options.new_tokens > c.max_position_embeddings)
    throw Error("bench runner: prompt + new tokens exceed max_position_embeddings");
  RunnerBenchResult r;
  r.device = model.device().str();
  r.dtype = c10::toString(model.dtype());
  r.torch_version = torch_version();
  r.threads = at::get_num_threads();
  r.prompt_tokens = options.prompt_tokens;
  r.new_tokens = options.new_tokens;
  r.parameters = c.parameter_count();

  // A fixed pseudo-random prompt: token ids spread over the vocabulary.
  std::vector<int32_t> ids(static_cast<size_t>(options.prompt_tokens));
  for (size_t i = 0; i < ids.size(); ++i)
    ids[i] = static_cast<int32_t>((i * 7919 + 13) % static_cast<size_t>(c.vocab_size));
  ids[0] = static_cast<int32_t>(c.bos_token_id);

  PrefillOptions prefill;
  prefill.decode_capacity = options.new_tokens;
  model.prefill(std::vector<int32_t>(ids.begin(), ids.begin() + std::min<size_t>(ids.size(), 64)),
                prefill);  // warm-up
  const int64_t rss_before = proc_status_kb("VmRSS");
  reset_peak_rss();
  PrefillResult pre;
  r.prefill_seconds = best_seconds(options.repeats, model.device(), [&] {
    pre = PrefillResult();
    pre = model.prefill(ids, prefill);
  });
  r.prefill_peak_extra_bytes = std::max<int64_t>(0, proc_status_kb("VmHWM") - rss_before);
  const double n = static_cast<double>(options.prompt_tokens);
  const double layer_matmul_params =
      static_cast<double>(c.hidden_size) * c.head_dim * (2 * c.num_attention_heads + 2 * c.num_key_value_heads) +
      3.0 * c.hidden_size * c.intermediate_size;
  // Causal attention: QK^T and PV over n(n+1)/2 query-key pairs per head.
  const double attention_flops = 2.0 * 2.0 * c.num_attention_heads * c.head_dim * n * (n + 1) / 2;
  const double prefill_flops = c.num_hidden_layers * (2.0 * n * layer_matmul_params + attention_flops) +
                               2.0 * c.vocab_size * c.hidden_size;
  r.prefill_tokens_per_s = n / r.prefill_seconds;
  r.prefill_gflops = prefill_flops / r.prefill_seconds / 1e9;

  GreedyOptions greedy;
  greedy.max_new_tokens = options.new_tokens;  // no stop ids: every step runs
  double decode_best = 1e30;
  for (int i = 0; i < options.repeats; ++i) {
    PrefillResult fresh = model.prefill(ids, prefill);
    synchronize(model.device());
    Timer timer;
    const GreedyResult out = greedy_decode(model, fresh.cache, fresh.logits, greedy);
    synchronize(model.device());
    // The first token comes from the prefill's logits: steps - 1 forward passes were timed.
    decode_best = std::min(decode_best, timer.seconds() / std::max<int64_t>(1, out.steps - 1));
  }
  r.decode_seconds_per_token = decode_best;
  r.decode_tokens_per_s = 1.0 / decode_best;
  // Bytes every decode step must read: all layer weights, the final norm, the LM head, and the
  // keys and values cached so far (the prompt plus, on average, half the new tokens).
  const double elem = static_cast<double>(dtype_bytes(model.dtype()));
  const double mean_cached = n + 0.5 * static_cast<double>(options.new_tokens);
  r.decode_bytes = elem * (c.num_hidden_layers * (layer_matmul_params + 2.0 * c.hidden_size) +
                           c.hidden_size + static_cast<double>(c.vocab_size) * c.hidden_size) +
                   elem * 2.0 * c.num_hidden_layers * c.num_key_value_heads * c.head_dim * mean_cached;
  r.decode_gbps = r.decode_bytes / decode_best / 1e9;

  r.sgemm_peak_gflops =
      measure_gemm_peak_gflops(model.device(), model.dtype(), c, options.prompt_tokens, options.repeats);
  r.memory_bandwidth_gbps = measure_read_bandwidth_gbps(model.device(), options.repeats);
  r.prefill_sgemm_fraction = r.prefill_gflops / r.sgemm_peak_gflops;
  r.decode_bandwidth_fraction = r.decode_gbps / r.memory_bandwidth_gbps;
  r.peak_rss_bytes = proc_status_kb("VmHWM");
  return r;
}

std::string runner_bench_json(const RunnerBenchResult& r) {
  nlohmann::ordered_json j;
  j["device"] = r.device;
  j["dtype"] = r.dtype;
  j["torch_version"] = r.torch_version;
  j["threads"] = r.threads;
  j["parameters"] = r.parameters;
  j["prompt_tokens"] = r.prompt_tokens;
  j["new_tokens"] = r.new_tokens;
  j["prefill_seconds"] = r.prefill_seconds;
  j["prefill_tokens_per_s"] = r.prefill_tokens_per_s;
  j["prefill_gflops"] = r.prefill_gflops;
  j["sgemm_peak_gflops"] = r.sgemm_peak_gflops;
  j["prefill_sgemm_fraction"] = r.prefill_sgemm_fraction;
  j["decode_tokens_per_s"] = r.decode_tokens_per_s;
  j["decode_gbps"] = r.decode_gbps;
  j["memory_bandwidth_gbps"] = r.memory_bandwidth_gbps;
  j["decode_bandwidth_fraction"] = r.decode_bandwidth_fraction;
  j["prefill_peak_extra_bytes"] = r.prefill_peak_extra_bytes;
  j["peak_rss_bytes"] = r.peak_rss_bytes;
  return j.dump(2);
}

std::string runner_bench_table(const RunnerBenchResult& r) {
  std::ostringstream out;
  out << strfmt("model: %.1fM parameters, %s %s, %d threads, LibTorch %s\n", r.parameters / 1e6,
                r.device.c_str(), r.dtype.c_str(), r.threads, r.torch_version.c_str());
  out << strfmt("%-8s %-28s %-28s %s\n", "", "measured", "machine baseline", "fraction");
  out << strfmt("%-8s %8.1f tok/s %8.1f GFLOP/s  sgemm peak %8.1f GFLOP/s  %5.1f%%\n", "prefill",
                r.prefill_tokens_per_s, r.prefill_gflops, r.sgemm_peak_gflops,
                100 * r.prefill_sgemm_fraction);
  out << strfmt("%-8s %8.1f tok/s %8.2f GB/s     read bandwidth %6.2f GB/s  %5.1f%%\n", "decode",
                r.decode_tokens_per_s, r.decode_gbps, r.memory_bandwidth_gbps,
                100 * r.decode_bandwidth_fraction);
  out << strfmt("memory: prefill of %lld tokens added %.1f MiB at its peak; process peak %.1f MiB\n",
                static_cast<long long>(r.prompt_tokens), r.prefill_peak_extra_bytes / 1048576.0,
                r.peak_rss_bytes / 1048576.0);
  return out.str();
}

}  // namespace kvs::model
