// The CUDA runtime of Model (LoadOptions::device = kCUDA) against the CPU runtime (the oracle), on
// the golden checkpoints of tests/data/models and the shipped target (models/target):
//   - logits and captured hidden states within kLogitRel / kHiddenRel of the CPU runtime's,
//     relative to the call's largest |value| (bf16 activations at every GEMM input against the
//     CPU's f32), argmax equal where the CPU's top-2 gap exceeds twice the bound;
//   - chunked prefill + decode == one-shot: bitwise in deterministic mode, within the bound else;
//   - deterministic mode: a token's logits and hidden states are bitwise the same from a call of
//     8 new tokens and from 8 calls of 1;
//   - (spec::Engine with the CUDA target, with the DFlash drafter on the CPU and on the GPU:
//     dflash_cuda_test.cc)
//   - timings of the shipped target (printed; docs/perf/knowledge.md records them).
// Pools and the runtime's scratch are poisoned (0xff bytes: NaN), and every returned value must be
// finite, so an element no kernel wrote cannot pass unnoticed.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpu_test_util.h"
#include "mlaspec/model/dflash.h"
#include "mlaspec/model/model.h"
#include "mlaspec/spec/dflash_drafter.h"
#include "mlaspec/spec/engine.h"
#include "mlaspec/tokenizer/tokenizer.h"
#include "model/model_test_util.h"

namespace mlaspec::model {
namespace {

// Bounds relative to the call's largest |value| of the CPU runtime (docs/model.md, "CUDA runtime").
constexpr float kLogitRel = 3e-2f;
constexpr float kHiddenRel = 3e-2f;

const std::string kModels = std::string(MLASPEC_SOURCE_DIR) + "/models";
const std::string kGolden = std::string(MLASPEC_SOURCE_DIR) + "/tests/data/models";

std::string model_path(const std::string& name) {
  return name == "target" ? kModels + "/target" : kGolden + "/" + name;
}

Model& cached(const std::string& name, Device device) {
  static std::map<std::pair<std::string, int>, std::unique_ptr<Model>> models;
  auto& slot = models[{name, static_cast<int>(device)}];
  if (!slot) {
    LoadOptions o;
    o.device = device;
    o.attention_policy = device == Device::kCPU ? "cpu_reference" : "auto";
    Result<Model> m = Model::load(model_path(name), o);
    if (!m.ok()) throw Error(m.status());
    slot = std::make_unique<Model>(std::move(*m));
  }
  return *slot;
}

// One request on its own pool (page size 16, pages in reverse order), poisoned before use.
class Seq {
 public:
  Seq(Model& m, int max_tokens) : model_(m) {
    const int pages = (max_tokens + 15) / 16;
    pool_ = std::make_unique<kv::KvPool>(
        kv::KvPool::create(m.kv_pool_spec(pages, 16, DType::kBF16)).value());
    throw_if_error(pool_->buffer().fill_bytes(0xff));
    for (int j = 0; j < pages; ++j) pages_.push_back(pages - 1 - j);
  }
  RequestOutput run(const std::vector<int32_t>& tokens, LogitsMode mode, ForwardOptions o = {}) {
    std::vector<int32_t> pos(tokens.size());
    for (size_t i = 0; i < pos.size(); ++i) pos[i] = len_ + static_cast<int32_t>(i);
    ForwardRequest r{tokens, pos, pages_, mode};
    Result<ForwardOutput> out = model_.forward({&r, 1}, *pool_, o);
    if (!out.ok()) throw Error(out.status());
    len_ += static_cast<int32_t>(tokens.size());
    RequestOutput ro = std::move(out->requests[0]);
    for (float v : ro.logits) EXPECT_TRUE(std::isfinite(v)) << "non-finite logit";
    for (const auto& h : ro.hidden) {
      for (float v : h) EXPECT_TRUE(std::isfinite(v)) << "non-finite hidden state";
    }
    return ro;
  }

