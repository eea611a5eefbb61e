// model::project splits decode-sized products over the intra-op threads by output rows (with the
// row_product kernel where the CPU has AVX2); it must give at::linear's result for every shape the
// runner passes it, and leave autograd to at::linear.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/GradMode.h>
#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "cpu/row_product.h"
#include "model/layers.h"
#include "model/rope.h"

namespace kvs::test {
namespace {

class ThreadedProjection : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_threads_ = at::get_num_threads();
    at::set_num_threads(2);
    at::manual_seed(5);
  }
  void TearDown() override { at::set_num_threads(saved_threads_); }

  int saved_threads_ = 1;
};

TEST_F(ThreadedProjection, MatchesLinearForDecodeShapes) {
  ASSERT_EQ(at::get_num_threads(), 2);
  // 1001 output rows: the halves are uneven, so the split's edges are exercised.
  const at::Tensor weight = at::randn({1001, 256});
  c10::InferenceMode inference;
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{1, 256}, {1, 1, 256}, {3, 1, 256}, {2, 4, 256}, {256}}) {
    const at::Tensor x = at::randn(shape);
    const at::Tensor expected = at::linear(x, weight);
    const at::Tensor got = model::project(x, weight);
    ASSERT_EQ(got.sizes(), expected.sizes()) << "input " << x.sizes();
    EXPECT_LE((got - expected).abs().max().item<double>(), 1e-4) << "input " << x.sizes();
  }
}

TEST_F(ThreadedProjection, NonContiguousInputAndPrefillShapesMatch) {
  const at::Tensor weight = at::randn({512, 384});
  c10::InferenceMode inference;
  const at::Tensor strided = at::randn({384, 2}).t();  // [2, 384], column-major
  EXPECT_LE((model::project(strided, weight) - at::linear(strided, weight)).abs().max().item<double>(),
            1e-4);
  const at::Tensor prefill = at::randn({64, 384});  // above row_product's row limit
  EXPECT_LE((model::project(prefill, weight) - at::linear(prefill, weight)).abs().max().item<double>(),
            1e-4);
}

TEST_F(ThreadedProjection, MatchesLinearOnOneThreadAndAtTheKernelsEdges) {
  c10::InferenceMode inference;
  // Widths around the kernel's 8-float step, output counts around its 4-row blocks and the
  // split between threads, 1 to 32 rows (odd and even, for the kernel's row pairs): every tail of
  // row_product runs.
  for (const int threads : {1, 2}) {
    at::set_num_threads(threads);
    for (const int64_t in : {int64_t{7}, int64_t{8}, int64_t{9}, int64_t{1031}})
      for (const int64_t extra : {int64_t{1}, int64_t{6}}) {
        const int64_t out = (1 << 16) / in + extra;  // above project's size threshold
        const at::Tensor weight = at::randn({out, in});
        for (const int64_t rows : {1, 2, 5, 8, 13, 32}) {
          const at::Tensor x = at::randn({rows, in});
          const at::Tensor expected = at::linear(x, weight);
          const double tolerance = 1e-5 * std::sqrt(static_cast<double>(in)) * 4;
          EXPECT_LE((model::project(x, weight) - expected).abs().max().item<double>(), tolerance)
              << threads << " threads, x [" << rows << ", " << in << "], weight [" << out << ", "
              << in << "]";
        }
      }
  }
}

TEST(RowProduct, WritesEveryRequestedOutputAndNothingElse) {
  if (!cpu::row_product_available()) GTEST_SKIP() << "no AVX2/FMA on this CPU";
  const int64_t rows = 3, in = 21, out = 11, stride = 16;
  const at::Tensor x = at::randn({rows, in});
  const at::Tensor w = at::randn({out, in});
  // Outputs 2..9 of each row, into a strided buffer whose other cells must stay untouched.
  at::Tensor y = at::full({rows, stride}, 7.0f);
  cpu::row_product(x.data_ptr<float>(), rows, in, w.data_ptr<float>(), 2, 10, y.data_ptr<float>(),
                   stride);
  const at::Tensor expected = at::matmul(x, w.t());
  EXPECT_LE((y.narrow(1, 2, 8) - expected.narrow(1, 2, 8)).abs().max().item<double>(), 1e-5);
  EXPECT_TRUE(y.narrow(1, 0, 2).eq(7.0f).all().item<bool>());
  EXPECT_TRUE(y.narrow(1, 10, stride - 10).eq(7.0f).all().item<bool>());
}

