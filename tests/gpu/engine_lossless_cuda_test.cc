// Lossless greedy with the CUDA target (issue 35's GPU half): the CPU suite's long check
// (spec/engine_test_util.h check_lossless_greedy: plain greedy, then the oracle, always-wrong,
// random one-hot, random with q and n-gram drafters, every output equal to plain greedy's) with
// the target on the GPU in deterministic mode (the engine's default: row-invariant GEMMs, q_len-
// and batch-invariant attention), 64 prompts x 32 new tokens per golden checkpoint at batch 1, 8
// and 16 (ragged prompts of 3 .. 48 tokens).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gpu_test_util.h"
#include "spec/engine_test_util.h"

namespace mlaspec::spec {
namespace {

// The CUDA attention backends serve 8 .. 128 heads; a golden checkpoint outside that range is
// refused at load (model_cuda_test.cc checks the refusal) and left out here, by its config.
bool cuda_serves(const std::string& name) {
  std::ifstream in(testing::model_dir(name) / "config.json");
  const int heads = nlohmann::json::parse(in).at("num_attention_heads").get<int>();
  return heads >= 8 && heads <= 128;
}

TEST(CudaEngineLossless, HundredsOfPromptsEveryDrafterAtBatch1_8_16) {
  MLASPEC_SKIP_WITHOUT_GPU();
  int served = 0;
  for (const std::string& name : testing::kModels) {
    if (!cuda_serves(name)) {
      std::printf("[engine lossless cuda] %s: heads outside the CUDA backends' range, left out\n",
                  name.c_str());
      continue;
    }
    ++served;
    for (size_t batch : {1, 8, 16}) {
      SCOPED_TRACE("batch " + std::to_string(batch));
      testing::check_lossless_greedy(name, 64, 32, 1001, Device::kCUDA, batch);
    }
    std::printf("[engine lossless cuda] %s: 64 prompts x 5 drafters x batch 1, 8, 16 equal\n",
                name.c_str());
  }
  EXPECT_GE(served, 5);
}

// fp8 and fp8_tile target pools on the GPU (the CUDA KV writer and both verify backends read
// either): speculative greedy equals plain greedy on the same pool dtype (goldens of >= 8 heads,
// the CUDA backends' minimum).
TEST(CudaEngineLossless, Fp8TargetKv) {
  MLASPEC_SKIP_WITHOUT_GPU();
  testing::check_fp8_kv_lossless(Device::kCUDA,
                                 {"v3_qlora_moe_yarn", "kimi_k2_fp8", "v2_lite_greedy"});
}

}  // namespace
}  // namespace mlaspec::spec
