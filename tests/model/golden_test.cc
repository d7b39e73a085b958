// The CPU forward against transformers' goldens (python/golden/make_model_goldens.py), for every
// golden checkpoint. Bounds, relative to the prompt's largest |logit| (docs/model.md says why):
//   f32 mode (ForwardOptions::f32_attention) vs plain HF f32: every logit within 1e-5.
//   The runtime path (bf16 at the attention op's boundary) vs HF with the same bf16 rounding
//     points: within 5e-3; vs plain HF f32: within 2e-2. Argmax equal at every row whose top-2
//     gap exceeds twice the bound.
//   The 32-token greedy continuation is identical to HF's.
#include <gtest/gtest.h>

#include "model/model_test_util.h"

namespace mlaspec::model::testing {
namespace {

constexpr float kF32Rel = 1e-5f;    // f32 mode vs HF f32 (measured: 1e-6)
constexpr float kBf16Rel = 5e-3f;   // runtime vs HF with the op's bf16 rounding points
constexpr float kLooseRel = 2e-2f;  // runtime vs HF f32
constexpr float kHiddenF32Rel = 1e-5f;
constexpr float kHiddenBf16Rel = 5e-3f;

class GoldenTest : public ::testing::TestWithParam<std::string> {
 protected:
  Model& model() { return cached_model(GetParam()); }
  const Golden& golden() {
    static std::map<std::string, Golden> cache;
    auto it = cache.find(GetParam());
    if (it == cache.end()) it = cache.emplace(GetParam(), load_golden(GetParam())).first;
    return it->second;
  }
  int vocab() { return model().config().vocab_size; }
};

// Compares `rows` rows of logits starting at sequence position `first` with both references.
void check_rows(const GoldenPrompt& g, int vocab, int64_t first, const std::vector<float>& ours,
                int rows, const std::string& what) {
  const size_t n = static_cast<size_t>(g.logits_bf16.size());
  const float scale_bf16 = max_abs(g.logits_bf16.data(), n);
  const float scale_hf = max_abs(g.logits_hf.data(), n);
  for (int r = 0; r < rows; ++r) {
    const float* o = ours.data() + static_cast<size_t>(r) * vocab;
    const float* b = g.logits_bf16.data() + static_cast<size_t>(first + r) * vocab;
    const float* h = g.logits_hf.data() + static_cast<size_t>(first + r) * vocab;
    const float d_bf16 = max_abs_diff(o, b, static_cast<size_t>(vocab));
    const float d_hf = max_abs_diff(o, h, static_cast<size_t>(vocab));
    EXPECT_LE(d_bf16, kBf16Rel * scale_bf16)
        << what << " position " << first + r << " vs bf16-rounded HF (max |logit| " << scale_bf16
        << ")";
    EXPECT_LE(d_hf, kLooseRel * scale_hf) << what << " position " << first + r << " vs HF f32";
    if (top2_gap(b, vocab) > 2 * kBf16Rel * scale_bf16) {
      EXPECT_EQ(argmax(o, vocab), argmax(b, vocab)) << what << " position " << first + r;
    }
    if (top2_gap(h, vocab) > 2 * kLooseRel * scale_hf) {
      EXPECT_EQ(argmax(o, vocab), argmax(h, vocab)) << what << " position " << first + r;
    }
  }
}

// Prefill the prompt (every row's logits), 4 decode steps, a verify block of 8, and the rest of
// the sequence as one more chunk: every position's logits against the goldens.
TEST_P(GoldenTest, PrefillDecodeVerifyMatchTransformers) {
  for (const GoldenPrompt& g : golden().prompts) {
    Session s(model(), 1);
    const std::vector<int32_t> seq = g.sequence();
    const int64_t P = static_cast<int64_t>(g.prompt.size());
    RequestOutput pre = s.run_one(0, g.prompt, LogitsMode::kAll);
    check_rows(g, vocab(), 0, pre.logits, static_cast<int>(P), "prefill");
    int64_t pos = P;
    for (int step = 0; step < 4; ++step, ++pos) {
      RequestOutput d = s.run_one(0, {seq[static_cast<size_t>(pos)]}, LogitsMode::kLast);
      check_rows(g, vocab(), pos, d.logits, 1, "decode");
    }
    std::vector<int32_t> block(seq.begin() + pos, seq.begin() + pos + 8);
    RequestOutput v = s.run_one(0, block, LogitsMode::kAll);
    check_rows(g, vocab(), pos, v.logits, 8, "verify");
    pos += 8;
    std::vector<int32_t> rest(seq.begin() + pos, seq.end());
    RequestOutput tail = s.run_one(0, rest, LogitsMode::kAll);
    check_rows(g, vocab(), pos, tail.logits, static_cast<int>(rest.size()), "tail");
  }
}

// Validation mode: no bf16 anywhere, so every logit and every captured hidden state must match
// plain transformers to f32 accuracy; the argmax at every position whose gap exceeds the bound.
TEST_P(GoldenTest, F32ModeMatchesTransformersTightly) {
  const int L = model().config().num_hidden_layers, hidden = model().config().hidden_size;
  ForwardOptions options;
  options.f32_attention = true;
  for (int l = 0; l < L; ++l) options.capture_layers.push_back(l);
  for (const GoldenPrompt& g : golden().prompts) {
    Session s(model(), 1);
    const std::vector<int32_t> seq = g.sequence();
    const size_t S = seq.size(), V = static_cast<size_t>(vocab());
    RequestOutput out = s.run_one(0, seq, LogitsMode::kAll, options);
    const float scale = max_abs(g.logits_hf.data(), g.logits_hf.size());
    for (size_t t = 0; t < S; ++t) {
      const float* o = out.logits.data() + t * V;
      const float* h = g.logits_hf.data() + t * V;
      EXPECT_LE(max_abs_diff(o, h, V), kF32Rel * scale) << "position " << t;
      if (top2_gap(h, vocab()) > 2 * kF32Rel * scale) {
        EXPECT_EQ(argmax(o, vocab()), argmax(h, vocab())) << "position " << t;
      }
    }
    for (int l = 0; l < L; ++l) {
      const float* ref = g.hidden_hf.data() + static_cast<size_t>(l) * S * hidden;
      EXPECT_LE(max_abs_diff(out.hidden[static_cast<size_t>(l)].data(), ref, S * hidden),
                kHiddenF32Rel * max_abs(ref, S * hidden))
          << "layer " << l;
    }
  }
}

TEST_P(GoldenTest, GreedyContinuationIsTransformers) {
  for (const GoldenPrompt& g : golden().prompts) {
    Session s(model(), 1);
    RequestOutput out = s.run_one(0, g.prompt, LogitsMode::kLast);
    std::vector<int32_t> generated;
    for (size_t i = 0; i < g.continuation.size(); ++i) {
      const int32_t next = argmax(out.logits.data(), vocab());
      generated.push_back(next);
      out = s.run_one(0, {next}, LogitsMode::kLast);
    }
    EXPECT_EQ(generated, g.continuation);
  }
}

TEST_P(GoldenTest, CapturedHiddenStatesMatchTransformers) {
  const int L = model().config().num_hidden_layers, hidden = model().config().hidden_size;
  ForwardOptions options;
  for (int l = L - 1; l >= 0; --l) options.capture_layers.push_back(l);  // any order
  for (const GoldenPrompt& g : golden().prompts) {
    Session s(model(), 1);
    const std::vector<int32_t> seq = g.sequence();
    const size_t S = seq.size();
    RequestOutput out = s.run_one(0, seq, LogitsMode::kNone, options);
    EXPECT_EQ(out.logit_rows, 0);
    ASSERT_EQ(out.hidden.size(), static_cast<size_t>(L));
    for (int k = 0; k < L; ++k) {
      const int l = options.capture_layers[static_cast<size_t>(k)];
      const float* ref = g.hidden_bf16.data() + static_cast<size_t>(l) * S * hidden;
      const float scale = max_abs(ref, S * hidden);
      EXPECT_LE(max_abs_diff(out.hidden[static_cast<size_t>(k)].data(), ref, S * hidden),
                kHiddenBf16Rel * scale)
          << "layer " << l;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, GoldenTest, ::testing::ValuesIn(golden_models()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace mlaspec::model::testing
