// The CUDA runtime of Model (LoadOptions::device = kCUDA) against the CPU runtime (the oracle), on
// the golden checkpoints of tests/data/models and the shipped target (models/target):
//   - logits and captured hidden states within kLogitRel / kHiddenRel of the CPU runtime's,
//     relative to the call's largest |value| (bf16 activations at every GEMM input against the
//     CPU's f32), argmax equal where the CPU's top-2 gap exceeds twice the bound, on every row the
//     reference itself does not move under a bf16-sized perturbation (below);
//   - the same against transformers' goldens;
//   - a batch mixing prefills (1, 40 and a chunked 300 tokens), a decode step and verify blocks
//     equals each request alone, in any order: bitwise in deterministic mode, within the bounds
//     else, logits, hidden states and KV rows alike;
//   - chunked prefill + decode == one-shot: bitwise in deterministic mode, within the bound else;
//   - deterministic mode: a token's logits and hidden states are bitwise the same from a call of
//     8 new tokens and from 8 calls of 1;
//   - CUDA graph replay equals eager execution bitwise, in both modes;
//   - (spec::Engine with the CUDA target, with the DFlash drafter on the CPU and on the GPU:
//     dflash_cuda_test.cc)
//   - timings of the shipped target (printed; docs/perf/knowledge.md records them).
// Pools and the runtime's scratch are poisoned (0xff bytes: NaN), and every returned value must be
// finite, so an element no kernel wrote cannot pass unnoticed.
//
// Why rows the reference itself moves get a wider allowance. The golden checkpoints' random MoE
// routers have near ties: a token whose top-k (or group) margin is below the size of one bf16
// rounding picks another expert on the GPU, its row lands far from the CPU's (0.8 of the logits'
// range for v3_qlora_moe_yarn's row 8), and every later row that attends to its KV drifts past the
// bound too (transformers' own bf16 vs f32 on DeepSeek-V2-Lite shows the same flips). That is the
// reference's sensitivity, not a runtime bug, and a fixed count of tolerated rows cannot absorb
// one flip that propagates. So the test measures the sensitivity, with the CPU runtime itself:
// kProbes copies of the checkpoint with every weight w written as f32 w * (1 + e), e uniform in
// [-kProbeEps, kProbeEps] = [-2^-9, 2^-9] (round-to-nearest bf16 errs by up to 2^-8, about 2^-9.5
// on average; rounding the weights to bf16 would not do, most checkpoints already are bf16), run
// on the same calls. A row's spread is the largest deviation of a probe from the reference there;
// its allowance is max(bound, kSpreadFactor * spread). A row that no probe moves past
// bound / kSpreadFactor is held to the plain bound, argmax included; at most kStrayRows rows per
// check may exceed their allowance (a near tie the GPU's rounding flips and no probe happened to;
// for hidden states a token counts once for all captured layers, since a flip moves the token's
// residual stream at its layer and every later one: the shipped target's deterministic verify
// row 3 on an H100, 6.0e-2 in the logits and 7-11e-2 at hidden layers 1-5, with no probe moving
// it).
// Each check prints how many rows were sensitive. The probes find the GPU's flips: on the CPU, one
// of them moves v3_qlora_moe_yarn's prefill row 8 by 8.15e-1 and decode row 0 by 5.38e-1, and
// v3_plain_q_tied's tail row 39 by 1.87e-1, the GPU's 8.16e-1, 5.38e-1 and 1.86e-1; about a third
// of v3_qlora_moe_yarn's rows (row 8 and those after it) are sensitive, a few of the other models'.
// Why it still fails on a runtime bug: a RoPE layout, norm weight, scaling factor, softmax scale,
// expert or KV row gone wrong moves (nearly) every row past the bound, while the probes move only
// the rows at near ties and those attending to them; the check also requires at least
// kMinPlainFraction of the rows to be held to the plain bound, so a model whose rows are all
// sensitive cannot pass vacuously. CudaForwardCriterion.RejectsAWrongRuntime holds the CPU runtime
// on a wrong config or weight to this criterion and requires it to fail (94 of 100 rows over).
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "gpu_test_util.h"
#include "mlaspec/core/dtype.h"
#include "mlaspec/model/dflash.h"
#include "mlaspec/model/model.h"
#include "mlaspec/model/safetensors.h"
#include "mlaspec/model/sampling.h"
#include "mlaspec/spec/dflash_drafter.h"
#include "mlaspec/spec/engine.h"
#include "mlaspec/tokenizer/tokenizer.h"
#include "model/model_test_util.h"

