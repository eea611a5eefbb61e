#include "bench/runner_bench.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "core/checkpoint.h"
#include "core/error.h"
#include "core/log.h"
#include "core/timer.h"
#include "model/generate.h"
#include "model/transformer.h"

namespace kvs::bench {

// The runner benchmark speaks the runner's vocabulary (Transformer, PrefillOptions, ...).
using namespace model;

namespace {

// A field of /proc/self/status (VmRSS, VmHWM) in bytes, 0 where unavailable.
int64_t proc_status_bytes(const std::string& key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key + ":", 0) == 0) return std::stoll(line.substr(key.size() + 1)) * 1024;
  return 0;
}

void reset_peak_rss() { std::ofstream("/proc/self/clear_refs") << "5"; }

// Bytes the C allocator has handed out and not had back (its heap and its mapped blocks), or -1
// where it cannot tell.
int64_t heap_bytes_in_use() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const struct mallinfo2 info = mallinfo2();
  return static_cast<int64_t>(info.uordblks + info.hblkhd);
#else
  return -1;
#endif
}

// The largest heap_bytes_in_use() while it lives, read every millisecond by a thread of its own:
// what a piece of work holds at once, whatever the allocator kept from earlier work (the resident
// size's growth depends on that: the freed blocks of a shorter prompt absorb part of a longer
// one's). No block that could matter here is allocated, filled and freed within a millisecond.
class HeapPeak {
 public:
  HeapPeak()
      : peak_(heap_bytes_in_use()), sampler_([this] {
          while (!done_) {
            peak_ = std::max<int64_t>(peak_, heap_bytes_in_use());
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
          }
        }) {}
  ~HeapPeak() { stop(); }
  int64_t stop() {
    if (sampler_.joinable()) {
      done_ = true;
      sampler_.join();
      peak_ = std::max<int64_t>(peak_, heap_bytes_in_use());
    }
    return peak_;
  }

 private:
  std::atomic<bool> done_{false};
  int64_t peak_;
  std::thread sampler_;
};

// The weight files' size: the .gguf file, or an HF directory's safetensors shards.
int64_t checkpoint_bytes(const std::string& model_arg) {
  const Checkpoint checkpoint = resolve_checkpoint(model_arg);
  if (checkpoint.kind == CheckpointKind::gguf)
    return static_cast<int64_t>(std::filesystem::file_size(checkpoint.path));
  int64_t total = 0;
  for (const auto& entry : std::filesystem::directory_iterator(checkpoint.path))
    if (entry.path().extension() == ".safetensors")
      total += static_cast<int64_t>(entry.file_size());
  return total;
}

// The best rate of the run dtype's gemm on the model's own prefill shapes at this prompt length
// (QKV, gate/up, down), so that the prefill fraction compares like with like.
double probe_prefill_gemm(at::Device device, at::ScalarType dtype, const ModelConfig& c,
                          int64_t tokens) {
  const int64_t h = c.hidden_size, inter = c.intermediate_size;
  const int64_t qkv = c.head_dim * (c.num_attention_heads + 2 * c.num_key_value_heads);
  return std::max({gemm_gflops(device, dtype, 1, tokens, h, qkv),
                   gemm_gflops(device, dtype, 1, tokens, h, inter),
                   gemm_gflops(device, dtype, 1, tokens, inter, h)});
}

}  // namespace

std::vector<int32_t> runner_bench_prompt(int64_t tokens, int64_t vocab_size, int64_t bos_id) {
  std::vector<int32_t> ids(static_cast<size_t>(tokens));
  for (size_t i = 0; i < ids.size(); ++i)
    ids[i] = static_cast<int32_t>((i * 7919 + 13) % static_cast<size_t>(vocab_size));
  if (!ids.empty()) ids[0] = static_cast<int32_t>(bos_id);
  return ids;
}

