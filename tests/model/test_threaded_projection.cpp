// model::project splits decode-sized products over the intra-op threads by output rows; it must
// give at::linear's result for every shape the runner passes it, and leave autograd to at::linear.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include "model/layers.h"

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
  const at::Tensor prefill = at::randn({64, 384});  // above the threaded row limit
  EXPECT_LE((model::project(prefill, weight) - at::linear(prefill, weight)).abs().max().item<double>(),
            1e-4);
}

TEST_F(ThreadedProjection, GradientsFlowWhenAutogradIsOn) {
  const at::Tensor weight = at::randn({600, 128}).requires_grad_(true);
  const at::Tensor x = at::randn({1, 128});
  model::project(x, weight).sum().backward();
  ASSERT_TRUE(weight.grad().defined());
  // d(sum(x W^T))/dW = every row equal to x.
  EXPECT_LE((weight.grad() - x.expand({600, 128})).abs().max().item<double>(), 1e-6);
}

}  // namespace
}  // namespace kvs::test
