// The DSpark engine check shared by the CPU suite and the GPU tests: the golden DSpark drafter
// (tests/data/models/v3_qlora_moe_yarn-dspark) over its target on `device`, speculative greedy
// equal to plain greedy with fixed and with adaptive (ragged) widths.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>

#include "engine_test_util.h"
#include "mlaspec/model/dspark.h"
#include "mlaspec/spec/dspark_drafter.h"
#include "model/dflash_test_util.h"

namespace mlaspec::spec::testing {

// On kCUDA the target and the drafter's DFlash backbone both run on the GPU (the heads on the
// host, from the backbone's downloaded logits and hidden states).
inline void check_dspark_lossless(Device device) {
  const std::string name = model::testing::kDFlashTarget;
  EngineConfig config;
  config.prefill_chunk_tokens = 16;
  Engine plain = make_engine(name, nullptr, config, device);
  const auto prompts = mixed_prompts(8, 256, 61);
  const auto want = run_engine(plain, prompts, {}, 24);
  for (const auto mode : {VerifyWidthPolicy::Mode::kFixed, VerifyWidthPolicy::Mode::kAdaptive}) {
    const bool adaptive = mode == VerifyWidthPolicy::Mode::kAdaptive;
    SCOPED_TRACE(adaptive ? "adaptive" : "fixed");
    model::Model target = load_model(name, device);
    model::DFlashOptions options;
    options.device = device;
    Result<model::DSparkNetwork> net =
        model::DSparkNetwork::load(model::testing::dspark_dir(), target, options);
    ASSERT_TRUE(net.ok()) << net.status().message();
    DSparkDrafterConfig dconfig;
    dconfig.backbone.max_tokens_per_request = 512;
    dconfig.width = {mode, {1.0, 0.2}};
    Result<std::unique_ptr<DSparkDrafter>> drafter =
        DSparkDrafter::create(std::move(*net), dconfig);
    ASSERT_TRUE(drafter.ok()) << drafter.status().message();
    config.num_draft = (*drafter)->gamma();
    auto recorder = std::make_unique<WidthRecorder>(std::move(*drafter));
    int* ragged = recorder->ragged_steps();
    Result<Engine> spec = Engine::create(std::move(target), std::move(recorder), config);
    ASSERT_TRUE(spec.ok()) << spec.status().message();
    const auto got = run_engine(*spec, prompts, {}, 24);
    EXPECT_EQ(got.outputs, want.outputs);
    for (const Status& e : got.errors) EXPECT_TRUE(e.ok()) << e.message();
    EXPECT_GT(got.stats.drafted, 0);
    if (adaptive) {
      EXPECT_GT(*ragged, 0);  // requests of one step verified different widths
    } else {
      EXPECT_EQ(*ragged, 0);
    }
    std::printf(
        "[ info ] dspark on %s, %s: tau %.2f, acceptance %.2f, drafted %lld, ragged steps "
        "%d\n",
        std::string(device_name(device)).c_str(), adaptive ? "adaptive" : "fixed",
        got.stats.accept_length(), got.stats.acceptance_rate(),
        static_cast<long long>(got.stats.drafted), *ragged);
  }
}

}  // namespace mlaspec::spec::testing