namespace {

// One checkpoint of a run: the model, its result, and per prompt length its prompt and the
// repeats' figures so far.
struct RunnerUnderTest {
  const Transformer model;
  RunnerBenchResult r;
  struct Length {
    std::vector<int32_t> ids;
    std::vector<double> seconds, rate, fraction, decode_ms, decode_fraction;
  };
  std::vector<Length> lengths;
};

// The figures of a prompt length that need no timing, and the peak memory of an untimed prefill
// (also the warm-up), before any probe allocates.
RunnerLengthResult untimed_length(const RunnerUnderTest& t, int64_t tokens,
                                  const RunnerBenchOptions& options, const PrefillOptions& prefill,
                                  const std::vector<int32_t>& ids) {
  const ModelConfig& c = t.model.config();
  const double elem = static_cast<double>(c10::elementSize(t.model.dtype()));
  const double layer_matmul_params = static_cast<double>(c.hidden_size) * c.head_dim *
                                         (2 * c.num_attention_heads + 2 * c.num_key_value_heads) +
                                     3.0 * c.hidden_size * c.intermediate_size;
  RunnerLengthResult L;
  L.prompt_tokens = tokens;
  const double n = static_cast<double>(tokens);
  // Causal attention: QK^T and PV over n(n+1)/2 query-key pairs per head.
  const double attention_flops = 2.0 * 2.0 * c.num_attention_heads * c.head_dim * n * (n + 1) / 2;
  L.prefill_gflop = (c.num_hidden_layers * (2.0 * n * layer_matmul_params + attention_flops) +
                     2.0 * c.vocab_size * c.hidden_size) /
                    1e9;
  // Bytes every decode step reads: the weights as decode streams them (a GGUF file's stored
  // blocks where it keeps them), and the keys and values cached so far (the prompt plus, on
  // average, half the new tokens).
  const double mean_cached = n + 0.5 * static_cast<double>(options.new_tokens);
  L.decode_bytes = static_cast<double>(t.r.decode_weight_bytes) + elem * 2.0 * c.num_hidden_layers *
                                                                      c.num_key_value_heads *
                                                                      c.head_dim * mean_cached;

  const at::Device device = t.model.device();
  synchronize_device(device);
  const int64_t rss_before = proc_status_bytes("VmRSS");
  reset_peak_rss();
  const int64_t heap_before = heap_bytes_in_use();
  HeapPeak heap_peak;
  t.model.prefill(ids, prefill);
  const int64_t heap_peak_bytes = heap_peak.stop();
  L.prefill_peak_extra_bytes = std::max<int64_t>(0, proc_status_bytes("VmHWM") - rss_before);
  L.prefill_peak_heap_bytes =
      heap_before < 0 ? -1 : std::max<int64_t>(0, heap_peak_bytes - heap_before);
  // The bound: the full KV cache, a dozen [n, width] activations of one layer (hidden states,
  // projections, RoPE temporaries, the attention output), the MLP's row chunk and 64 MiB of
  // allocator slack. One layer's n x n scores alone would exceed it at these lengths.
  const double width =
      static_cast<double>(std::max(c.hidden_size, c.num_attention_heads * c.head_dim));
  const double block = static_cast<double>(std::min<int64_t>(prefill.block_size, tokens));
  L.prefill_memory_bound_bytes = static_cast<int64_t>(
      elem * 2.0 * c.num_hidden_layers * c.num_key_value_heads * c.head_dim *
          (n + options.new_tokens) +
      elem * 12.0 * n * width + elem * 4.0 * block * c.intermediate_size + (64 << 20));
  L.attention_matrix_bytes = static_cast<int64_t>(4.0 * c.num_attention_heads * n * n);
  return L;
}

}  // namespace

