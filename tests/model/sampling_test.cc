// Sampler: parameter checks, logits checks, each filter against hand-computed distributions,
// the inverse CDF, the counter-based generator (Random123 known answers, reproducibility, stream
// independence) and an empirical check that seeded sampling follows p.
#include "mlaspec/model/sampling.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <vector>

namespace mlaspec::model {
namespace {

SamplingParams sampling(float t, int32_t k = 0, float p = 1.0f, float min_p = 0.0f) {
  SamplingParams s;
  s.temperature = t;
  s.top_k = k;
  s.top_p = p;
  s.min_p = min_p;
  s.seed = 1234;
  return s;
}

std::vector<float> logits_of(const std::vector<double>& probs) {
  std::vector<float> l;
  for (double p : probs) l.push_back(p > 0 ? static_cast<float>(std::log(p)) : -INFINITY);
  return l;
}

std::vector<double> normalised(std::vector<double> w) {
  double s = 0;
  for (double v : w) s += v;
  for (double& v : w) v /= s;
  return w;
}

void expect_probs(const std::vector<float>& logits, const SamplingParams& params,
                  const std::vector<double>& want) {
  const std::vector<float> got = target_distribution(logits, params).value();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-6) << "token " << i;
    if (want[i] == 0.0) {
      EXPECT_EQ(got[i], 0.0f) << "token " << i << " must be exactly 0";
    }
  }
}

TEST(SamplingParams, DefaultsAreGreedyAndValid) {
  SamplingParams p;
  EXPECT_TRUE(p.greedy());
  EXPECT_TRUE(validate(p).ok());
  EXPECT_TRUE(validate(sampling(0.7f, 50, 0.9f, 0.05f)).ok());
  EXPECT_TRUE(validate(sampling(1.0f, 0, 1.0f, 1.0f)).ok());
}

TEST(SamplingParams, BadValuesNameValueAndRange) {
  struct Case {
    SamplingParams p;
    const char* message;
  };
  const Case cases[] = {
      {sampling(-1.0f), "temperature -1 is not a finite value >= 0 (0 means greedy)"},
      {sampling(NAN), "temperature nan is not a finite value >= 0"},
      {sampling(INFINITY), "temperature inf is not a finite value >= 0"},
      {sampling(1.0f, -1), "top_k -1 is negative (0 turns it off)"},
      {sampling(1.0f, 0, 1.5f), "top_p 1.5 is outside (0, 1] (1 turns it off)"},
      {sampling(1.0f, 0, 0.0f), "top_p 0 is outside (0, 1]"},
      {sampling(1.0f, 0, NAN), "top_p nan is outside (0, 1]"},
      {sampling(1.0f, 0, 1.0f, -0.1f), "min_p -0.1 is outside [0, 1] (0 turns it off)"},
      {sampling(1.0f, 0, 1.0f, 2.0f), "min_p 2 is outside [0, 1]"},
  };
  for (const Case& c : cases) {
    const Status st = validate(c.p);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find(c.message), std::string::npos) << st.message();
    // Every entry point refuses the same way.
    const std::vector<float> logits = {0.0f, 1.0f};
    EXPECT_EQ(target_distribution(logits, c.p).status().message(), st.message());
    EXPECT_EQ(sample_token(logits, c.p, 0).status().message(), st.message());
  }
}

