// DSpark on the GPU (issue 39): spec/dspark_test_util.h's check with the target and the drafter's
// DFlash backbone on CUDA (the Markov and confidence heads run on the host from the backbone's
// logits and hidden states; docs/dspark.md): speculative greedy equals plain greedy on the CUDA
// target with fixed and with adaptive (ragged) widths, in deterministic mode (the engine's
// default), the adaptive run sending ragged verify batches through the CUDA attention backends;
// on the golden drafter (every draft rejected) and on the shipped pair's trained backbone (most
// accepted).
#include <gtest/gtest.h>

#include "gpu_test_util.h"
#include "spec/dspark_test_util.h"

namespace mlaspec::spec {
namespace {

TEST(DSparkCuda, GreedyEqualsPlainGreedyWithFixedAndAdaptiveWidths) {
  MLASPEC_SKIP_WITHOUT_GPU();
  testing::check_dspark_lossless(Device::kCUDA);
}

TEST(DSparkCuda, ShippedBackboneAcceptsDraftsAndStaysLossless) {
  MLASPEC_SKIP_WITHOUT_GPU();
  testing::check_dspark_lossless_shipped(Device::kCUDA);
}

}  // namespace
}  // namespace mlaspec::spec