std::vector<RunnerBenchResult> bench_runners(const std::vector<std::string>& models,
                                             const RunnerBenchOptions& options) {
  if (options.prompt_tokens.empty()) throw Error("bench runner: --prompt-tokens lists no length");
  for (int64_t n : options.prompt_tokens)
    if (n < 1)
      throw Error(strfmt("bench runner: --prompt-tokens %lld is not positive", (long long)n));
  if (options.new_tokens < 2)
    throw Error("bench runner: --new-tokens must be at least 2 (the first comes from the prefill)");
  if (options.repeats < 1) throw Error("bench runner: --repeats must be positive");
  std::vector<std::unique_ptr<RunnerUnderTest>> runs;
  for (const std::string& model_arg : models) {
    const Timer load_timer;
    runs.push_back(std::unique_ptr<RunnerUnderTest>(
        new RunnerUnderTest{Transformer::load(model_arg, options.load), {}, {}}));
    RunnerBenchResult& r = runs.back()->r;
    const Transformer& model = runs.back()->model;
    r.load_seconds = load_timer.seconds();
    r.checkpoint_bytes = checkpoint_bytes(model_arg);
    r.decode_weight_bytes = decode_weight_bytes(model.weights());
    r.stored_blocks =
        !model.weights().layers.empty() && model.weights().layers[0].blocks.q_proj.present();
    const ModelConfig& c = model.config();
    for (int64_t n : options.prompt_tokens)
      if (n + options.new_tokens > c.max_position_embeddings)
        throw Error(strfmt(
            "bench runner: %lld prompt + %lld new tokens exceed max_position_embeddings %lld",
            (long long)n, (long long)options.new_tokens, (long long)c.max_position_embeddings));
    r.device = model.device().str();
    r.dtype = c10::toString(model.dtype());
    r.torch_version = torch_version();
    r.threads = at::get_num_threads();
    r.repeats = options.repeats;
    r.new_tokens = options.new_tokens;
    r.parameters = c.parameter_count();
  }

  PrefillOptions prefill;
  prefill.decode_capacity = options.new_tokens;
  GreedyOptions greedy;
  greedy.max_new_tokens = options.new_tokens;  // no stop ids: every step runs
  std::vector<std::vector<double>> all_sgemm(runs.size()), all_bandwidth(runs.size());
  for (int64_t tokens : options.prompt_tokens) {
    for (auto& t : runs) {
      const ModelConfig& c = t->model.config();
      RunnerUnderTest::Length length;
      length.ids = runner_bench_prompt(tokens, c.vocab_size, c.bos_token_id);
      t->r.lengths.push_back(untimed_length(*t, tokens, options, prefill, length.ids));
      t->lengths.push_back(std::move(length));
    }
    // Repeat by repeat, every checkpoint in turn: the checkpoints of one run meet the same load.
    for (int rep = 0; rep < options.repeats; ++rep) {
      for (size_t m = 0; m < runs.size(); ++m) {
        RunnerUnderTest& t = *runs[m];
        const at::Device device = t.model.device();
        RunnerLengthResult& L = t.r.lengths.back();
        RunnerUnderTest::Length& length = t.lengths.back();
        const double n = static_cast<double>(tokens);
        const double sgemm = probe_prefill_gemm(device, t.model.dtype(), t.model.config(), tokens);
        synchronize_device(device);
        const Timer prefill_timer;
        PrefillResult pre = t.model.prefill(length.ids, prefill);
        synchronize_device(device);
        const double s = prefill_timer.seconds();
        length.seconds.push_back(s);
        length.rate.push_back(n / s);
        length.fraction.push_back(L.prefill_gflop / s / sgemm);

        const double bandwidth = read_bandwidth_gbps(device);
        synchronize_device(device);
        const Timer decode_timer;
        const GreedyResult out = greedy_decode(t.model, pre.cache, pre.logits, greedy);
        synchronize_device(device);
        // The first token comes from the prefill's logits: steps - 1 forward passes were timed.
        const double per_token = decode_timer.seconds() / std::max<int64_t>(1, out.steps - 1);
        length.decode_ms.push_back(per_token * 1e3);
        length.decode_fraction.push_back(L.decode_bytes / per_token / 1e9 / bandwidth);
        all_sgemm[m].push_back(sgemm);
        all_bandwidth[m].push_back(bandwidth);
      }
    }
    for (auto& t : runs) {
      RunnerLengthResult& L = t->r.lengths.back();
      const RunnerUnderTest::Length& length = t->lengths.back();
      L.prefill_seconds = spread_of(length.seconds);
      L.prefill_tokens_per_s = spread_of(length.rate);
      L.prefill_sgemm_fraction = spread_of(length.fraction);
      L.decode_ms_per_token = spread_of(length.decode_ms);
      L.decode_bandwidth_fraction = spread_of(length.decode_fraction);
    }
  }
  std::vector<RunnerBenchResult> results;
  for (size_t m = 0; m < runs.size(); ++m) {
    RunnerBenchResult& r = runs[m]->r;
    r.sgemm_gflops = spread_of(all_sgemm[m]);
    r.read_bandwidth_gbps = spread_of(all_bandwidth[m]);
    r.peak_rss_bytes = proc_status_bytes("VmHWM");
    results.push_back(std::move(r));
  }
  return results;
}

