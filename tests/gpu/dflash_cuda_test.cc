// The DFlash drafter's CUDA forward (DFlashOptions::device = kCUDA) against its CPU forward (the
// oracle), on the golden drafter (tests/data/models/v3_qlora_moe_yarn-dflash) and the shipped pair
// (models/), with fresh random context hidden states each run (the seed is printed):
//   - a batch of requests with ragged contexts (1 .. 150 rows, page size 16, pages shuffled),
//     appended in two calls: the CUDA pool's written rows within bf16 rounding of the CPU pool's,
//     every other row still poison (no stray writes);
//   - propose for the whole batch, and each request alone: logits and hidden states within
//     kRel of the CPU's (relative to the call's largest |value|: bf16 at every GEMM input against
//     the CPU's f32), argmax equal where the CPU's top-2 gap is decisive, every value finite
//     (the pools and scratch are poisoned with NaN);
//   - the same with a draft window;
//   - spec::Engine with the CUDA target and the CUDA drafter (spec::make_drafter, the commands'
//     path): speculative greedy == plain greedy on held-out prompts; draft and verify times
//     printed beside the CPU drafter's.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "gpu_test_util.h"
#include "mlaspec/core/dtype.h"
#include "mlaspec/model/dflash.h"
#include "mlaspec/model/model.h"
#include "mlaspec/spec/engine.h"
#include "mlaspec/spec/make_drafter.h"
#include "mlaspec/tokenizer/tokenizer.h"
#include "model/model_test_util.h"