namespace mlaspec::model {
namespace {

// Bounds relative to the call's largest |value| of the CPU runtime (docs/model.md, "CUDA runtime").
constexpr float kLogitRel = 3e-2f;
constexpr float kHiddenRel = 3e-2f;
// On fp8 KV pools (MatchesCpuRuntimeOnFp8Kv) both bounds are kFp8BoundFactor times wider. The two
// runtimes' bf16 KV rows differ by bf16 roundings, and a row element lands on the other e4m3 code
// when it sits within one bf16 step of a rounding boundary: about 1 in 16 elements (e4m3's step
// is 16 of bf16's), each then off by one e4m3 step (2^-4 relative, 16x bf16's). Those flips are
// independent, so a score moves by ~16 / sqrt(16) = 4x what the bf16 rows alone move it. Measured
// (H100, 2026-12-06): the shipped target's fp8_tile rows that no probe moved reached 5.5e-2 in
// the logits and 9.1e-2 in the hidden states against the plain 3e-2.
constexpr float kFp8BoundFactor = 4.0f;
// And up to kFp8StrayRows rows per check over their allowance, not kStrayRows: a code flip moves
// a value 16x as far as a bf16 rounding does, so the near ties of MoE routing that the GPU's
// rounding can flip and no probe happens to are that much wider. Measured (H100): two such rows
// on v3_qlora_moe_yarn's fp8_tile pool (a verify row by 0.67, a tail row by 0.23), none on the
// other models; a runtime bug moves nearly every row (RejectsAWrongRuntime: 94 of 100).
constexpr int kFp8StrayRows = 3;

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

// One request on its own pool (page size 16, pages in reverse order, KV dtype `kv`), poisoned
// before use.
class Seq {
 public:
  Seq(Model& m, int max_tokens, DType kv = DType::kBF16) : model_(m) {
    const int pages = (max_tokens + 15) / 16;
    pool_ = std::make_unique<kv::KvPool>(kv::KvPool::create(m.kv_pool_spec(pages, 16, kv)).value());
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

// ---- the reference's own sensitivity (see the file comment)

constexpr int kProbes = 4;
constexpr float kProbeEps = 1.0f / 512;  // 2^-9: of the size of one bf16 rounding
constexpr float kSpreadFactor = 2.0f;
constexpr int kStrayRows = 1;
constexpr double kMinPlainFraction = 0.5;

// SplitMix64: the probes' perturbations, the same on every platform.
uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::vector<uint8_t> f32_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// A checkpoint directory's copy under the temp directory (removed by the caller): every
// safetensors file rewritten by `edit` (each tensor as f32; an fp8 weight dequantized with its
// block scales, which are dropped), the index's weight map following, config.json through
// `edit_config`.
namespace fs = std::filesystem;
using EditTensor = std::function<void(const std::string& tensor, std::vector<float>& values)>;
fs::path edited_copy(const std::string& name, const std::string& tag, const EditTensor& edit,
                     const std::function<void(nlohmann::json&)>& edit_config) {
  const fs::path src = model_path(name);
  const fs::path dir = fs::temp_directory_path() /
                       ("mlaspec_cuda_test_" + name + "_" + tag + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const Checkpoint ck = Checkpoint::open(src).value();
  const ModelConfig& c = cached(name, Device::kCPU).config();
  const auto is_fp8 = [&](const std::string& n) {
    const TensorInfo* t = ck.find(n);
    return t != nullptr && t->dtype == StDType::kF8E4M3;
  };
  const std::string kScale = "_scale_inv";
  std::set<std::string> dropped;
  for (const SafetensorsFile& f : ck.files()) {
    testing::StTensors out;
    for (const TensorInfo& t : f.tensors()) {
      if (t.name.ends_with(kScale) && is_fp8(t.name.substr(0, t.name.size() - kScale.size()))) {
        dropped.insert(t.name);
        continue;
      }
      std::vector<float> v(static_cast<size_t>(t.numel));
      throw_if_error(convert_to_f32(t, v));
      if (t.dtype == StDType::kF8E4M3) {
        const TensorInfo& st = *ck.find(t.name + kScale);
        std::vector<float> scale(static_cast<size_t>(st.numel));
        throw_if_error(convert_to_f32(st, scale));
        const int64_t cols = t.shape[1], br = c.fp8.block_rows, bc = c.fp8.block_cols;
        for (size_t i = 0; i < v.size(); ++i) {
          const int64_t r = static_cast<int64_t>(i) / cols, col = static_cast<int64_t>(i) % cols;
          v[i] *= scale[static_cast<size_t>((r / br) * st.shape[1] + col / bc)];
        }
      }
      edit(t.name, v);
      out[t.name] = testing::StEntry{"F32", t.shape, f32_bytes(v)};
    }
    testing::write_file(dir / fs::path(f.name()).filename(), testing::safetensors_bytes(out));
  }
  for (const fs::directory_entry& e : fs::directory_iterator(src)) {
    const std::string file = e.path().filename().string();
    if (!e.is_regular_file() || e.path().extension() == ".safetensors") continue;
    if (file != "config.json" && file != "model.safetensors.index.json") continue;
    std::ifstream in(e.path());
    nlohmann::json j = nlohmann::json::parse(in);
    if (file == "config.json") {
      edit_config(j);
    } else {
      for (const std::string& d : dropped) j["weight_map"].erase(d);
    }
    std::ofstream(dir / file) << j.dump(2);
  }
  return dir;
}

// The CPU runtime on an edited copy of a checkpoint (the copy removed once loaded).
std::unique_ptr<Model> load_edited(const std::string& name, const std::string& tag,
                                   const EditTensor& edit,
                                   const std::function<void(nlohmann::json&)>& edit_config) {
  const fs::path dir = edited_copy(name, tag, edit, edit_config);
  LoadOptions o;
  o.attention_policy = "cpu_reference";
  Result<Model> m = Model::load(dir, o);
  fs::remove_all(dir);
  if (!m.ok()) throw Error(m.status());
  return std::make_unique<Model>(std::move(*m));
}

// Probe k of a checkpoint: every weight times (1 + e), e uniform in [-kProbeEps, kProbeEps].
Model& probe(const std::string& name, int k) {
  static std::map<std::pair<std::string, int>, std::unique_ptr<Model>> models;
  auto& slot = models[{name, k}];
  if (!slot) {
    uint64_t state = 0x5EED0000ull + static_cast<uint64_t>(k);
    const auto jitter = [&](const std::string&, std::vector<float>& v) {
      for (float& x : v) {
        const double u = static_cast<double>(splitmix(state) >> 11) * 0x1.0p-53;  // [0, 1)
        x *= 1.0f + kProbeEps * static_cast<float>(2 * u - 1);
      }
    };
    slot = load_edited(name, "probe" + std::to_string(k), jitter, [](nlohmann::json&) {});
  }
  return *slot;
}

// Each probe's logits of `seq` in one prefill.
std::vector<std::vector<float>> probe_logits(const std::string& name,
                                             const std::vector<int32_t>& seq) {
  std::vector<std::vector<float>> out;
  for (int k = 0; k < kProbes; ++k) {
    out.push_back(
        Seq(probe(name, k), static_cast<int>(seq.size())).run(seq, LogitsMode::kAll).logits);
  }
  return out;
}

// Row-wise errors relative to the call's max |ref| value.
struct Errors {
  float worst = 0.0f;  // largest row error (relative)
  int rows = 0;
  int over = 0;       // rows over their allowance
  int sensitive = 0;  // rows whose allowance exceeds the plain bound (the probes moved them)
  void add(const Errors& e) {
    worst = std::max(worst, e.worst);
    rows += e.rows;
    over += e.over;
    sensitive += e.sensitive;
  }
  // The criterion of the file comment.
  void expect_pass(const std::string& what, bool need_plain_rows = true,
                   int stray_rows = kStrayRows) const {
    EXPECT_LE(over, stray_rows) << what << ": " << over << " rows over their allowance";
    if (!need_plain_rows) return;
    EXPECT_GE(rows - sensitive, kMinPlainFraction * rows)
        << what << ": " << sensitive << " of " << rows
        << " rows sensitive, too few held to the plain bound";
  }
};

// Per row of ref [rows, width]: the largest deviation of a probe's row, relative to max |ref|.
std::vector<float> row_spread(const std::vector<std::vector<float>>& probes,
                              const std::vector<float>& ref, int width) {
  const float scale = std::max(max_abs(ref), 1e-20f);
  std::vector<float> spread(ref.size() / static_cast<size_t>(width), 0.0f);
  for (const std::vector<float>& p : probes) {
    EXPECT_EQ(p.size(), ref.size());
    if (p.size() != ref.size()) continue;
    for (size_t r = 0; r < spread.size(); ++r) {
      const size_t at = r * static_cast<size_t>(width);
      spread[r] = std::max(spread[r], testing::max_abs_diff(p.data() + at, ref.data() + at,
                                                            static_cast<size_t>(width)) /
                                          scale);
    }
  }
  return spread;
}

// `spread`: row_spread of the reference (empty: every row held to the plain bound).
// `over_rows`, when given, collects the rows over their allowance.
Errors compare_rows(const std::vector<float>& ours, const std::vector<float>& ref, int width,
                    float bound, bool check_argmax, const std::string& what,
                    const std::vector<float>& spread = {}, std::set<int>* over_rows = nullptr) {
  EXPECT_EQ(ours.size(), ref.size()) << what;
  Errors e;
  if (ours.size() != ref.size()) return e;
  const float scale = std::max(max_abs(ref), 1e-20f);
  e.rows = static_cast<int>(ref.size()) / width;
  for (int r = 0; r < e.rows; ++r) {
    const float* o = ours.data() + static_cast<size_t>(r) * width;
    const float* b = ref.data() + static_cast<size_t>(r) * width;
    const float rel = testing::max_abs_diff(o, b, static_cast<size_t>(width)) / scale;
    const float s = spread.empty() ? 0.0f : spread[static_cast<size_t>(r)];
    const float allowance = std::max(bound, kSpreadFactor * s);
    e.worst = std::max(e.worst, rel);
    e.sensitive += allowance > bound;
    if (rel > allowance) {
      ++e.over;
      if (over_rows != nullptr) over_rows->insert(r);
      std::printf("  %s row %d: %.2e over its allowance %.2e\n", what.c_str(), r, rel, allowance);
    } else if (rel > bound) {
      std::printf("  %s row %d: %.2e, sensitive (probes moved it %.2e)\n", what.c_str(), r, rel, s);
    } else if (check_argmax && allowance == bound && top2_gap(b, width) > 2 * bound * scale) {
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

// The CPU runtime, its probes and a runtime under test on the same calls: each step's rows compared
// with the criterion of the file comment.
class Comparison {
 public:
  // kv: every pool's dtype (the reference's, ours and the probes').
  Comparison(const std::string& name, Model& ours, int max_tokens, ForwardOptions o,
             std::string tag, DType kv = DType::kBF16)
      : ref_model_(cached(name, Device::kCPU)),
        ref_(ref_model_, max_tokens, kv),
        ours_(ours, max_tokens, kv),
        options_(std::move(o)),
        tag_(std::move(tag)),
        kv_(kv) {
    for (int k = 0; k < kProbes; ++k) probes_.emplace_back(probe(name, k), max_tokens, kv);
  }

  void step(const std::vector<int32_t>& toks, LogitsMode mode, const std::string& what) {
    const RequestOutput ref = ref_.run(toks, mode, options_);
    const RequestOutput ours = ours_.run(toks, mode, options_);
    std::vector<RequestOutput> probed;
    for (Seq& p : probes_) probed.push_back(p.run(toks, mode, options_));
    const auto field = [&](const auto& get) {
      std::vector<std::vector<float>> v;
      for (const RequestOutput& p : probed) v.push_back(get(p));
      return v;
    };
    const ModelConfig& c = ref_model_.config();
    const std::string at = tag_ + " " + what;
    const float widen = (kv_ != DType::kBF16) ? kFp8BoundFactor : 1.0f;
    logits_.add(compare_rows(ours.logits, ref.logits, c.vocab_size, kLogitRel * widen, true, at,
                             row_spread(field([](const RequestOutput& p) { return p.logits; }),
                                        ref.logits, c.vocab_size)));
    // A token over its allowance counts once for all captured layers: one routing flip the probes
    // missed moves that token's residual stream at its layer and at every later one.
    std::set<int> over_tokens;
    for (size_t l = 0; l < ref.hidden.size(); ++l) {
      const std::vector<float> spread = row_spread(
          field([l](const RequestOutput& p) { return p.hidden[l]; }), ref.hidden[l], c.hidden_size);
      Errors e = compare_rows(ours.hidden[l], ref.hidden[l], c.hidden_size, kHiddenRel * widen,
                              false, at + " hidden " + std::to_string(options_.capture_layers[l]),
                              spread, &over_tokens);
      e.over = 0;
      hidden_.add(e);
    }
    hidden_.over += static_cast<int>(over_tokens.size());
  }

  // Prints the totals and applies the criterion.
  void finish(const char* against) const {
    std::printf(
        "[%s] %-40s logits: worst row %.2e, %d of %d rows sensitive, %d over their allowance; "
        "hidden: worst row %.2e, %d of %d rows sensitive, %d tokens over\n",
        against, tag_.c_str(), logits_.worst, logits_.sensitive, logits_.rows, logits_.over,
        hidden_.worst, hidden_.sensitive, hidden_.rows, hidden_.over);
    // On fp8 pools a model with near-tie MoE routing can have a reference that moves most rows
    // under the probes (v3_qlora_moe_yarn: 98 of 100 rows on fp8_e4m3 at the plain bound): its
    // check then rests on the rows over their allowance alone, said so here, rather than fail on
    // a sensitivity the reference itself has.
    const bool chaotic = (kv_ != DType::kBF16) &&
                         (logits_.rows - logits_.sensitive < kMinPlainFraction * logits_.rows);
    if (chaotic) {
      std::printf(
          "[%s] %s: the reference itself moves most rows on this pool; only the rows over "
          "their allowance are checked\n",
          against, tag_.c_str());
    }
    const int strays = kv_ != DType::kBF16 ? kFp8StrayRows : kStrayRows;
    logits_.expect_pass(tag_ + " logits", !chaotic, strays);
    if (hidden_.rows > 0) hidden_.expect_pass(tag_ + " hidden", !chaotic, strays);
  }

 private:
  Model& ref_model_;
  Seq ref_, ours_;
  std::vector<Seq> probes_;
  ForwardOptions options_;
  std::string tag_;
  DType kv_;
  Errors logits_, hidden_;
};

// The calls of MatchesCpuRuntime: a prefill of 45 (every row's logits), 4 decode steps, a verify
// block of 8 and the rest of the 100 tokens as one chunk.
void run_calls(Comparison& c, const std::vector<int32_t>& seq) {
  const size_t P = 45;
  c.step(slice(seq, 0, P), LogitsMode::kAll, "prefill");
  size_t pos = P;
  for (int s = 0; s < 4; ++s, ++pos) c.step({seq[pos]}, LogitsMode::kLast, "decode");
  c.step(slice(seq, pos, pos + 8), LogitsMode::kAll, "verify");
  pos += 8;
  c.step(slice(seq, pos, seq.size()), LogitsMode::kAll, "tail");
}

// The CPU runtime (its probes measuring its sensitivity) against the CUDA runtime, every layer
// captured, in default and deterministic mode.
TEST_P(CudaForward, MatchesCpuRuntime) {
  const std::string name = GetParam();
  Model& gpu = cached(name, Device::kCUDA);
  ASSERT_EQ(gpu.device(), Device::kCUDA);
  // The load freed the layers' host weights after uploading them: what follows is computed from
  // the device's copies alone (the embedding and head stay on the host for a drafter).
  EXPECT_TRUE(gpu.weights().layers.empty()) << name;
  EXPECT_FALSE(gpu.weights().head().empty()) << name;
  const std::vector<int32_t> seq = sequence(name, 100);
  for (bool det : {false, true}) {
    ForwardOptions o;
    o.deterministic = det;
    for (int l = 0; l < gpu.config().num_hidden_layers; ++l) o.capture_layers.push_back(l);
    Comparison c(name, gpu, 128, o, name + (det ? " deterministic" : " default"));
    run_calls(c, seq);
    c.finish("cuda vs cpu");
  }
}

// Passes longer than kGroupedMoeMaxTokens in default mode take the host-launched expert path
// (cuBLAS's grouped GEMM, bf16 expert outputs): a 300-token prefill in one pass, then a
// 40-token one, every layer captured, against the CPU runtime by MatchesCpuRuntime's criterion.
TEST_P(CudaForward, LongPassesMatchCpuRuntime) {
  const std::string name = GetParam();
  Model& gpu = cached(name, Device::kCUDA);
  const std::vector<int32_t> seq = sequence(name, 340);
  ForwardOptions o;
  for (int l = 0; l < gpu.config().num_hidden_layers; ++l) o.capture_layers.push_back(l);
  Comparison c(name, gpu, 352, o, name + " default, long passes");
  c.step(slice(seq, 0, 300), LogitsMode::kAll, "prefill of 300");
  c.step(slice(seq, 300, 340), LogitsMode::kAll, "prefill of 40");
  c.finish("cuda vs cpu");
}

// fp8 and fp8_tile KV pools: the CUDA runtime (its KV writer quantizing on the device, the CUDA
// backends reading the codes) against the CPU runtime on a pool of the same dtype, the same
// criterion (the probes run on that dtype too, so a KV value near a rounding boundary of e4m3,
// where the two runtimes' bf16 rows can land on different codes, shows as sensitivity), default
// mode, the last layer's hidden states captured.
TEST_P(CudaForward, MatchesCpuRuntimeOnFp8Kv) {
  const std::string name = GetParam();
  Model& gpu = cached(name, Device::kCUDA);
  const std::vector<int32_t> seq = sequence(name, 100);
  for (DType kv : {DType::kFP8E4M3, DType::kFP8Tile}) {
    ForwardOptions o;
    o.capture_layers.push_back(gpu.config().num_hidden_layers - 1);
    Comparison c(name, gpu, 128, o, name + " kv " + std::string(dtype_name(kv)), kv);
    run_calls(c, seq);
    c.finish("cuda vs cpu");
  }
}

// The criterion can fail: the CPU runtime on a copy of the checkpoint carrying a runtime-sized
// mistake, held to the criterion in place of the CUDA runtime, is rejected. The mistakes: RoPE's
// pair layout swapped (interleaved vs halves), routed_scaling_factor dropped, the kv_a_layernorm
// weight not applied; on a bf16 pool and on an fp8_e4m3 one (fp8's wider criterion). (A norm eps of
// 1e-3 instead of 1e-6 moves these checkpoints' logits by 5e-3, below any bound bf16 activations
// allow: no bound of this test can see it.) Needs no GPU.
TEST(CudaForwardCriterion, RejectsAWrongRuntime) {
  const std::string name = "v3_qlora_moe_yarn";
  const std::vector<int32_t> seq = sequence(name, 100);
  const auto weights_as_they_are = [](const std::string&, std::vector<float>&) {};
  const auto config_as_it_is = [](nlohmann::json&) {};
  struct Bug {
    const char* what;
    EditTensor edit;
    std::function<void(nlohmann::json&)> edit_config;
  };
  const Bug bugs[] = {
      {"rope layout swapped", weights_as_they_are,
       [](nlohmann::json& j) { j["rope_interleave"] = !j.value("rope_interleave", true); }},
      {"routed_scaling_factor dropped", weights_as_they_are,
       [](nlohmann::json& j) { j["routed_scaling_factor"] = 1.0; }},
      {"kv_a_layernorm weight not applied",
       [](const std::string& t, std::vector<float>& v) {
         if (t.ends_with("kv_a_layernorm.weight")) std::fill(v.begin(), v.end(), 1.0f);
       },
       config_as_it_is},
  };
  for (const Bug& bug : bugs) {
    std::unique_ptr<Model> wrong = load_edited(name, "bug", bug.edit, bug.edit_config);
    ForwardOptions o;
    o.capture_layers = {0, wrong->config().num_hidden_layers - 1};
    // The bf16 criterion and fp8's wider one (MatchesCpuRuntimeOnFp8Kv: 4x the bounds, 3 stray
    // rows, no plain-row minimum where the reference is chaotic) must both reject it.
    for (DType kv : {DType::kBF16, DType::kFP8E4M3}) {
      const std::string tag = name + " with " + bug.what + " kv " + std::string(dtype_name(kv));
      Comparison c(name, *wrong, 128, o, tag, kv);
      ::testing::TestPartResultArray failures;
      {
        ::testing::ScopedFakeTestPartResultReporter reporter(
            ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
        run_calls(c, seq);
        c.finish("wrong cpu vs cpu");
      }
      EXPECT_GT(failures.size(), 0) << tag << " passed the criterion";
    }
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
      // Both sides are the GPU's, but their f32 sums differ, and a bf16 rounding they flip can
      // flip a near tie as the CPU's do: the probes' spread on the whole sequence sets the
      // allowances.
      const std::vector<std::vector<float>> probed = probe_logits(name, seq);
      const RequestOutput ref = Seq(cached(name, Device::kCPU), 128).run(seq, LogitsMode::kAll);
      const Errors e =
          compare_rows(got, full.logits, vocab, kLogitRel, true, name + " chunked vs one-shot",
                       row_spread(probed, ref.logits, vocab));
      std::printf(
          "[chunked vs one-shot] %-22s default mode: worst row %.2e, %d of %d rows sensitive, "
          "%d over their allowance\n",
          name.c_str(), e.worst, e.sensitive, e.rows, e.over);
      e.expect_pass(name + " chunked vs one-shot");
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

// ---- one forward of a mixed batch == each request alone

// The CUDA attention backends serve 8 .. 128 heads; a checkpoint outside that range is left out
// of the batch test (engine_lossless_cuda_test.cc does the same).
bool cuda_serves(const std::string& name) {
  std::ifstream in(model_path(name) + "/config.json");
  const int heads = nlohmann::json::parse(in).at("num_attention_heads").get<int>();
  return heads >= 8 && heads <= 128;
}

// A request of the batch: `context` tokens already in the pool, `tokens` new ones.
struct BatchRequest {
  const char* what;
  int context, tokens;
  LogitsMode mode;
};
// clang-format off
const std::vector<BatchRequest> kBatch = {
    {"prefill 1",                       0,   1, LogitsMode::kAll},
    {"prefill 40 (two query blocks)",   0,  40, LogitsMode::kAll},
    {"prefill 300 (chunked)",           0, 300, LogitsMode::kLast},
    {"decode after 50",                50,   1, LogitsMode::kLast},
    {"verify 8 after 70",              70,   8, LogitsMode::kAll},
    {"verify 3 after 33",              33,   3, LogitsMode::kNone},
};
// clang-format on

// One pool with a page table per kBatch request (pages shuffled across requests, the same in every
// instance), poisoned, and the contexts of `with_context` prefilled, each alone.
class BatchPool {
 public:
  static constexpr int kPage = 16;

  BatchPool(Model& m, const std::vector<int32_t>& seq, const std::vector<size_t>& with_context,
            const ForwardOptions& o)
      : model_(m) {
    std::vector<int> first_page;
    int pages = 0;
    for (const BatchRequest& r : kBatch) {
      first_page.push_back(pages);
      pages += (r.context + r.tokens + kPage - 1) / kPage;
    }
    std::vector<int32_t> ids(static_cast<size_t>(pages));
    std::iota(ids.begin(), ids.end(), 0);
    uint64_t state = 7;
    for (size_t i = ids.size() - 1; i > 0; --i) std::swap(ids[i], ids[splitmix(state) % (i + 1)]);
    pool_ = std::make_unique<kv::KvPool>(
        kv::KvPool::create(m.kv_pool_spec(pages, kPage, DType::kBF16)).value());
    throw_if_error(pool_->buffer().fill_bytes(0xff));
    for (size_t r = 0; r < kBatch.size(); ++r) {
      const BatchRequest& b = kBatch[r];
      const int n = (b.context + b.tokens + kPage - 1) / kPage;
      pages_.emplace_back(ids.begin() + first_page[r], ids.begin() + first_page[r] + n);
      const size_t start = 9 * r;  // each request its own tokens
      tokens_.push_back(slice(seq, start + static_cast<size_t>(b.context),
                              start + static_cast<size_t>(b.context + b.tokens)));
      positions_.emplace_back(static_cast<size_t>(b.tokens));
      std::iota(positions_.back().begin(), positions_.back().end(), b.context);
    }
    ForwardOptions prefill = o;
    prefill.capture_layers.clear();
    for (size_t r : with_context) {
      const int ctx = kBatch[r].context;
      if (ctx == 0) continue;
      const std::vector<int32_t> toks = slice(seq, 9 * r, 9 * r + static_cast<size_t>(ctx));
      std::vector<int32_t> pos(toks.size());
      std::iota(pos.begin(), pos.end(), 0);
      const ForwardRequest req{toks, pos, pages_[r], LogitsMode::kNone};
      throw_if_error(m.forward({&req, 1}, *pool_, prefill).status());
    }
  }

  // Requests `order` (indices into kBatch) in one forward; outputs in kBatch order.
  std::vector<RequestOutput> forward(const std::vector<size_t>& order, const ForwardOptions& o) {
    std::vector<ForwardRequest> batch;
    for (size_t r : order) {
      batch.push_back({tokens_[r], positions_[r], pages_[r], kBatch[r].mode});
    }
    Result<ForwardOutput> out = model_.forward(batch, *pool_, o);
    if (!out.ok()) throw Error(out.status());
    host_.clear();
    std::vector<RequestOutput> by_request(kBatch.size());
    for (size_t i = 0; i < order.size(); ++i) by_request[order[i]] = std::move(out->requests[i]);
    return by_request;
  }

  // Request r's KV rows in layer l, positions [0, context + tokens), as f32.
  std::vector<float> kv_rows(size_t r, int l) {
    if (host_.empty()) host_ = mlaspec::testing::download<uint16_t>(pool_->buffer());
    const int64_t width = pool_->row_elems();
    const int len = kBatch[r].context + kBatch[r].tokens;
    std::vector<float> rows;
    for (int p = 0; p < len; ++p) {
      const int64_t slot = int64_t{pages_[r][static_cast<size_t>(p / kPage)]} * kPage + p % kPage;
      const uint16_t* row = host_.data() + (l * pool_->num_slots() + slot) * width;
      for (int64_t i = 0; i < width; ++i) rows.push_back(bf16_bits_to_float(row[i]));
    }
    return rows;
  }

 private:
  Model& model_;
  std::unique_ptr<kv::KvPool> pool_;
  std::vector<std::vector<int32_t>> pages_, tokens_, positions_;
  std::vector<uint16_t> host_;  // the pool's bytes after the last forward
};

// Bitwise in deterministic mode; else within `bound` (kStrayRows rows may pass it: the fused
// batch's f32 sums differ from the single request's, and a bf16 rounding they flip can flip a
// router's near tie). Every value finite.
void expect_same(const std::vector<float>& batch, const std::vector<float>& alone, int width,
                 float bound, bool det, const std::string& what) {
  ASSERT_EQ(batch.size(), alone.size()) << what;
  size_t bad = 0;
  for (float v : batch) bad += !std::isfinite(v);
  EXPECT_EQ(bad, 0u) << what << ": non-finite values";
  if (det) {
    EXPECT_EQ(std::memcmp(batch.data(), alone.data(), batch.size() * 4), 0)
        << what << " differs bitwise";
  } else {
    EXPECT_LE(compare_rows(batch, alone, width, bound, false, what).over, kStrayRows) << what;
  }
}

// One forward of kBatch (prefills of 1, 40 and 300 tokens, a decode step, verify blocks of 8 and
// 3; logits kAll / kLast / kNone; every layer captured), in three orders, equals each request
// alone in a fresh identical pool: logits, hidden states and every KV row of the request.
TEST_P(CudaForward, MixedBatchEqualsEachAlone) {
  const std::string name = GetParam();
  if (!cuda_serves(name)) GTEST_SKIP() << name << ": heads outside the CUDA backends' range";
  Model& gpu = cached(name, Device::kCUDA);
  const ModelConfig& c = gpu.config();
  const std::vector<int32_t> seq = sequence(name, 400);
  std::vector<size_t> in_order(kBatch.size());
  std::iota(in_order.begin(), in_order.end(), 0);
  const std::vector<std::vector<size_t>> orders = {
      in_order, {in_order.rbegin(), in_order.rend()}, {3, 0, 5, 2, 4, 1}};
  for (bool det : {true, false}) {
    ForwardOptions o;
    o.deterministic = det;
    for (int l = 0; l < c.num_hidden_layers; ++l) o.capture_layers.push_back(l);
    std::vector<RequestOutput> alone;
    std::vector<std::vector<std::vector<float>>> alone_kv;  // [request][layer]
    for (size_t r = 0; r < kBatch.size(); ++r) {
      BatchPool p(gpu, seq, {r}, o);
      alone.push_back(std::move(p.forward({r}, o)[r]));
      alone_kv.emplace_back();
      for (int l = 0; l < c.num_hidden_layers; ++l) alone_kv.back().push_back(p.kv_rows(r, l));
    }
    for (const std::vector<size_t>& order : orders) {
      BatchPool p(gpu, seq, in_order, o);
      const std::vector<RequestOutput> together = p.forward(order, o);
      std::string tag = name + (det ? " deterministic" : " default") + " order";
      for (size_t r : order) tag += " " + std::to_string(r);
      for (size_t r = 0; r < kBatch.size(); ++r) {
        const std::string what = tag + ", " + kBatch[r].what;
        expect_same(together[r].logits, alone[r].logits, c.vocab_size, kLogitRel, det,
                    what + " logits");
        ASSERT_EQ(together[r].hidden.size(), alone[r].hidden.size()) << what;
        for (int l = 0; l < c.num_hidden_layers; ++l) {
          const size_t li = static_cast<size_t>(l);
          expect_same(together[r].hidden[li], alone[r].hidden[li], c.hidden_size, kHiddenRel, det,
                      what + " hidden " + std::to_string(l));
          expect_same(p.kv_rows(r, l), alone_kv[r][li],
                      static_cast<int>(kv::KvLayout::mla().row_elems()), kHiddenRel, det,
                      what + " kv layer " + std::to_string(l));
        }
      }
    }
  }
}

// results[0] (graphs off) and results[1] (on): every output bitwise equal.
void expect_graphs_equal_eager(const std::vector<std::vector<float>> (&results)[2],
                               const std::string& what) {
  ASSERT_EQ(results[0].size(), results[1].size()) << what;
  for (size_t i = 0; i < results[0].size(); ++i) {
    ASSERT_EQ(results[0][i].size(), results[1][i].size()) << what << " output " << i;
    EXPECT_EQ(std::memcmp(results[0][i].data(), results[1][i].data(), results[0][i].size() * 4), 0)
        << what << ": output " << i << " differs between graph replay and eager";
  }
}

// CUDA graphs (ForwardOptions::cuda_graphs): the same calls with graphs on and off give the same
// bits, in both modes: a prefill of 40, eight decode steps (one shape: replays with new tokens,
// positions and slots), three verify blocks of 8 with two captured layers, and one fused batch of
// a decode, a verify of 8 and one of 3. The graph counters prove the graphs ran (and were
// replayed, not only captured) and that the eager run took none.
TEST_P(CudaForward, GraphReplayEqualsEager) {
  const std::string name = GetParam();
  if (!cuda_serves(name)) GTEST_SKIP() << name << ": heads outside the CUDA backends' range";
  Model& gpu = cached(name, Device::kCUDA);
  const ModelConfig& c = gpu.config();
  const std::vector<int32_t> seq = sequence(name, 400);
  for (bool det : {true, false}) {
    std::vector<std::vector<float>> results[2];  // [graphs off, on]: every output, in call order
    for (bool graphs : {false, true}) {
      ForwardOptions o;
      o.deterministic = det;
      o.cuda_graphs = graphs;
      const CudaGraphStats before = gpu.cuda_graph_stats();
      std::vector<std::vector<float>>& got = results[graphs ? 1 : 0];
      Seq s(gpu, 80);
      got.push_back(s.run(slice(seq, 0, 40), LogitsMode::kAll, o).logits);
      for (size_t p = 40; p < 48; ++p) got.push_back(s.run({seq[p]}, LogitsMode::kLast, o).logits);
      ForwardOptions oc = o;
      oc.capture_layers = {0, c.num_hidden_layers - 1};
      for (size_t p = 48; p < 72; p += 8) {
        const RequestOutput r = s.run(slice(seq, p, p + 8), LogitsMode::kAll, oc);
        got.push_back(r.logits);
        for (const std::vector<float>& h : r.hidden) got.push_back(h);
      }
      BatchPool bp(gpu, seq, {3, 4, 5}, o);
      for (const RequestOutput& r : bp.forward({3, 4, 5}, o)) got.push_back(r.logits);
      for (size_t r : {3, 4, 5}) {
        for (int l = 0; l < c.num_hidden_layers; ++l) got.push_back(bp.kv_rows(r, l));
      }
      const CudaGraphStats after = gpu.cuda_graph_stats();
      const int64_t graph_passes = after.graph_passes - before.graph_passes;
      if (graphs) {
        EXPECT_GT(graph_passes, 10) << name;
        EXPECT_GT(after.replayed - before.replayed, after.captured - before.captured) << name;
        // Attention ran inside the graphs (each pass shape's first pass may run it eagerly while
        // the backend's workspace grows).
        EXPECT_GE(after.attention_graph_passes - before.attention_graph_passes, graph_passes - 4)
            << name;
        std::printf(
            "[graphs] %-22s %s: %lld passes from graphs, %lld segments captured, %lld replayed\n",
            name.c_str(), det ? "deterministic" : "default", static_cast<long long>(graph_passes),
            static_cast<long long>(after.captured - before.captured),
            static_cast<long long>(after.replayed - before.replayed));
      } else {
        EXPECT_EQ(graph_passes, 0) << name;
      }
    }
    expect_graphs_equal_eager(results, name + (det ? " deterministic" : " default"));
  }
}

// Attention inside the graphs (runtime.cc "CUDA graphs"): one graph per pass key, which names
// each attention call's backend and launch. Decode steps alternate the dispatcher's policy between
// cuda_fold and cuda_rowwise and cross S = 256, where the block table's power-of-two width
// doubles (16 -> 32 pages of 16), then a verify block runs under auto: graphs on and off give the
// same bits (fold == rowwise bitwise), each step's attention ran inside its graph, each backend
// got its own graphs on each side of the boundary and exactly its steps' calls counted, and the
// policy switches between replays without a recapture. (A new split plan as a key change is
// CudaVerifyGraph.ReplayKeyNamesTheLaunch's: deterministic mode's fixed 1024-token chunks are past
// these contexts, and default mode's adaptive 256-token chunks split at S = 256 too, where the
// table's width doubles.)
TEST_P(CudaForward, AttentionGraphsFollowTheBackendAndThePlan) {
  const std::string name = GetParam();
  if (!cuda_serves(name)) GTEST_SKIP() << name << ": heads outside the CUDA backends' range";
  Model& gpu = cached(name, Device::kCUDA);
  const int L = gpu.config().num_hidden_layers;
  attn::Dispatcher& d = gpu.dispatcher();
  struct RestorePolicy {
    attn::Dispatcher& d;
    ~RestorePolicy() { (void)d.set_policy(attn::DispatchPolicy::parse("auto")); }
  } restore{d};
  const int fold = d.registry().index_of("cuda_fold").value();
  const int rowwise = d.registry().index_of("cuda_rowwise").value();
  const std::vector<int32_t> seq = sequence(name, 400);
  constexpr size_t kPrompt = 248, kSteps = 16;  // decode at S = 249 .. 264
  for (bool det : {true, false}) {
    std::vector<std::vector<float>> results[2];
    for (bool graphs : {false, true}) {
      ForwardOptions o;
      o.deterministic = det;
      o.cuda_graphs = graphs;
      ASSERT_TRUE(d.set_policy(attn::DispatchPolicy::parse("auto")).ok());
      Seq s(gpu, 400);
      s.run(slice(seq, 0, kPrompt), LogitsMode::kLast, o);  // eager: longer than a graph pass
      const CudaGraphStats before = gpu.cuda_graph_stats();
      const attn::BackendCounters fold0 = d.counters(fold), row0 = d.counters(rowwise);
      for (size_t k = 0; k < kSteps; ++k) {
        ASSERT_TRUE(
            d.set_policy(attn::DispatchPolicy::parse(k % 2 == 0 ? "cuda_fold" : "cuda_rowwise"))
                .ok());
        results[graphs].push_back(s.run({seq[kPrompt + k]}, LogitsMode::kLast, o).logits);
      }
      const uint64_t fold_calls = d.counters(fold).calls - fold0.calls;
      const uint64_t row_calls = d.counters(rowwise).calls - row0.calls;
      ASSERT_TRUE(d.set_policy(attn::DispatchPolicy::parse("auto")).ok());
      results[graphs].push_back(
          s.run(slice(seq, kPrompt + kSteps, kPrompt + kSteps + 8), LogitsMode::kAll, o).logits);
      const CudaGraphStats after = gpu.cuda_graph_stats();
      // Every decode step's L calls are counted on its backend, once, graphs or not.
      EXPECT_EQ(fold_calls, kSteps / 2 * L) << name;
      EXPECT_EQ(row_calls, kSteps / 2 * L) << name;
      if (!graphs) continue;
      const int64_t whole = after.attention_graph_passes - before.attention_graph_passes;
      const int64_t captured = after.captured - before.captured;
      const int64_t replayed = after.replayed - before.replayed;
      std::printf(
          "[graphs] %-22s %s: %lld of %zu passes with attention in the graph, %lld graphs "
          "captured, %lld replayed; cuda_fold %llu calls, cuda_rowwise %llu\n",
          name.c_str(), det ? "deterministic" : "default", static_cast<long long>(whole),
          kSteps + 1, static_cast<long long>(captured), static_cast<long long>(replayed),
          static_cast<unsigned long long>(fold_calls), static_cast<unsigned long long>(row_calls));
      // Every pass runs from a whole-pass graph (one whose backend had to grow its split
      // workspace first would run its attention eagerly: not here, the graphs-off run grew both).
      EXPECT_GE(whole, static_cast<int64_t>(kSteps) - 2) << name;
      // A graph per backend on each side of S = 256 and one for the verify block: far fewer
      // than the passes.
      EXPECT_GE(captured, 4) << name;
      EXPECT_LE(captured, 8) << name;
      EXPECT_GT(replayed, captured) << name;
    }
    expect_graphs_equal_eager(results, name + (det ? " deterministic" : " default"));
  }
}

// The launch-saving forms (the defaults: shared experts on their own stream, the experts'
// gather + gate_up + SwiGLU in one GEMV, routing and plan in one launch, the combine inside the
// next norm, the KV rows' norm + RoPE in one kernel)
// against their A/B switches all set the other way (MLASPEC_CUDA_SHARED=serial,
// MLASPEC_CUDA_SWIGLU, _ROUTE, _COMBINE and _MLA_IN=separate; a second load of the checkpoint):
// the same sums in the same order, so the same bits, in both modes, eager and from graphs: a
// prefill of 40, decode steps (graph replays), a verify block of 8 and a 160-token pass (the
// host-launched experts in default mode).
TEST_P(CudaForward, LaunchFusionsKeepTheBits) {
  const std::string name = GetParam();
  if (!cuda_serves(name)) GTEST_SKIP() << name << ": heads outside the CUDA backends' range";
  Model& beside = cached(name, Device::kCUDA);
  const std::pair<const char*, const char*> switches[] = {
      {"MLASPEC_CUDA_SHARED", "serial"},   {"MLASPEC_CUDA_SWIGLU", "separate"},
      {"MLASPEC_CUDA_ROUTE", "separate"},  {"MLASPEC_CUDA_COMBINE", "separate"},
      {"MLASPEC_CUDA_MLA_IN", "separate"}, {"MLASPEC_CUDA_PDL", "off"}};
  for (const auto& [var, value] : switches) ASSERT_EQ(::setenv(var, value, 1), 0);
  LoadOptions lo;
  lo.device = Device::kCUDA;
  lo.attention_policy = "auto";
  Result<Model> loaded = Model::load(model_path(name), lo);
  for (const auto& [var, value] : switches) ::unsetenv(var);
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  Model& serial = *loaded;
  const std::vector<int32_t> seq = sequence(name, 400);
  for (bool det : {true, false}) {
    for (bool graphs : {false, true}) {
      ForwardOptions o;
      o.deterministic = det;
      o.cuda_graphs = graphs;
      const std::string what =
          name + (det ? " deterministic" : " default") + (graphs ? ", graphs" : ", eager");
      Seq a(beside, 400), b(serial, 400);
      auto same = [&](const std::vector<int32_t>& tokens, LogitsMode mode, const char* step) {
        const std::vector<float> x = a.run(tokens, mode, o).logits;
        const std::vector<float> y = b.run(tokens, mode, o).logits;
        ASSERT_EQ(x.size(), y.size()) << what << " " << step;
        EXPECT_EQ(std::memcmp(x.data(), y.data(), x.size() * 4), 0) << what << " " << step;
      };
      same(slice(seq, 0, 40), LogitsMode::kAll, "prefill 40");
      for (size_t p = 40; p < 44; ++p) same({seq[p]}, LogitsMode::kLast, "decode");
      same(slice(seq, 44, 52), LogitsMode::kAll, "verify 8");
      same(slice(seq, 52, 212), LogitsMode::kAll, "160-token pass");
    }
  }
}

// ForwardOptions::argmax_only on the GPU (the argmax kernel inside the last graph segment): the
// ids equal model::argmax_rows of the same calls' logits, both modes, decode and verify shapes and
// a fused batch, and the logits stay empty.
TEST_P(CudaForward, ArgmaxOnlyIsTheLogitsArgmax) {
  const std::string name = GetParam();
  if (!cuda_serves(name)) GTEST_SKIP() << name << ": heads outside the CUDA backends' range";
  Model& gpu = cached(name, Device::kCUDA);
  const int vocab = gpu.config().vocab_size;
  const std::vector<int32_t> seq = sequence(name, 400);
  for (bool det : {true, false}) {
    ForwardOptions o;
    o.deterministic = det;
    ForwardOptions ids = o;
    ids.argmax_only = true;
    Seq a(gpu, 80), b(gpu, 80);
    const auto check = [&](const RequestOutput& full, const RequestOutput& got,
                           const std::string& what) {
      EXPECT_TRUE(got.logits.empty()) << what;
      EXPECT_EQ(got.argmax, model::argmax_rows(full.logits, vocab)) << name << " " << what;
    };
    check(a.run(slice(seq, 0, 40), LogitsMode::kAll, o),
          b.run(slice(seq, 0, 40), LogitsMode::kAll, ids), "prefill 40");
    for (size_t p = 40; p < 44; ++p) {
      check(a.run({seq[p]}, LogitsMode::kLast, o), b.run({seq[p]}, LogitsMode::kLast, ids),
            "decode");
    }
    check(a.run(slice(seq, 44, 52), LogitsMode::kAll, o),
          b.run(slice(seq, 44, 52), LogitsMode::kAll, ids), "verify 8");
    BatchPool pa(gpu, seq, {3, 4, 5}, o), pb(gpu, seq, {3, 4, 5}, o);
    const std::vector<RequestOutput> fa = pa.forward({3, 4, 5}, o), fb = pb.forward({3, 4, 5}, ids);
    for (size_t r : {3, 4}) check(fa[r], fb[r], std::string("fused ") + kBatch[r].what);
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
    const int max_tokens = static_cast<int>(s.size()) + 16;
    const RequestOutput out = Seq(gpu, max_tokens).run(s, LogitsMode::kAll);
    // The CPU runtime holds the goldens to ~1e-5 (golden_test.cc): its probes' spread around them
    // is the goldens' own sensitivity.
    all.add(compare_rows(out.logits, p.logits_bf16, vocab, kLogitRel, true, name + " vs HF",
                         row_spread(probe_logits(name, s), p.logits_bf16, vocab)));
  }
  std::printf(
      "[cuda vs transformers] %-22s logits: worst row %.2e, %d of %d rows sensitive, %d over "
      "their allowance\n",
      name.c_str(), all.worst, all.sensitive, all.rows, all.over);
  all.expect_pass(name + " vs HF");
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

// The phase profiler (Model::set_phase_profiling): off by default and empty; on, a forward of the
// MoE target reports every phase of its layers, and after turning it off
// and resetting nothing accumulates; the logits are the same bits with it on or off (it only
// records events).
TEST(CudaModel, PhaseProfileCoversTheForward) {
  MLASPEC_SKIP_WITHOUT_GPU();
  Model& gpu = cached("v3_qlora_moe_yarn", Device::kCUDA);
  const auto rows_of = [](const std::string& report) {
    return std::count(report.begin(), report.end(), '\n') - 1;  // less the header
  };
  const std::vector<int32_t> tokens = {3, 17, 42, 5, 9};
  ForwardOptions o;
  o.deterministic = true;
  const auto logits = [&] {
    Seq seq(gpu, 16);
    return seq.run(tokens, LogitsMode::kLast, o).logits;
  };
  gpu.set_phase_profiling(false);
  gpu.phase_report(true);
  const std::vector<float> plain = logits();
  EXPECT_EQ(rows_of(gpu.phase_report(true)), 0);
  gpu.set_phase_profiling(true);
  const std::vector<float> profiled = logits();
  const std::string report = gpu.phase_report(true);
  gpu.set_phase_profiling(false);
  for (const char* phase :
       {"uploads, embed", "mla in proj", "kv write", "q absorb", "attention", "mla out proj",
        "moe router", "moe experts", "moe combine", "dense mlp", "norms, adds", "lm_head"}) {
    EXPECT_NE(report.find(std::string("  ") + phase), std::string::npos)
        << phase << " missing from\n"
        << report;
  }
  EXPECT_EQ(std::memcmp(plain.data(), profiled.data(), plain.size() * sizeof(float)), 0);
  logits();
  EXPECT_EQ(rows_of(gpu.phase_report(true)), 0) << "profiling stayed on";
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