TEST(RowCombination, MatchesTheProductForEveryRowCountAndKeepsTheStrideGap) {
  if (!cpu::row_product_available()) GTEST_SKIP() << "no AVX2/FMA on this CPU";
  const int64_t count = 37, width = 64, p_stride = 41, y_stride = 70;
  for (int64_t rows = 1; rows <= 7; ++rows) {  // the kernel's threes, and remainders of 1 and 2
    const at::Tensor p = at::rand({rows, p_stride});
    const at::Tensor v = at::randn({count, width});
    at::Tensor y = at::full({rows, y_stride}, 7.0f);
    cpu::row_combination(p.data_ptr<float>(), rows, p_stride, count, v.data_ptr<float>(), width,
                         y.data_ptr<float>(), y_stride);
    const at::Tensor expected = at::matmul(p.narrow(1, 0, count), v);
    EXPECT_LE((y.narrow(1, 0, width) - expected).abs().max().item<double>(), 1e-5) << rows;
    EXPECT_TRUE(y.narrow(1, width, y_stride - width).eq(7.0f).all().item<bool>()) << rows;
  }
  const at::Tensor p = at::rand({1, 4}), v = at::randn({4, 48});
  at::Tensor y = at::empty({1, 48});
  EXPECT_THROW(cpu::row_combination(p.data_ptr<float>(), 1, 4, 4, v.data_ptr<float>(), 48,
                                    y.data_ptr<float>(), 48),
               Error);
}

TEST_F(ThreadedProjection, GradientsFlowWhenAutogradIsOn) {
  const at::Tensor weight = at::randn({600, 128}).requires_grad_(true);
  const at::Tensor x = at::randn({1, 128});
  model::project(x, weight).sum().backward();
  ASSERT_TRUE(weight.grad().defined());
  // d(sum(x W^T))/dW = every row equal to x.
  EXPECT_LE((weight.grad() - x.expand({600, 128})).abs().max().item<double>(), 1e-6);
}

// Without autograd, rms_norm and swiglu_mlp take their fused float paths; with it, the plain ATen
// expressions. Both give the same values (to float rounding) on decode and prefill shapes.
TEST_F(ThreadedProjection, FusedNormAndMlpMatchTheAutogradPath) {
  const at::Tensor weight = at::rand({200}) + 0.5;
  model::LayerWeights w;
  w.gate_proj = at::randn({96, 200}) * 0.1;
  w.up_proj = at::randn({96, 200}) * 0.1;
  w.down_proj = at::randn({200, 96}) * 0.1;
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{1, 200}, {37, 200}, {2, 3, 200}}) {
    const at::Tensor x = at::randn(shape) * 3;
    const at::Tensor norm_expected = model::rms_norm(x, weight, 1e-5);
    const at::Tensor mlp_expected = model::swiglu_mlp(x, w);
    ASSERT_TRUE(c10::GradMode::is_enabled());
    c10::NoGradGuard no_grad;
    const at::Tensor norm = model::rms_norm(x, weight, 1e-5);
    ASSERT_EQ(norm.sizes(), norm_expected.sizes());
    EXPECT_LE((norm - norm_expected).abs().max().item<double>(), 1e-5) << "input " << x.sizes();
    EXPECT_LE((model::swiglu_mlp(x, w) - mlp_expected).abs().max().item<double>(), 1e-5)
        << "input " << x.sizes();
  }
}

// Likewise RoPE: its fused float path (no autograd) on the runner's transposed views, prefill
// [heads, n, d] and decode [batch, heads, t, d], gives the ATen expression's values and a
// contiguous result.
TEST_F(ThreadedProjection, FusedRopeMatchesTheAutogradPath) {
  const at::Tensor inv_freq =
      1.0 / at::pow(10000.0, at::arange(0, 64, 2, at::kLong).to(at::kFloat) / 64);
  for (const auto& [batch, positions, heads] :
       std::vector<std::array<int64_t, 3>>{{1, 300, 3}, {2, 1, 9}, {3, 2, 4}}) {
    const model::RopeTables tables =
        model::rope_tables(inv_freq, 17, positions, at::kFloat, at::kCPU);
    const at::Tensor rows = at::randn({batch, positions, heads, 64}) * 2;
    const at::Tensor x = batch == 1 ? rows[0].transpose(0, 1) : rows.transpose(1, 2);
    ASSERT_TRUE(c10::GradMode::is_enabled());
    const at::Tensor expected = model::apply_rope(x, tables);
    c10::NoGradGuard no_grad;
    const at::Tensor fused = model::apply_rope(x, tables);
    ASSERT_EQ(fused.sizes(), expected.sizes());
    EXPECT_TRUE(fused.is_contiguous());
    EXPECT_LE((fused - expected).abs().max().item<double>(), 1e-6) << "input " << x.sizes();
  }
}

}  // namespace
}  // namespace kvs::test