namespace mlaspec::model {
namespace {

// bf16 activations at each GEMM input (the CUDA model runtime's kLogitRel, docs/model.md).
constexpr float kRel = 3e-2f;

const std::string kModels = std::string(MLASPEC_SOURCE_DIR) + "/models";
const std::string kGolden = std::string(MLASPEC_SOURCE_DIR) + "/tests/data/models";

uint32_t fresh_seed() {
  const uint32_t s = std::random_device{}();
  std::printf("[dflash cuda] seed %u\n", s);
  return s;
}

float max_abs(const std::vector<float>& v) {
  return testing::max_abs(v.data(), v.size());
}

// Row-wise max error relative to the largest |ref|; argmax equal where the gap is decisive.
float compare_rows(const std::vector<float>& ours, const std::vector<float>& ref, int width,
                   bool check_argmax, const std::string& what) {
  EXPECT_EQ(ours.size(), ref.size()) << what;
  if (ours.size() != ref.size() || ref.empty()) return 0.0f;
  for (float v : ours) {
    if (!std::isfinite(v)) {
      ADD_FAILURE() << what << ": a non-finite value (an element no kernel wrote)";
      return 0.0f;
    }
  }
  const float scale = std::max(max_abs(ref), 1e-20f);
  float worst = 0.0f;
  for (size_t r = 0; r < ref.size() / static_cast<size_t>(width); ++r) {
    const float* o = ours.data() + r * static_cast<size_t>(width);
    const float* b = ref.data() + r * static_cast<size_t>(width);
    float d = 0.0f;
    for (int i = 0; i < width; ++i) d = std::max(d, std::fabs(o[i] - b[i]));
    worst = std::max(worst, d / scale);
    EXPECT_LE(d / scale, kRel) << what << " row " << r;
    if (check_argmax && testing::top2_gap(b, width) > 2 * kRel * scale) {
      EXPECT_EQ(testing::argmax(o, width), testing::argmax(b, width)) << what << " row " << r;
    }
  }
  return worst;
}

struct Case {
  std::string target, drafter;
};

// One network per device over its own pool, the same requests.
struct Side {
  DFlashNetwork net;
  kv::KvPool pool;
};

Side make_side(const Case& c, const Model& target, Device device, int64_t window, int pages) {
  DFlashOptions o;
  o.device = device;
  o.draft_window = window;
  Result<DFlashNetwork> net = DFlashNetwork::load(c.drafter, target, o);
  if (!net.ok()) throw Error(net.status());
  Result<kv::KvPool> pool = kv::KvPool::create(net->kv_pool_spec(pages, 16));
  if (!pool.ok()) throw Error(pool.status());
  throw_if_error(pool->buffer().fill_bytes(0xff));
  return Side{std::move(*net), std::move(*pool)};
}

// The same drafter on the GPU without CUDA graphs (it reads the graph side's pool).
DFlashNetwork eager_network(const Case& c, const Model& target, int64_t window) {
  DFlashOptions o;
  o.device = Device::kCUDA;
  o.draft_window = window;
  o.cuda_graphs = false;
  Result<DFlashNetwork> net = DFlashNetwork::load(c.drafter, target, o);
  if (!net.ok()) throw Error(net.status());
  return std::move(*net);
}

void run_case(const Case& c, int64_t window) {
  LoadOptions lo;
  lo.attention_policy = "cpu_reference";
  Result<Model> target = Model::load(c.target, lo);
  ASSERT_TRUE(target.ok()) << target.status().to_string();
  const std::vector<int64_t> lengths = {1, 19, 150};
  const int pages_per = 10;  // 160 rows
  const int pages = pages_per * static_cast<int>(lengths.size());
  Side cpu = make_side(c, *target, Device::kCPU, window, pages);
  Side gpu = make_side(c, *target, Device::kCUDA, window, pages);
  const DFlashConfig& cfg = cpu.net.config();
  ASSERT_EQ(gpu.pool.spec().device, Device::kCUDA);

  std::mt19937 rng(fresh_seed());
  std::vector<int32_t> page_ids(static_cast<size_t>(pages));
  for (int i = 0; i < pages; ++i) page_ids[static_cast<size_t>(i)] = i;
  std::shuffle(page_ids.begin(), page_ids.end(), rng);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int64_t Ht = cfg.target_hidden_size;
  const size_t K = cfg.target_layer_ids.size();
  // hidden[request][layer]: [length, Ht]
  std::vector<std::vector<std::vector<float>>> hidden(lengths.size());
  for (size_t r = 0; r < lengths.size(); ++r) {
    hidden[r].resize(K);
    for (auto& m : hidden[r]) {
      m.resize(static_cast<size_t>(lengths[r] * Ht));
      for (float& v : m) v = normal(rng);
    }
  }
  const auto table = [&](size_t r) {
    return std::span<const int32_t>(page_ids.data() + r * pages_per, pages_per);
  };
  // Two appends: the first half of every context, then the rest.
  for (int half = 0; half < 2; ++half) {
    std::vector<DFlashContextRows> rows(lengths.size());
    for (size_t r = 0; r < lengths.size(); ++r) {
      const int64_t begin = half == 0 ? 0 : lengths[r] / 2;
      const int64_t end = half == 0 ? lengths[r] / 2 : lengths[r];
      for (size_t k = 0; k < K; ++k) rows[r].layers.push_back(hidden[r][k].data() + begin * Ht);
      rows[r].rows = end - begin;
      rows[r].first_position = begin;
      rows[r].pages = table(r);
    }
    ASSERT_TRUE(cpu.net.append_context(rows, cpu.pool).ok());
    const Status st = gpu.net.append_context(rows, gpu.pool);
    ASSERT_TRUE(st.ok()) << st.to_string();
  }

  // The pools: written rows within bf16 rounding (relative to the layer's largest value), the rest
  // untouched.
  const int64_t row_vals = 2 * cfg.kv_width();
  std::vector<uint16_t> g(static_cast<size_t>(pages * 16 * row_vals));
  for (int l = 0; l < cfg.num_hidden_layers; ++l) {
    throw_if_error(gpu.pool.buffer().copy_to_host(
        g.data(), g.size() * sizeof(uint16_t),
        static_cast<size_t>(static_cast<const char*>(gpu.pool.layer_tensor(l).data()) -
                            static_cast<const char*>(gpu.pool.buffer().data()))));
    const auto* h = static_cast<const uint16_t*>(cpu.pool.layer_tensor(l).data());
    std::vector<bool> written(static_cast<size_t>(pages * 16), false);
    float scale = 0.0f, worst = 0.0f;
    for (size_t r = 0; r < lengths.size(); ++r) {
      for (int64_t p = 0; p < lengths[r]; ++p) {
        const int64_t slot = int64_t{table(r)[static_cast<size_t>(p / 16)]} * 16 + p % 16;
        written[static_cast<size_t>(slot)] = true;
        for (int64_t i = 0; i < row_vals; ++i) {
          const float ref = bf16_bits_to_float(h[slot * row_vals + i]);
          const float got = bf16_bits_to_float(g[static_cast<size_t>(slot * row_vals + i)]);
          scale = std::max(scale, std::fabs(ref));
          worst = std::max(worst, std::isfinite(got) ? std::fabs(got - ref) : INFINITY);
        }
      }
    }
    EXPECT_LE(worst, kRel * scale) << "pool layer " << l;
    for (int64_t slot = 0; slot < pages * 16; ++slot) {
      if (written[static_cast<size_t>(slot)]) continue;
      for (int64_t i = 0; i < row_vals; ++i) {
        ASSERT_EQ(g[static_cast<size_t>(slot * row_vals + i)], 0xffff)
            << "layer " << l << " slot " << slot << ": a row no request owns was written";
      }
    }
  }

  // propose: the batch, then each request alone.
  const auto blocks = [&](std::vector<size_t> which) {
    std::vector<DFlashBlock> b(which.size());
    for (size_t i = 0; i < which.size(); ++i) {
      b[i].anchor = static_cast<int32_t>(rng() % static_cast<uint32_t>(cfg.vocab_size));
      b[i].context_len = lengths[which[i]];
      b[i].pages = table(which[i]);
    }
    return b;
  };
  std::vector<DFlashBlock> ref = blocks({0, 1, 2});
  std::vector<DFlashBlock> ours = ref;
  ASSERT_TRUE(cpu.net.propose(ref, cpu.pool).ok());
  const Status st = gpu.net.propose(ours, gpu.pool);
  ASSERT_TRUE(st.ok()) << st.to_string();
  float worst = 0.0f;
  for (size_t i = 0; i < ref.size(); ++i) {
    const std::string what =
        c.drafter + " window " + std::to_string(window) + " request " + std::to_string(i);
    worst = std::max(
        worst, compare_rows(ours[i].logits, ref[i].logits, cfg.vocab_size, true, what + " logits"));
    compare_rows(ours[i].hidden, ref[i].hidden, cfg.hidden_size, false, what + " hidden");
    std::vector<DFlashBlock> alone = {ref[i]};
    ASSERT_TRUE(gpu.net.propose(alone, gpu.pool).ok());
    compare_rows(alone[0].logits, ref[i].logits, cfg.vocab_size, true, what + " alone logits");
  }
  // Graph replay (the default) equals the eager forward bitwise: the batch twice (a replay), and
  // batches of 2 and 1.
  const DFlashNetwork eager = eager_network(c, *target, window);
  for (const std::vector<size_t>& which :
       std::vector<std::vector<size_t>>{{0, 1, 2}, {0, 1, 2}, {2, 0}, {1}}) {
    std::vector<DFlashBlock> g = blocks(which);
    std::vector<DFlashBlock> e = g;
    ASSERT_TRUE(gpu.net.propose(g, gpu.pool).ok());
    ASSERT_TRUE(eager.propose(e, gpu.pool).ok());
    for (size_t i = 0; i < g.size(); ++i) {
      EXPECT_EQ(g[i].logits, e[i].logits) << c.drafter << " graph vs eager logits, block " << i;
      EXPECT_EQ(g[i].hidden, e[i].hidden) << c.drafter << " graph vs eager hidden, block " << i;
    }
  }
  std::printf("[dflash cuda] %s window %lld: worst logit row error %.2e of max |logit|\n",
              c.drafter.c_str(), static_cast<long long>(window), worst);
}

TEST(DFlashCuda, MatchesTheCpuNetworkOnRaggedBatches) {
  MLASPEC_SKIP_WITHOUT_GPU();
  const std::vector<Case> cases = {
      {kGolden + "/v3_qlora_moe_yarn", kGolden + "/v3_qlora_moe_yarn-dflash"},
      {kModels + "/target", kModels + "/drafter"},
  };
  for (const Case& c : cases) {
    run_case(c, 0);
    run_case(c, 8);
  }
}

TEST(DFlashCuda, WrongDevicePoolIsRefused) {
  MLASPEC_SKIP_WITHOUT_GPU();
  Result<Model> target = Model::load(kModels + "/target");
  ASSERT_TRUE(target.ok());
  DFlashOptions o;
  o.device = Device::kCUDA;
  Result<DFlashNetwork> net = DFlashNetwork::load(kModels + "/drafter", *target, o);
  ASSERT_TRUE(net.ok()) << net.status().to_string();
  kv::KvPoolSpec spec = net->kv_pool_spec(4, 16);
  spec.device = Device::kCPU;
  kv::KvPool pool = kv::KvPool::create(spec).value();
  DFlashBlock b;
  b.anchor = 1;
  b.context_len = 0;
  std::vector<DFlashBlock> batch = {b};
  const Status st = net->propose(batch, pool);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("cpu"), std::string::npos) << st.to_string();
}

// Greedy outputs of a CUDA-target engine; `draft` none / dflash with the drafter on `draft_device`.
std::vector<std::vector<int32_t>> generate(const tokenizer::Tokenizer& tok,
                                           const std::vector<std::string>& prompts,
                                           const std::string& draft, Device draft_device,
                                           spec::SpecStats* stats, double* ms_per_token) {
  LoadOptions lo;
  lo.device = Device::kCUDA;
  Result<Model> target = Model::load(kModels + "/target", lo);
  EXPECT_TRUE(target.ok()) << target.status().to_string();
  spec::EngineConfig config;
  config.max_requests = static_cast<int>(prompts.size());
  config.max_tokens_per_request = 256;
  Result<spec::MadeDrafter> made =
      spec::make_drafter({.kind = draft,
                          .model_dir = kModels + "/drafter",
                          .max_requests = config.max_requests,
                          .max_tokens_per_request = config.max_tokens_per_request,
                          .device = draft_device},
                         *target);
  EXPECT_TRUE(made.ok()) << made.status().to_string();
  config.num_draft = made->num_draft;
  Result<spec::Engine> engine =
      spec::Engine::create(std::move(*target), std::move(made->drafter), config);
  EXPECT_TRUE(engine.ok()) << engine.status().to_string();
  std::vector<spec::RequestId> ids;
  for (const std::string& p : prompts) {
    spec::GenerationRequest request;
    request.prompt = tok.encode(p, {.add_special_tokens = false}).value();
    request.max_new_tokens = 64;
    request.stop_token_ids.push_back(*tok.eos_id());
    const spec::RequestId id = engine->add_request(std::move(request)).value();
    EXPECT_TRUE(engine->prefill(id).ok());
    ids.push_back(id);
  }
  const auto t0 = std::chrono::steady_clock::now();
  while (engine->num_running() > 0) {
    Result<spec::StepOutput> step = engine->step();
    EXPECT_TRUE(step.ok()) << step.status().to_string();
    if (!step.ok()) break;
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::vector<std::vector<int32_t>> out;
  size_t tokens = 0;
  for (spec::RequestId id : ids) {
    const auto o = engine->output(id);
    out.emplace_back(o.begin(), o.end());
    tokens += o.size();
  }
  if (stats != nullptr) *stats = engine->stats();
  if (ms_per_token != nullptr)
    *ms_per_token = ms / static_cast<double>(std::max<size_t>(tokens, 1));
  return out;
}

TEST(DFlashCuda, EngineWithCudaDrafterIsLossless) {
  MLASPEC_SKIP_WITHOUT_GPU();
  Result<tokenizer::Tokenizer> tok = tokenizer::Tokenizer::from_path(kModels + "/target");
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  std::ifstream in(kModels + "/eval/heldout.jsonl");
  std::vector<std::string> prompts;
  std::string line;
  while (prompts.size() < 4 && std::getline(in, line)) {
    prompts.push_back(nlohmann::json::parse(line).at("prompt").get<std::string>());
  }
  ASSERT_EQ(prompts.size(), 4u);
  spec::SpecStats gpu_stats, cpu_stats;
  double plain_ms = 0, gpu_ms = 0, cpu_ms = 0;
  const auto plain = generate(*tok, prompts, "none", Device::kCUDA, nullptr, &plain_ms);
  const auto on_gpu = generate(*tok, prompts, "dflash", Device::kCUDA, &gpu_stats, &gpu_ms);
  const auto on_cpu = generate(*tok, prompts, "dflash", Device::kCPU, &cpu_stats, &cpu_ms);
  for (size_t p = 0; p < prompts.size(); ++p) {
    EXPECT_FALSE(plain[p].empty());
    EXPECT_EQ(on_gpu[p], plain[p]) << "prompt " << p;
    EXPECT_EQ(on_cpu[p], plain[p]) << "prompt " << p;
  }
  EXPECT_GE(gpu_stats.accept_length(), 3.0);
  std::printf(
      "[dflash cuda engine] batch %zu, ms per emitted token: plain %.3f, cuda drafter %.3f "
      "(tau %.2f), cpu drafter %.3f (tau %.2f)\n",
      prompts.size(), plain_ms, gpu_ms, gpu_stats.accept_length(), cpu_ms,
      cpu_stats.accept_length());
}

}  // namespace
}  // namespace mlaspec::model