 private:
  Model& model_;
  std::unique_ptr<kv::KvPool> pool_;
  std::vector<int32_t> pages_;
  int32_t len_ = 0;
};

using testing::argmax;
using testing::top2_gap;

float max_abs(const std::vector<float>& v) {
  return testing::max_abs(v.data(), v.size());
}

// Row-wise errors relative to the call's max |ref| value. The random routers of the golden
// checkpoints have near-ties that a bf16-sized perturbation can flip (docs/model.md): a flipped
// token's row moves far, so the check allows a few rows over the bound (kMaxRowsOver of them) and
// reports them; argmax must agree on every row within the bound whose top-2 gap is decisive.
constexpr double kMaxRowsOver = 0.05;

struct Errors {
  float worst = 0.0f;  // largest row error (relative)
  int rows = 0, over = 0;
  void add(const Errors& e) {
    worst = std::max(worst, e.worst);
    rows += e.rows;
    over += e.over;
  }
};

Errors compare_rows(const std::vector<float>& ours, const std::vector<float>& ref, int width,
                    float bound, bool check_argmax, const std::string& what) {
  EXPECT_EQ(ours.size(), ref.size()) << what;
  Errors e;
  if (ours.size() != ref.size()) return e;
  const float scale = std::max(max_abs(ref), 1e-20f);
  e.rows = static_cast<int>(ref.size()) / width;
  for (int r = 0; r < e.rows; ++r) {
    const float* o = ours.data() + static_cast<size_t>(r) * width;
    const float* b = ref.data() + static_cast<size_t>(r) * width;
    float d = 0.0f;
    for (int i = 0; i < width; ++i) d = std::max(d, std::fabs(o[i] - b[i]));
    const float rel = d / scale;
    e.worst = std::max(e.worst, rel);
    if (rel > bound) {
      ++e.over;
      std::printf("  %s row %d: %.2e over the bound\n", what.c_str(), r, rel);
    } else if (check_argmax && top2_gap(b, width) > 2 * bound * scale) {
      EXPECT_EQ(argmax(o, width), argmax(b, width)) << what << " row " << r;
    }
  }
  return e;
}

// A fixed token sequence for a model: its golden sequence when it has one, else pseudo-random ids.
std::vector<int32_t> sequence(const std::string& name, int n) {
  std::ifstream in(kGolden + "/" + name + "/goldens.json");
  std::vector<int32_t> s;
  if (in) {
    const nlohmann::json j = nlohmann::json::parse(in);
    const auto& p = j["prompts"][0];
    s = p["prompt"].get<std::vector<int32_t>>();
    for (int32_t t : p["continuation"].get<std::vector<int32_t>>()) s.push_back(t);
  }
  const int vocab = cached(name, Device::kCPU).config().vocab_size;
  uint32_t x = 12345;
  while (static_cast<int>(s.size()) < n) {
    x = x * 1664525u + 1013904223u;
    s.push_back(static_cast<int32_t>((x >> 8) % static_cast<uint32_t>(vocab)));
  }
  s.resize(static_cast<size_t>(n));
  return s;
}

std::vector<int32_t> slice(const std::vector<int32_t>& s, size_t a, size_t b) {
  return std::vector<int32_t>(s.begin() + static_cast<std::ptrdiff_t>(a),
                              s.begin() + static_cast<std::ptrdiff_t>(b));
}

class CudaForward : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { MLASPEC_SKIP_WITHOUT_GPU(); }
};

// Prefill (every row's logits, every layer captured), 4 decode steps, a verify block of 8 and the
// rest as one chunk, on the CPU and the CUDA runtime alike, in default and deterministic mode.
TEST_P(CudaForward, MatchesCpuRuntime) {
  const std::string name = GetParam();
  Model& cpu = cached(name, Device::kCPU);
  Model& gpu = cached(name, Device::kCUDA);
  ASSERT_EQ(gpu.device(), Device::kCUDA);
  const int vocab = cpu.config().vocab_size, L = cpu.config().num_hidden_layers;
  const int hidden = cpu.config().hidden_size;
  const std::vector<int32_t> seq = sequence(name, 100);
  const size_t P = 45;
  for (bool det : {false, true}) {
    ForwardOptions o;
    o.deterministic = det;
    for (int l = 0; l < L; ++l) o.capture_layers.push_back(l);
    Seq a(cpu, 128), b(gpu, 128);
    Errors logit, hid;
    const std::string tag = name + (det ? " deterministic" : " default");
    const auto step = [&](const std::vector<int32_t>& toks, LogitsMode mode, const char* what) {
      const RequestOutput ra = a.run(toks, mode, o);
      const RequestOutput rb = b.run(toks, mode, o);
      logit.add(compare_rows(rb.logits, ra.logits, vocab, kLogitRel, true, tag + " " + what));
      for (int l = 0; l < L; ++l) {
        hid.add(compare_rows(rb.hidden[static_cast<size_t>(l)], ra.hidden[static_cast<size_t>(l)],
                             hidden, kHiddenRel, false,
                             tag + " " + what + " hidden layer " + std::to_string(l)));
      }
    };
    step(slice(seq, 0, P), LogitsMode::kAll, "prefill");
    size_t pos = P;
    for (int s = 0; s < 4; ++s, ++pos) step({seq[pos]}, LogitsMode::kLast, "decode");
    step(slice(seq, pos, pos + 8), LogitsMode::kAll, "verify");
    pos += 8;
    step(slice(seq, pos, seq.size()), LogitsMode::kAll, "tail");
    std::printf(
        "[cuda vs cpu] %-40s logits: worst row %.2e, %d of %d rows over %.0e; hidden: "
        "worst row %.2e, %d of %d rows over %.0e\n",
        tag.c_str(), logit.worst, logit.over, logit.rows, kLogitRel, hid.worst, hid.over, hid.rows,
        kHiddenRel);
    EXPECT_LE(logit.over, kMaxRowsOver * logit.rows) << tag;
    EXPECT_LE(hid.over, kMaxRowsOver * hid.rows) << tag;
  }
}

// Chunked prefill (chunks of 7) + decode == one-shot prefill: bitwise in deterministic mode.
TEST_P(CudaForward, ChunkedPrefillAndDecodeEqualOneShot) {
  const std::string name = GetParam();
  Model& gpu = cached(name, Device::kCUDA);
  const int vocab = gpu.config().vocab_size;
  const std::vector<int32_t> seq = sequence(name, 100);
  for (bool det : {true, false}) {
    ForwardOptions o;
    o.deterministic = det;
    Seq one(gpu, 128), chunked(gpu, 128);
    const RequestOutput full = one.run(seq, LogitsMode::kAll, o);
    ForwardOptions oc = o;
    oc.max_chunk_tokens = 7;
    std::vector<float> got = chunked.run(slice(seq, 0, 60), LogitsMode::kAll, oc).logits;
    for (size_t p = 60; p < seq.size(); ++p) {
      const RequestOutput d = chunked.run({seq[p]}, LogitsMode::kLast, o);
      got.insert(got.end(), d.logits.begin(), d.logits.end());
    }
    ASSERT_EQ(got.size(), full.logits.size());
    if (det) {
      size_t diff = 0;
      for (size_t i = 0; i < got.size(); ++i) diff += std::memcmp(&got[i], &full.logits[i], 4) != 0;
      EXPECT_EQ(diff, 0u) << name << ": " << diff << " logits differ bitwise";
    } else {
      const Errors e =
          compare_rows(got, full.logits, vocab, kLogitRel, true, name + " chunked vs one-shot");
      std::printf("[chunked vs one-shot] %-22s default mode: worst row %.2e, %d of %d rows over\n",
                  name.c_str(), e.worst, e.over, e.rows);
      EXPECT_LE(e.over, kMaxRowsOver * e.rows) << name;
    }
  }
}

// Deterministic mode: a verify call of 8 tokens and 8 decode calls give the same bits.
TEST_P(CudaForward, DeterministicEightRowsEqualOneRow) {
  const std::string name = GetParam();
  Model& gpu = cached(name, Device::kCUDA);
  const std::vector<int32_t> seq = sequence(name, 48);
  ForwardOptions o;
  o.deterministic = true;
  o.capture_layers = {0, gpu.config().num_hidden_layers - 1};
  Seq a(gpu, 64), b(gpu, 64);
  a.run(slice(seq, 0, 40), LogitsMode::kLast, o);
  b.run(slice(seq, 0, 40), LogitsMode::kLast, o);
  const RequestOutput block = a.run(slice(seq, 40, 48), LogitsMode::kAll, o);
  std::vector<float> rows;
  std::vector<std::vector<float>> hidden(2);
  for (size_t p = 40; p < 48; ++p) {
    const RequestOutput d = b.run({seq[p]}, LogitsMode::kLast, o);
    rows.insert(rows.end(), d.logits.begin(), d.logits.end());
    for (size_t k = 0; k < 2; ++k)
      hidden[k].insert(hidden[k].end(), d.hidden[k].begin(), d.hidden[k].end());
  }
  ASSERT_EQ(rows.size(), block.logits.size());
  EXPECT_EQ(std::memcmp(rows.data(), block.logits.data(), rows.size() * 4), 0) << name << " logits";
  for (size_t k = 0; k < 2; ++k) {
    ASSERT_EQ(hidden[k].size(), block.hidden[k].size());
    EXPECT_EQ(std::memcmp(hidden[k].data(), block.hidden[k].data(), hidden[k].size() * 4), 0)
        << name << " hidden " << k;
  }
}

// A batch mixing a prefill chunk, a decode step and a verify block equals each request alone
// (bitwise: the runtime runs each request apart, as the CPU runtime does).
TEST_P(CudaForward, MixedBatchEqualsEachAlone) {
  const std::string name = GetParam();
  Model& gpu = cached(name, Device::kCUDA);
  const std::vector<int32_t> seq = sequence(name, 64);
  for (bool det : {true, false}) {
    ForwardOptions o;
    o.deterministic = det;
    o.capture_layers = {gpu.config().num_hidden_layers - 1};
    // Three requests on one pool with disjoint pages; each first gets a prefix of its own.
    const int pages_per = 4;  // 64 tokens
    kv::KvPool pool = kv::KvPool::create(gpu.kv_pool_spec(3 * pages_per, 16, DType::kBF16)).value();
    throw_if_error(pool.buffer().fill_bytes(0xff));
    std::vector<std::vector<int32_t>> pages(3);
    for (int r = 0; r < 3; ++r) {
      for (int j = 0; j < pages_per; ++j) pages[static_cast<size_t>(r)].push_back(j * 3 + r);
    }
    const auto positions = [](int32_t first, size_t n) {
      std::vector<int32_t> p(n);
      for (size_t i = 0; i < n; ++i) p[i] = first + static_cast<int32_t>(i);
      return p;
    };
    const std::vector<int32_t> pre1 = slice(seq, 0, 20), pre2 = slice(seq, 0, 30);
    const std::vector<int32_t> chunk = slice(seq, 0, 37), dec = {seq[20]}, ver = slice(seq, 30, 38);
    const std::vector<int32_t> p1 = positions(0, 20), p2 = positions(0, 30);
    const std::vector<int32_t> pc = positions(0, 37), pd = positions(20, 1), pv = positions(30, 8);
    const auto prefixes = [&]() {
      ForwardRequest a{pre1, p1, pages[1], LogitsMode::kNone};
      ForwardRequest b{pre2, p2, pages[2], LogitsMode::kNone};
      ASSERT_TRUE(gpu.forward({&a, 1}, pool, o).ok());
      ASSERT_TRUE(gpu.forward({&b, 1}, pool, o).ok());
    };
    std::vector<ForwardRequest> batch = {{chunk, pc, pages[0], LogitsMode::kAll},
                                         {dec, pd, pages[1], LogitsMode::kLast},
                                         {ver, pv, pages[2], LogitsMode::kAll}};
    prefixes();
    Result<ForwardOutput> together = gpu.forward(batch, pool, o);
    ASSERT_TRUE(together.ok()) << together.status().to_string();
    prefixes();
    for (size_t r = 0; r < 3; ++r) {
      Result<ForwardOutput> alone = gpu.forward({&batch[r], 1}, pool, o);
      ASSERT_TRUE(alone.ok()) << alone.status().to_string();
      const RequestOutput& x = together->requests[r];
      const RequestOutput& y = alone->requests[0];
      ASSERT_EQ(x.logits.size(), y.logits.size());
      EXPECT_EQ(std::memcmp(x.logits.data(), y.logits.data(), x.logits.size() * 4), 0)
          << name << " request " << r << (det ? " deterministic" : " default");
      EXPECT_EQ(std::memcmp(x.hidden[0].data(), y.hidden[0].data(), x.hidden[0].size() * 4), 0)
          << name << " request " << r << " hidden";
    }
  }
}

// Against transformers' goldens (tests/data/models/*/goldens.*): the whole golden sequence in one
// prefill, every row's logits vs HF with the attention op's bf16 rounding points.
TEST_P(CudaForward, MatchesTransformersGoldens) {
  const std::string name = GetParam();
  if (name == "target") GTEST_SKIP() << "no goldens for the shipped target";
  Model& gpu = cached(name, Device::kCUDA);
  const int vocab = gpu.config().vocab_size;
  const testing::Golden g = testing::load_golden(name);
  Errors all;
  for (const testing::GoldenPrompt& p : g.prompts) {
    const std::vector<int32_t> s = p.sequence();
    Seq q(gpu, static_cast<int>(s.size()) + 16);
    const RequestOutput out = q.run(s, LogitsMode::kAll);
    all.add(compare_rows(out.logits, p.logits_bf16, vocab, kLogitRel, true, name + " vs HF"));
  }
  std::printf("[cuda vs transformers] %-22s logits: worst row %.2e, %d of %d rows over %.0e\n",
              name.c_str(), all.worst, all.over, all.rows, kLogitRel);
  EXPECT_LE(all.over, kMaxRowsOver * all.rows) << name;
}

INSTANTIATE_TEST_SUITE_P(Models, CudaForward,
                         ::testing::Values("v3_qlora_moe_yarn", "v3_plain_q_tied", "v2_lite_greedy",
                                           "v2_group_limited_yarn", "kimi_k2_fp8", "target"));

TEST(CudaModel, RefusesAHostPool) {
  MLASPEC_SKIP_WITHOUT_GPU();
  Model& gpu = cached("v3_qlora_moe_yarn", Device::kCUDA);
  kv::KvPoolSpec spec = gpu.kv_pool_spec(4, 16, DType::kBF16);
  EXPECT_EQ(spec.device, Device::kCUDA);
  spec.device = Device::kCPU;
  kv::KvPool pool = kv::KvPool::create(spec).value();
  std::vector<int32_t> tok{1}, pos{0}, pages{0};
  ForwardRequest r{tok, pos, pages, LogitsMode::kLast};
  Result<ForwardOutput> out = gpu.forward({&r, 1}, pool);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("cuda runtime needs a cuda pool"), std::string::npos)
      << out.status().to_string();
}