RunnerBenchResult bench_runner(const RunnerBenchOptions& options) {
  return bench_runners({options.model_dir}, options).front();
}

namespace {

nlohmann::ordered_json spread_json(const Spread& s) {
  nlohmann::ordered_json j;
  j["median"] = s.median;
  j["low"] = s.low;
  j["high"] = s.high;
  return j;
}

std::string spread_text(const Spread& s, const char* format) {
  return strfmt(format, s.median) + " [" + strfmt(format, s.low) + ", " + strfmt(format, s.high) +
         "]";
}

}  // namespace

std::string runner_bench_json(const RunnerBenchResult& r) {
  nlohmann::ordered_json j;
  j["device"] = r.device;
  j["dtype"] = r.dtype;
  j["torch_version"] = r.torch_version;
  j["threads"] = r.threads;
  j["repeats"] = r.repeats;
  j["parameters"] = r.parameters;
  j["new_tokens"] = r.new_tokens;
  j["load_seconds"] = r.load_seconds;
  j["checkpoint_bytes"] = r.checkpoint_bytes;
  j["decode_weight_bytes"] = r.decode_weight_bytes;
  j["decode_streams_stored_blocks"] = r.stored_blocks;
  j["sgemm_gflops"] = spread_json(r.sgemm_gflops);
  j["read_bandwidth_gbps"] = spread_json(r.read_bandwidth_gbps);
  j["lengths"] = nlohmann::ordered_json::array();
  for (const RunnerLengthResult& L : r.lengths) {
    nlohmann::ordered_json l;
    l["prompt_tokens"] = L.prompt_tokens;
    l["prefill_gflop"] = L.prefill_gflop;
    l["prefill_seconds"] = spread_json(L.prefill_seconds);
    l["prefill_tokens_per_s"] = spread_json(L.prefill_tokens_per_s);
    l["prefill_sgemm_fraction"] = spread_json(L.prefill_sgemm_fraction);
    l["decode_ms_per_token"] = spread_json(L.decode_ms_per_token);
    l["decode_bandwidth_fraction"] = spread_json(L.decode_bandwidth_fraction);
    l["decode_bytes"] = L.decode_bytes;
    l["prefill_peak_extra_bytes"] = L.prefill_peak_extra_bytes;
    l["prefill_peak_heap_bytes"] = L.prefill_peak_heap_bytes;
    l["prefill_memory_bound_bytes"] = L.prefill_memory_bound_bytes;
    l["attention_matrix_bytes"] = L.attention_matrix_bytes;
    j["lengths"].push_back(l);
  }
  j["peak_rss_bytes"] = r.peak_rss_bytes;
  return j.dump(2);
}