TEST(Logits, NanInfAndAllMaskedAreErrors) {
  EXPECT_TRUE(check_logits(std::vector<float>{0.0f, -INFINITY, 3.0f}).ok());
  EXPECT_EQ(check_logits(std::vector<float>{0.0f, 1.0f, 2.0f, NAN}).message(), "logit 3 is nan");
  EXPECT_EQ(check_logits(std::vector<float>{0.0f, INFINITY, NAN}).message(), "logit 1 is +inf");
  EXPECT_EQ(check_logits(std::vector<float>{-INFINITY, -INFINITY}).message(),
            "all 2 logits are -inf: no token can be chosen");
  EXPECT_EQ(check_logits(std::vector<float>{}).message(), "logits row is empty (vocab 0)");
  // Greedy is refused too: a NaN row never turns into a token.
  const std::vector<float> bad = {1.0f, NAN, 0.0f};
  EXPECT_EQ(sample_token(bad, SamplingParams{}, 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(target_distribution(bad, sampling(1.0f)).ok());
}

TEST(Greedy, ArgmaxTiesToLowestIdAndOneHot) {
  const std::vector<float> logits = {1.0f, 5.0f, -2.0f, 5.0f, 5.0f};
  EXPECT_EQ(argmax(logits), 1);
  EXPECT_EQ(sample_token(logits, SamplingParams{}, 7).value(), 1);
  // Filters are ignored under greedy; the distribution is one-hot at the argmax.
  expect_probs(logits, sampling(0.0f, 3, 0.1f, 0.9f), {0, 1, 0, 0, 0});
  EXPECT_EQ(argmax(std::vector<float>{-INFINITY, -3.0f, -INFINITY}), 1);
}

// ForwardOptions::argmax_only's rule: argmax per row, -1 for a row check_logits refuses; a
// trailing partial row is not a row.
TEST(Greedy, ArgmaxRowsMarksRefusedRows) {
  const std::vector<float> rows = {1,         5,         5,                 // ties -> 1
                                   -INFINITY, -INFINITY, -INFINITY,         // no finite value
                                   0,         NAN,       9,                 // nan
                                   INFINITY,  0,         0,                 // +inf
                                   -INFINITY, -7,        -INFINITY, 2, 2};  // -> 1, then a stub
  EXPECT_EQ(argmax_rows(rows, 3), (std::vector<int32_t>{1, -1, -1, -1, 1}));
  EXPECT_TRUE(argmax_rows(rows, 0).empty());
}

TEST(Temperature, ScalesLogitsBeforeSoftmax) {
  const std::vector<float> logits = {1.0f, 2.0f, 3.0f};
  expect_probs(logits, sampling(2.0f), normalised({std::exp(0.5), std::exp(1.0), std::exp(1.5)}));
  expect_probs(logits, sampling(1.0f), normalised({std::exp(1.0), std::exp(2.0), std::exp(3.0)}));
  // A tiny temperature concentrates on the argmax without overflowing.
  expect_probs(logits, sampling(1e-30f), {0, 0, 1});
  // -inf stays masked.
  expect_probs({0.0f, -INFINITY, 0.0f}, sampling(0.5f), {0.5, 0, 0.5});
}

TEST(TopK, KeepsTheKLargestAndTiesAtTheBoundary) {
  const std::vector<float> logits = {1.0f, 3.0f, 2.0f, 3.0f, 0.0f};
  const double e1 = std::exp(1.0), e2 = std::exp(2.0), e3 = std::exp(3.0);
  expect_probs(logits, sampling(1.0f, 1), {0, 0.5, 0, 0.5, 0});  // both 3s tie for the top
  expect_probs(logits, sampling(1.0f, 2), {0, 0.5, 0, 0.5, 0});
  expect_probs(logits, sampling(1.0f, 3), normalised({0, e3, e2, e3, 0}));
  expect_probs(logits, sampling(1.0f, 4), normalised({e1, e3, e2, e3, 0}));
  expect_probs(logits, sampling(1.0f, 5), normalised({e1, e3, e2, e3, 1}));
  expect_probs(logits, sampling(1.0f, 99), normalised({e1, e3, e2, e3, 1}));
  // Masked tokens do not count towards k.
  expect_probs({-INFINITY, 1.0f, -INFINITY, 0.0f}, sampling(1.0f, 2),
               normalised({0, std::exp(1.0), 0, 1}));
}

TEST(TopP, SmallestPrefixReachingP) {
  const std::vector<float> logits = logits_of({0.15, 0.5, 0.05, 0.3});
  expect_probs(logits, sampling(1.0f, 0, 0.3f), {0, 1, 0, 0});
  expect_probs(logits, sampling(1.0f, 0, 0.75f), {0, 0.625, 0, 0.375});
  expect_probs(logits, sampling(1.0f, 0, 0.85f), normalised({0.15, 0.5, 0, 0.3}));
  expect_probs(logits, sampling(1.0f, 0, 0.97f), {0.15, 0.5, 0.05, 0.3});
  // Exact boundary: the mass above token 2 (in rank order) is exactly top_p, so it goes; among
  // equal probabilities the lower id ranks first.
  expect_probs({0.0f, 0.0f, 0.0f, 0.0f}, sampling(1.0f, 0, 0.5f), {0.5, 0.5, 0, 0});
  expect_probs({0.0f, 0.0f, 0.0f, 0.0f}, sampling(1.0f, 0, 0.51f), {1 / 3.0, 1 / 3.0, 1 / 3.0, 0});
}

TEST(MinP, RelativeToTheLargestProbability) {
  const std::vector<float> logits = logits_of({0.15, 0.5, 0.05, 0.3});
  expect_probs(logits, sampling(1.0f, 0, 1.0f, 0.2f), normalised({0.15, 0.5, 0, 0.3}));
  expect_probs(logits, sampling(1.0f, 0, 1.0f, 0.5f), {0, 0.625, 0, 0.375});
  expect_probs(logits, sampling(1.0f, 0, 1.0f, 1.0f), {0, 1, 0, 0});
}

TEST(Order, TemperatureThenTopKThenTopPThenMinP) {
  // p = [0.4, 0.3, 0.2, 0.1] at T = 1.
  const std::vector<float> logits = logits_of({0.4, 0.3, 0.2, 0.1});
  // top-k 3 -> [.444, .333, .222]; top-p 0.7 drops token 2 (mass above it .778); min-p 0.7 of
  // .571 = .4 keeps token 1 (.429).
  expect_probs(logits, sampling(1.0f, 3, 0.7f, 0.7f), {4 / 7.0, 3 / 7.0, 0, 0});
  // Temperature first: T = 0.5 squares the probabilities, [16, 9, 4, 1] / 30, and top-p 0.5 then
  // keeps token 0 alone (16/30 >= 0.5); at T = 1 it keeps tokens 0 and 1 (0.4 < 0.5).
  expect_probs(logits, sampling(0.5f, 0, 0.5f), {1, 0, 0, 0});
  expect_probs(logits, sampling(1.0f, 0, 0.5f), {4 / 7.0, 3 / 7.0, 0, 0});
  // min-p compares with the largest survivor: after top-k 2, [4/7, 3/7]; 0.8 * 4/7 > 3/7.
  expect_probs(logits, sampling(1.0f, 2, 1.0f, 0.8f), {1, 0, 0, 0});
  expect_probs(logits, sampling(1.0f, 2, 1.0f, 0.7f), {4 / 7.0, 3 / 7.0, 0, 0});
}

// The rule written as plainly as possible (full sorts, no early exits), for the sweep below.
std::vector<double> reference_distribution(const std::vector<float>& logits,
                                           const SamplingParams& sp) {
  const size_t v = logits.size();
  std::vector<double> z(v);
  for (size_t i = 0; i < v; ++i) z[i] = static_cast<double>(logits[i]) / sp.temperature;
  std::vector<bool> keep(v);
  for (size_t i = 0; i < v; ++i) keep[i] = z[i] != -INFINITY;
  if (sp.top_k > 0) {
    std::vector<double> sorted;
    for (size_t i = 0; i < v; ++i) {
      if (keep[i]) sorted.push_back(z[i]);
    }
    std::sort(sorted.rbegin(), sorted.rend());
    if (static_cast<size_t>(sp.top_k) < sorted.size()) {
      for (size_t i = 0; i < v; ++i) keep[i] = keep[i] && z[i] >= sorted[sp.top_k - 1];
    }
  }
  double zmax = -INFINITY;
  for (size_t i = 0; i < v; ++i) {
    if (keep[i]) zmax = std::max(zmax, z[i]);
  }
  std::vector<double> w(v, 0.0);
  double total = 0;
  for (size_t i = 0; i < v; ++i) {
    if (keep[i]) total += w[i] = std::exp(z[i] - zmax);
  }
  if (sp.top_p < 1.0f) {
    std::vector<int> order;
    for (size_t i = 0; i < v; ++i) {
      if (w[i] > 0) order.push_back(static_cast<int>(i));
    }
    std::sort(order.begin(), order.end(),
              [&](int a, int b) { return w[a] != w[b] ? w[a] > w[b] : a < b; });
    double above = 0;
    for (size_t j = 0; j < order.size(); ++j) {
      if (j > 0 && above >= sp.top_p * total) w[order[j]] = 0;
      above += w[order[j]] > 0 ? w[order[j]] : 0;
    }
  }
  if (sp.min_p > 0.0f) {
    for (double& x : w) {
      if (x < sp.min_p) x = 0;
    }
  }
  return normalised(w);
}

TEST(ProcessLogits, RandomSweepMatchesPlainReference) {
  // Integer logits make ties common (top-k boundary ties, top-p rank ties); vocabularies past 256
  // with flat rows make top-p look beyond its first partial selection.
  std::mt19937 rng(41);
  for (int trial = 0; trial < 400; ++trial) {
    const int vocab = trial % 3 == 0 ? 3000 : 2 + static_cast<int>(rng() % 40);
    const bool ints = trial % 2 == 0;
    std::normal_distribution<float> normal(0.0f, trial % 5 == 0 ? 0.05f : 2.0f);
    std::vector<float> logits(vocab);
    for (float& x : logits)
      x = ints ? static_cast<float>(static_cast<int>(rng() % 5)) : normal(rng);
    if (trial % 7 == 0) logits[rng() % vocab] = -INFINITY;
    SamplingParams sp =
        sampling(0.25f + 0.25f * (rng() % 8), static_cast<int>(rng() % 6) * (vocab / 4),
                 trial % 4 == 0 ? 1.0f : 0.05f + 0.95f * (rng() % 100) / 100.0f,
                 trial % 3 == 1 ? 0.02f * (rng() % 10) : 0.0f);
    const std::vector<float> got = target_distribution(logits, sp).value();
    const std::vector<double> want = reference_distribution(logits, sp);
    for (int t = 0; t < vocab; ++t) {
      ASSERT_EQ(got[t] > 0.0f, want[t] > 0.0) << "trial " << trial << " token " << t;
      ASSERT_NEAR(got[t], want[t], 1e-6) << "trial " << trial << " token " << t;
    }
  }
}

TEST(SampleFrom, InverseCdfInIdOrderNeverAZeroWeight) {
  const std::vector<float> w = {0.0f, 1.0f, 0.0f, 3.0f, 0.0f};
  EXPECT_EQ(sample_from(std::span<const float>(w), 0.0), 1);
  EXPECT_EQ(sample_from(std::span<const float>(w), 0.2499), 1);
  EXPECT_EQ(sample_from(std::span<const float>(w), 0.25), 3);
  EXPECT_EQ(sample_from(std::span<const float>(w), 0.9999999999), 3);
  const std::vector<double> d = {2.0, 0.0};
  EXPECT_EQ(sample_from(std::span<const double>(d), std::nextafter(1.0, 0.0)), 0);
}

TEST(Philox, Random123KnownAnswers) {
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (std::array<uint32_t, 4>{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  EXPECT_EQ(philox4x32_10({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
                          {0xffffffffu, 0xffffffffu}),
            (std::array<uint32_t, 4>{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  EXPECT_EQ(philox4x32_10({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
                          {0xa4093822u, 0x299f31d0u}),
            (std::array<uint32_t, 4>{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

TEST(RandomUniform, PureFunctionOfSeedPositionStream) {
  std::set<double> seen;
  for (int64_t pos = 0; pos < 1000; ++pos) {
    for (RandomStream s : {RandomStream::kSample, RandomStream::kAccept, RandomStream::kDraft}) {
      const double u = random_uniform(42, pos, s);
      EXPECT_GE(u, 0.0);
      EXPECT_LT(u, 1.0);
      EXPECT_EQ(u, random_uniform(42, pos, s));
      seen.insert(u);
    }
  }
  EXPECT_EQ(seen.size(), 3000u);  // no two (position, stream) pairs share a draw
  EXPECT_NE(random_uniform(42, 5, RandomStream::kSample),
            random_uniform(43, 5, RandomStream::kSample));
  EXPECT_NE(random_uniform(42, 5, RandomStream::kDraft, 0),
            random_uniform(42, 5, RandomStream::kDraft, 1));
  EXPECT_NE(random_uniform(42, 5, RandomStream::kSample),
            random_uniform(42, 5LL << 32, RandomStream::kSample));
}

TEST(SampleToken, ReproducibleAndFollowsTheDistribution) {
  const std::vector<double> p = {0.1, 0.35, 0.05, 0.3, 0.2};
  const std::vector<float> logits = logits_of(p);
  SamplingParams params = sampling(1.0f);
  // Same (seed, position) -> same token, whatever was sampled before.
  std::vector<int32_t> first;
  for (int64_t pos = 0; pos < 64; ++pos) first.push_back(sample_token(logits, params, pos).value());
  for (int64_t pos = 63; pos >= 0; --pos) {
    EXPECT_EQ(sample_token(logits, params, pos).value(), first[pos]);
  }
  // Over 20000 positions the counts follow p: chi-square, 4 degrees of freedom, critical value
  // 23.51 at significance 1e-4.
  const int n = 20000;
  std::vector<int> count(p.size(), 0);
  for (int64_t pos = 0; pos < n; ++pos) ++count[sample_token(logits, params, pos).value()];
  double chi2 = 0;
  for (size_t t = 0; t < p.size(); ++t) {
    const double e = n * p[t];
    chi2 += (count[t] - e) * (count[t] - e) / e;
  }
  EXPECT_LT(chi2, 23.51);
  // A different seed gives a different sequence.
  params.seed = 99;
  int differ = 0;
  for (int64_t pos = 0; pos < 64; ++pos)
    differ += sample_token(logits, params, pos).value() != first[pos];
  EXPECT_GT(differ, 10);
}

TEST(ProcessRows, EachRowAsAloneAndErrorsNameTheRow) {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  const int64_t vocab = 37, rows = 9;
  std::vector<float> logits(rows * vocab);
  for (float& v : logits) v = normal(rng);
  std::vector<SamplingParams> params;
  for (int r = 0; r < rows; ++r)
    params.push_back(sampling(0.3f * r, r % 4 * 3, 1.0f - 0.05f * r, 0.01f * r));
  std::vector<float> probs(rows * vocab);
  ASSERT_TRUE(process_logits_rows(logits, vocab, params, probs).ok());
  for (int r = 0; r < rows; ++r) {
    const std::vector<float> alone =
        target_distribution(std::span<const float>(logits).subspan(r * vocab, vocab), params[r])
            .value();
    for (int64_t t = 0; t < vocab; ++t) EXPECT_EQ(probs[r * vocab + t], alone[t]);
  }
  params[4].top_p = 1.5f;
  EXPECT_EQ(process_logits_rows(logits, vocab, params, probs).message(),
            "row 4: top_p 1.5 is outside (0, 1] (1 turns it off)");
  EXPECT_FALSE(process_logits_rows(logits, vocab + 1, params, probs).ok());
}

TEST(ProcessLogits, FullVocabularyRowSumsToOne) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> logits(129280);
  for (float& v : logits) v = normal(rng);
  const std::vector<float> p = target_distribution(logits, sampling(0.8f, 0, 0.9f, 0.001f)).value();
  double sum = 0;
  int kept = 0;
  for (float v : p) {
    sum += v;
    kept += v > 0;
  }
  EXPECT_NEAR(sum, 1.0, 1e-5);
  EXPECT_GT(kept, 1);
  EXPECT_LT(kept, 129280);
  EXPECT_GT(p[argmax(logits)], 0.0f);
}

}  // namespace
}  // namespace mlaspec::model