// ---- timings of the shipped target (printed)
// -----------------------------------------------------

TEST(CudaModelPerf, ShippedTargetTimings) {
  MLASPEC_SKIP_WITHOUT_GPU();
  Model& gpu = cached("target", Device::kCUDA);
  const std::vector<int32_t> seq = sequence("target", 1024);
  using clock = std::chrono::steady_clock;
  const auto ms = [](clock::time_point a, clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  for (bool det : {false, true}) {
    ForwardOptions o;
    o.deterministic = det;
    {  // warm-up
      Seq w(gpu, 1024);
      w.run(slice(seq, 0, 512), LogitsMode::kLast, o);
    }
    Seq s(gpu, 1024);
    auto t0 = clock::now();
    s.run(slice(seq, 0, 512), LogitsMode::kLast, o);
    auto t1 = clock::now();
    const double prefill_ms = ms(t0, t1);
    t0 = clock::now();
    for (int i = 0; i < 64; ++i) s.run({seq[static_cast<size_t>(512 + i)]}, LogitsMode::kLast, o);
    t1 = clock::now();
    const double decode_ms = ms(t0, t1) / 64;
    t0 = clock::now();
    for (int i = 0; i < 16; ++i) {
      s.run(slice(seq, 576 + 8 * static_cast<size_t>(i), 584 + 8 * static_cast<size_t>(i)),
            LogitsMode::kAll, o);
    }
    t1 = clock::now();
    const double verify_ms = ms(t0, t1) / 16;
    std::printf(
        "[perf target] %-13s prefill 512: %.1f ms (%.0f tok/s); decode: %.3f ms/step "
        "(%.0f tok/s) at S~550; verify q_len 8: %.3f ms/step\n",
        det ? "deterministic" : "default", prefill_ms, 512 / (prefill_ms / 1e3), decode_ms,
        1e3 / decode_ms, verify_ms);
  }
}

}  // namespace
}  // namespace mlaspec::model
