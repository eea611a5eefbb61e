// Every CPU kernel at every instruction-set level this machine supports (cpu/features.h), each
// against the same reference: the level's own path must agree with the fallback below it, so the
// fallbacks that a wide machine never picks by itself are run and checked here. The whole suite
// also runs under KVS_CPU=scalar and =avx2 (tests/cpu/CMakeLists.txt).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/gguf.h"
#include "cpu/features.h"
#include "cpu/flash_attention.h"
#include "cpu/gguf_dequantize.h"
#include "cpu/row_product.h"
#include "cpu/window_stats_avx512.h"
#include "evict/greedy_select.h"
#include "evict/window_stats.h"
#include "model/attention.h"

namespace kvs::test {
namespace {

using cpu::Level;

std::vector<Level> supported_levels() {
  std::vector<Level> levels;
  for (Level l : {Level::Scalar, Level::Avx2, Level::Avx512})
    if (static_cast<int>(l) <= static_cast<int>(cpu::hardware_level())) levels.push_back(l);
  return levels;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(CpuFeatures, NamesParseBackAndUnknownOnesNameTheField) {
  for (Level l : {Level::Scalar, Level::Avx2, Level::Avx512})
    EXPECT_EQ(cpu::parse_level(cpu::level_name(l), "KVS_CPU"), l);
  EXPECT_EQ(error_of([] { cpu::parse_level("sse9", "KVS_CPU=sse9"); }),
            "KVS_CPU=sse9: unknown CPU level 'sse9' (scalar, avx2 or avx512)");
  EXPECT_LE(static_cast<int>(cpu::level()), static_cast<int>(cpu::hardware_level()));
}

TEST(CpuFeatures, ALevelAboveTheHardwareIsRefusedAndScopesRestore) {
  const Level before = cpu::level();
  {
    cpu::ScopedLevel scalar(Level::Scalar);
    EXPECT_EQ(cpu::level(), Level::Scalar);
    EXPECT_FALSE(cpu::at_least(Level::Avx2));
  }
  EXPECT_EQ(cpu::level(), before);
  if (cpu::hardware_level() != Level::Avx512) {
    EXPECT_NE(error_of([] { cpu::set_level(Level::Avx512); }).find("this CPU supports at most"),
              std::string::npos);
    EXPECT_EQ(cpu::level(), before);
  }
}

// Each kernel reports itself available exactly at the levels it is built for.
TEST(CpuLevels, KernelsRunOnlyAtTheirLevel) {
  for (Level l : supported_levels()) {
    cpu::ScopedLevel scoped(l);
    SCOPED_TRACE(cpu::level_name(l));
    EXPECT_EQ(cpu::causal_attention_available(64), l == Level::Avx512);
    EXPECT_EQ(cpu::window_stats_avx512_available(), l == Level::Avx512);
    EXPECT_EQ(cpu::row_product_available(), l != Level::Scalar);
    if (l == Level::Scalar) {
      EXPECT_THROW(cpu::row_product(nullptr, 0, 0, nullptr, 0, 0, nullptr, 0), Error);
    }
  }
}

// Prefill attention as the runner calls it (Auto): at every level within float rounding of the
// blocked plain-ATen path.
TEST(CpuLevels, PrefillAttentionAgreesWithTheBlockedPathAtEveryLevel) {
  at::manual_seed(3);
  c10::InferenceMode inference;
  const at::Tensor q = at::randn({6, 130, 64}) * 0.6, k = at::randn({2, 130, 64}) * 0.6,
                   v = at::randn({2, 130, 64});
  model::PrefillAttentionOptions blocked;
  blocked.backend = model::AttentionBackend::Blocked;
  const at::Tensor want = model::prefill_attention(q, k, v, blocked);
  for (Level l : supported_levels()) {
    cpu::ScopedLevel scoped(l);
    const at::Tensor got = model::prefill_attention(q, k, v, model::PrefillAttentionOptions{});
    EXPECT_LE((got - want).abs().max().item<double>(), 2e-6) << cpu::level_name(l);
  }
}

// The window statistics as the observer calls them: at the scalar and AVX2 levels exactly the
// plain-ATen path; at AVX-512 the kernel, within float rounding of the float32 reference.
TEST(CpuLevels, WindowStatsAgreeWithTheReferenceAtEveryLevel) {
  at::manual_seed(4);
  const at::Tensor q = at::randn({9, 8, 64}) * 3, k = at::randn({3, 777, 64});
  const auto aten = evict::compute_window_stats_aten_cpu(q, k);
  const auto reference = evict::compute_window_stats_reference(q, k);
  for (Level l : supported_levels()) {
    cpu::ScopedLevel scoped(l);
    SCOPED_TRACE(cpu::level_name(l));
    const auto got = evict::compute_window_stats(q, k);
    if (l == Level::Avx512) {
      const double scale = reference.mu.max().item<double>();
      EXPECT_LE((got.mu - reference.mu).abs().max().item<double>(), 1e-5 * scale);
      EXPECT_LE((got.sigma - reference.sigma).abs().max().item<double>(), 1e-5 * scale);
    } else {
      EXPECT_TRUE(at::equal(got.mu, aten.mu));
      EXPECT_TRUE(at::equal(got.sigma, aten.sigma));
    }
  }
}

// The greedy admission's baseline and AVX2 twins round identically: the same kept sets, bit for
// bit, at both signs of lambda2 (the eager and the lazy loop).
TEST(CpuLevels, GreedyAdmissionKeepsTheSameSetsAtEveryLevel) {
  at::manual_seed(5);
  const at::Tensor scores = at::rand({6, 500}), keys = at::randn({6, 500, 40});
  for (const double lambda2 : {0.7, -0.4}) {
    at::Tensor first;
    for (Level l : supported_levels()) {
      cpu::ScopedLevel scoped(l);
      const at::Tensor kept = evict::select_greedy(scores, keys, 48, lambda2, 3);
      if (!first.defined())
        first = kept;
      else
        EXPECT_TRUE(at::equal(kept, first)) << cpu::level_name(l) << " lambda2 " << lambda2;
    }
  }
}

// GGUF blocks dequantized at every level: the AVX2 lanes equal the scalar formula bit for bit.
TEST(CpuLevels, DequantizationIsBitIdenticalAtEveryLevel) {
  std::mt19937 rng(6);
  std::vector<uint8_t> q41(20 * 64), q80(34 * 64);
  for (auto& b : q41) b = static_cast<uint8_t>(rng());
  for (auto& b : q80) b = static_cast<uint8_t>(rng());
  for (size_t i = 0; i < 64; ++i) {  // finite scales: half exponents below 0x1f
    q41[i * 20 + 1] &= 0x3b;
    q41[i * 20 + 3] &= 0x3b;
    q80[i * 34 + 1] &= 0x3b;
  }
  const auto run = [&](uint32_t type, const std::vector<uint8_t>& blocks) {
    std::vector<float> out(32 * 64);
    cpu::dequantize_blocks(type, blocks.data(), 64, out.data());
    return out;
  };
  const uint32_t t41 = static_cast<uint32_t>(gguf::TensorType::Q4_1);
  const uint32_t t80 = static_cast<uint32_t>(gguf::TensorType::Q8_0);
  std::vector<float> want41, want80;
  {
    cpu::ScopedLevel scalar(Level::Scalar);
    want41 = run(t41, q41);
    want80 = run(t80, q80);
  }
  for (Level l : supported_levels()) {
    cpu::ScopedLevel scoped(l);
    EXPECT_EQ(std::memcmp(run(t41, q41).data(), want41.data(), want41.size() * 4), 0)
        << cpu::level_name(l);
    EXPECT_EQ(std::memcmp(run(t80, q80).data(), want80.data(), want80.size() * 4), 0)
        << cpu::level_name(l);
  }
}

}  // namespace
}  // namespace kvs::test
