// The DSpark engine checks shared by the CPU suite and the GPU tests, speculative greedy equal to
// plain greedy with fixed and with adaptive (ragged) widths on `device`:
//   - check_dspark_lossless: the golden DSpark drafter (tests/data/models/v3_qlora_moe_yarn-dspark)
//     over its target. Its random heads and backbone never draft the target's token (tau 1), so
//     it checks the all-rejected path only;
//   - check_dspark_lossless_shipped: a DSpark drafter on the shipped pair's trained backbone
//     (models/drafter over models/target) with no Markov head and a fresh random confidence head,
//     on held-out problems: most drafts are accepted (tau >= 5 fixed, >= 2 adaptive), and the
//     confidences vary enough for the adaptive widths to differ within steps.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "engine_test_util.h"
#include "mlaspec/model/dspark.h"
#include "mlaspec/spec/dspark_drafter.h"
#include "mlaspec/tokenizer/tokenizer.h"
#include "model/dflash_test_util.h"

namespace mlaspec::spec::testing {

// One speculative run against plain greedy's: the same outputs, no errors, drafts sent, tau at
// least min_tau; ragged steps (requests of one step verifying different widths) exactly when the
// widths are adaptive.
inline void check_dspark_run(const RunResult& got, const RunResult& want, bool adaptive, int ragged,
                             const char* label, Device device, double min_tau) {
  EXPECT_EQ(got.outputs, want.outputs);
  for (const Status& e : got.errors) EXPECT_TRUE(e.ok()) << e.message();
  EXPECT_GT(got.stats.drafted, 0);
  EXPECT_GE(got.stats.accept_length(), min_tau);
  if (adaptive) {
    EXPECT_GT(ragged, 0);
  } else {
    EXPECT_EQ(ragged, 0);
  }
  std::printf("[ info ] %s on %s, %s: tau %.2f, acceptance %.2f, drafted %lld, ragged steps %d\n",
              label, std::string(device_name(device)).c_str(), adaptive ? "adaptive" : "fixed",
              got.stats.accept_length(), got.stats.acceptance_rate(),
              static_cast<long long>(got.stats.drafted), ragged);
}

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
    auto recorder = std::make_unique<WidthRecorder>(std::move(*drafter), config.num_draft);
    int* ragged = recorder->ragged_steps();
    Result<Engine> spec = Engine::create(std::move(target), std::move(recorder), config);
    ASSERT_TRUE(spec.ok()) << spec.status().message();
    const auto got = run_engine(*spec, prompts, {}, 24);
    check_dspark_run(got, want, adaptive, *ragged, "dspark", device, 1.0);
  }
}

// The shipped pair's directory (models/ beside tests/).
inline std::filesystem::path shipped_dir() {
  return std::filesystem::path(MLASPEC_TEST_DATA_DIR).parent_path().parent_path() / "models";
}

inline void check_dspark_lossless_shipped(Device device) {
  const std::filesystem::path dir = shipped_dir();
  Result<tokenizer::Tokenizer> tok = tokenizer::Tokenizer::from_path(dir / "target");
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  std::ifstream in(dir / "eval" / "heldout.jsonl");
  std::vector<std::vector<int32_t>> prompts;
  for (std::string line; prompts.size() < 8 && std::getline(in, line);) {
    const std::string text = nlohmann::json::parse(line).at("prompt").get<std::string>();
    prompts.push_back(tok->encode(text, {.add_special_tokens = false}).value());
  }
  ASSERT_EQ(prompts.size(), 8u);
  model::LoadOptions lo;
  lo.device = device;
  auto load_target = [&] {
    Result<model::Model> m = model::Model::load(dir / "target", lo);
    EXPECT_TRUE(m.ok()) << m.status().to_string();
    return std::move(*m);
  };
  EngineConfig config;
  config.max_requests = 8;
  config.max_tokens_per_request = 256;
  Result<Engine> plain = Engine::create(load_target(), nullptr, config);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  const int new_tokens = 48;
  const std::vector<int32_t> stop = {*tok->eos_id()};
  const auto want = run_engine(*plain, prompts, {}, new_tokens, stop);
  const uint32_t seed = std::random_device{}();
  std::printf("[ info ] dspark shipped: confidence head seed %u\n", seed);
  for (const auto mode : {VerifyWidthPolicy::Mode::kFixed, VerifyWidthPolicy::Mode::kAdaptive}) {
    const bool adaptive = mode == VerifyWidthPolicy::Mode::kAdaptive;
    SCOPED_TRACE(adaptive ? "adaptive" : "fixed");
    model::Model target = load_target();
    model::DFlashOptions options;
    options.device = device;
    Result<model::DFlashNetwork> backbone =
        model::DFlashNetwork::load(dir / "drafter", target, options);
    ASSERT_TRUE(backbone.ok()) << backbone.status().message();
    // No Markov head (the backbone's own drafts) and a random confidence head: c_k =
    // sigmoid(w . h_k + 3) with w ~ N(0, 1 / hidden): mostly above 0.9, low on some slots, so
    // adaptive widths keep most drafts and differ between requests.
    model::DSparkNetwork net{
        .config = {.backbone = backbone->config(), .markov_rank = 0, .confidence_head = true},
        .heads = {},
        .backbone = std::move(*backbone)};
    const int hidden = net.config.backbone.hidden_size;
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f / std::sqrt(static_cast<float>(hidden)));
    net.heads.confidence_weight.resize(static_cast<size_t>(hidden));
    for (float& w : net.heads.confidence_weight) w = normal(rng);
    net.heads.confidence_bias = 3.0f;
    DSparkDrafterConfig dconfig;
    dconfig.backbone.max_requests = config.max_requests;
    dconfig.backbone.max_tokens_per_request = config.max_tokens_per_request;
    dconfig.width = {mode, {1.0, 0.2}};
    Result<std::unique_ptr<DSparkDrafter>> drafter = DSparkDrafter::create(std::move(net), dconfig);
    ASSERT_TRUE(drafter.ok()) << drafter.status().message();
    EngineConfig sconfig = config;
    sconfig.num_draft = (*drafter)->gamma();
    auto recorder = std::make_unique<WidthRecorder>(std::move(*drafter), sconfig.num_draft);
    int* ragged = recorder->ragged_steps();
    Result<Engine> spec = Engine::create(std::move(target), std::move(recorder), sconfig);
    ASSERT_TRUE(spec.ok()) << spec.status().message();
    const auto got = run_engine(*spec, prompts, {}, new_tokens, stop);
    // Fixed: the backbone's tau on these problems, ~7.5; adaptive cuts blocks at low
    // confidences (3.2-5.1 over seeds).
    check_dspark_run(got, want, adaptive, *ragged, "dspark shipped", device, adaptive ? 2.0 : 5.0);
  }
}

}  // namespace mlaspec::spec::testing