std::string runner_bench_table(const RunnerBenchResult& r) {
  constexpr double MiB = 1048576.0;
  std::ostringstream out;
  out << strfmt(
      "model: %.1fM parameters, %s %s, %d threads, LibTorch %s; median [low, high] of %d "
      "interleaved repeats\n",
      r.parameters / 1e6, r.device.c_str(), r.dtype.c_str(), r.threads, r.torch_version.c_str(),
      r.repeats);
  out << strfmt("load: %.2f s for %.1f MiB of weight files (%.0f MiB/s)\n", r.load_seconds,
                r.checkpoint_bytes / MiB, r.checkpoint_bytes / MiB / r.load_seconds);
  out << strfmt(
      "decode: reads %.1f MiB of weights per step%s\n", r.decode_weight_bytes / MiB,
      r.stored_blocks ? " (the GGUF file's quantized blocks, dequantized as they stream)" : "");
  out << "machine: sgemm " << spread_text(r.sgemm_gflops, "%.1f") << " GFLOP/s, read bandwidth "
      << spread_text(r.read_bandwidth_gbps, "%.1f") << " GB/s\n";
  for (const RunnerLengthResult& L : r.lengths) {
    out << strfmt("%lld tokens:\n", static_cast<long long>(L.prompt_tokens));
    out << "  prefill  " << spread_text(L.prefill_tokens_per_s, "%.1f") << " tok/s, "
        << spread_text(L.prefill_seconds, "%.3f") << " s, of the sgemm probe "
        << spread_text(L.prefill_sgemm_fraction, "%.3f") << "\n";
    out << "  decode   " << spread_text(L.decode_ms_per_token, "%.2f")
        << " ms/token, of the read bandwidth " << spread_text(L.decode_bandwidth_fraction, "%.3f")
        << "\n";
    // The bound is checked on the heap the prefill held; the resident growth, which also counts
    // the allocator's fragmentation and so what ran before, is shown beside it (and beside HF's).
    const bool counted = L.prefill_peak_heap_bytes >= 0;
    const int64_t held = counted ? L.prefill_peak_heap_bytes : L.prefill_peak_extra_bytes;
    out << strfmt(
        "  memory   prefill held %.1f MiB at its peak (%s); bound %.1f MiB (%s); "
        "resident growth %.1f MiB; one layer's n x n scores: %.1f MiB\n",
        held / MiB, counted ? "heap, read every ms" : "resident growth",
        L.prefill_memory_bound_bytes / MiB,
        held <= L.prefill_memory_bound_bytes ? "within" : "EXCEEDED",
        L.prefill_peak_extra_bytes / MiB, L.attention_matrix_bytes / MiB);
  }
  out << strfmt("process peak %.1f MiB\n", r.peak_rss_bytes / MiB);
  return out.str();
}

std::string runner_bench_comparison(const std::vector<NamedRunnerResult>& runs) {
  std::ostringstream out;
  if (runs.size() < 2) return "";
  const NamedRunnerResult& base = runs.front();
  for (size_t i = 1; i < runs.size(); ++i) {
    const NamedRunnerResult& run = runs[i];
    for (size_t l = 0; l < run.result.lengths.size() && l < base.result.lengths.size(); ++l) {
      const RunnerLengthResult& a = run.result.lengths[l];
      const RunnerLengthResult& b = base.result.lengths[l];
      out << strfmt(
          "%s vs %s at %lld tokens: prefill %.3f x the time (of the sgemm probe %.3f vs %.3f), "
          "decode %.3f x the ms/token (of the read bandwidth %.3f vs %.3f)\n",
          run.model.c_str(), base.model.c_str(), static_cast<long long>(a.prompt_tokens),
          a.prefill_seconds.median / b.prefill_seconds.median, a.prefill_sgemm_fraction.median,
          b.prefill_sgemm_fraction.median,
          a.decode_ms_per_token.median / b.decode_ms_per_token.median,
          a.decode_bandwidth_fraction.median, b.decode_bandwidth_fraction.median);
    }
  }
  return out.str();
}

}  // namespace kvs::bench
