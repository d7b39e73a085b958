// The cost model: features, the NNLS fit on synthetic data with known constants, lookup,
// crossover, and profiles (parsing errors, resolution order, warnings, merging).
#include "mlaspec/attention/cost_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

namespace mlaspec::attn {
namespace {

#define EXPECT_CONTAINS(hay, needle)                          \
  EXPECT_NE(std::string(hay).find(needle), std::string::npos) \
      << "\"" << (hay) << "\" does not contain \"" << (needle) << "\""

VerifyShape shape(int b, int h, int q, int64_t s, DType kv = DType::kBF16) {
  VerifyShape x;
  x.batch = b;
  x.num_heads = h;
  x.q_len = q;
  x.max_seq_len = s;
  x.total_kv = s * b;
  x.kv_dtype = kv;
  return x;
}

TEST(CostFeatures, FoldReadsOnceRowwisePerToken) {
  const VerifyShape s = shape(2, 16, 8, 1000, DType::kBF16);
  const CostFeatures f = cost_features(s, KvReadPattern::kOncePerRequest);
  const CostFeatures r = cost_features(s, KvReadPattern::kOncePerQueryToken);
  EXPECT_DOUBLE_EQ(f.kv_mb, 2000.0 * 576 * 2 / 1e6);
  EXPECT_DOUBLE_EQ(r.kv_mb, 8 * f.kv_mb);
  EXPECT_DOUBLE_EQ(f.gflops, 2.0 * 8 * 16 * 1088 * 2000 / 1e9);
  EXPECT_DOUBLE_EQ(r.gflops, f.gflops);
  EXPECT_DOUBLE_EQ(
      cost_features(shape(2, 16, 8, 1000, DType::kFP8E4M3), KvReadPattern::kOncePerRequest).kv_mb,
      f.kv_mb / 2);
}

// Calibration-like samples: H fixed, q in {2,4,8}, S from 1k to 1M.
std::vector<CostSample> synth(const CostTerms& truth, KvReadPattern pat, int heads, double noise,
                              uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-noise, noise);
  std::vector<CostSample> out;
  for (int q : {2, 4, 8}) {
    for (int64_t s = 1024; s <= (int64_t{1} << 20); s *= 2) {
      CostSample x;
      x.features = cost_features(shape(1, heads, q, s), pat);
      x.time_us = truth.estimate_us(x.features) * (1 + u(rng));
      out.push_back(x);
    }
  }
  return out;
}

TEST(CostFit, RecoversKnownConstantsExactly) {
  const CostTerms truth{6.5, 0.27, 1.4};
  auto fit = fit_cost_terms(synth(truth, KvReadPattern::kOncePerRequest, 16, 0, 1));
  ASSERT_TRUE(fit.ok()) << fit.status().to_string();
  EXPECT_NEAR(fit->terms.fixed_us, 6.5, 1e-6);
  EXPECT_NEAR(fit->terms.us_per_mb, 0.27, 1e-8);
  EXPECT_NEAR(fit->terms.us_per_gflop, 1.4, 1e-8);
  EXPECT_LT(fit->rms_rel_err, 1e-9);
  EXPECT_EQ(fit->points, 33);
}

TEST(CostFit, NoisyDataStaysCloseAndNonNegative) {
  const CostTerms truth{8.0, 0.3, 0.0};  // a true zero term: must not come out negative
  auto fit = fit_cost_terms(synth(truth, KvReadPattern::kOncePerRequest, 128, 0.03, 7));
  ASSERT_TRUE(fit.ok());
  EXPECT_GE(fit->terms.us_per_gflop, 0.0);
  EXPECT_GE(fit->terms.fixed_us, 0.0);
  EXPECT_NEAR(fit->terms.fixed_us, 8.0, 0.8);
  EXPECT_NEAR(fit->terms.us_per_mb, 0.3, 0.03);
  EXPECT_LT(fit->rms_rel_err, 0.03);
  EXPECT_LE(fit->max_rel_err, 0.07);
}

TEST(CostFit, CollinearFeaturesStillPredict) {
  // Rowwise at one H: KV MB and GFLOPs are both proportional to q*S, so only their combination
  // is determined; the fit must still predict exactly and stay non-negative.
  const CostTerms truth{3.0, 0.2, 0.5};
  auto samples = synth(truth, KvReadPattern::kOncePerQueryToken, 16, 0, 3);
  auto fit = fit_cost_terms(samples);
  ASSERT_TRUE(fit.ok()) << fit.status().to_string();
  EXPECT_GE(fit->terms.us_per_mb, 0);
  EXPECT_GE(fit->terms.us_per_gflop, 0);
  EXPECT_NEAR(fit->terms.fixed_us, 3.0, 1e-6);
  for (const auto& s : samples) {
    EXPECT_NEAR(fit->terms.estimate_us(s.features) / s.time_us, 1.0, 1e-9);
  }
}

TEST(CostFit, RejectsUnusableInput) {
  std::vector<CostSample> two(2);
  two[0].time_us = two[1].time_us = 1;
  EXPECT_EQ(fit_cost_terms(two).status().code(), StatusCode::kInvalidArgument);
  auto s = synth({1, 1, 1}, KvReadPattern::kOncePerRequest, 16, 0, 1);
  s[3].time_us = 0;
  EXPECT_CONTAINS(fit_cost_terms(s).status().message(), "measurement 3");
  s[3].time_us = std::nan("");
  EXPECT_FALSE(fit_cost_terms(s).ok());
}

TEST(CostModel, NearestHeadsInLog2) {
  CostModel m("gpu", "test", {});
  auto add = [&](int heads, double fixed) {
    CostEntry e;
    e.backend = "b";
    e.heads = heads;
    e.terms.fixed_us = fixed;
    m.add(e);
  };
  add(16, 1);
  add(128, 2);
  EXPECT_EQ(m.find("b", DType::kBF16, 16)->heads, 16);
  EXPECT_EQ(m.find("b", DType::kBF16, 8)->heads, 16);
  EXPECT_EQ(m.find("b", DType::kBF16, 32)->heads, 16);   // 1 octave vs 2
  EXPECT_EQ(m.find("b", DType::kBF16, 64)->heads, 128);  // 2 octaves vs 1
  EXPECT_EQ(m.find("b", DType::kBF16, 256)->heads, 128);
  EXPECT_EQ(m.find("b", DType::kFP8E4M3, 16), nullptr);
  EXPECT_EQ(m.find("c", DType::kBF16, 16), nullptr);
  EXPECT_FALSE(m.estimate_us("c", KvReadPattern::kOncePerRequest, shape(1, 16, 1, 10)).has_value());
  add(0, 3);  // a generic entry ranks behind measured ones
  EXPECT_EQ(m.find("b", DType::kBF16, 1000)->heads, 128);
}

TEST(CostModel, CrossoverCases) {
  CostModel m("gpu", "test", {});
  auto add = [&](const char* b, double fixed, double mb) {
    CostEntry e;
    e.backend = b;
    e.heads = 16;
    e.terms = {fixed, mb, 0};
    m.add(e);
  };
  add("fast_start", 2, 0.5);
  add("fast_stream", 10, 0.1);
  add("never", 20, 1.0);
  const auto pat = KvReadPattern::kOncePerRequest;
  // 2 + 0.5x = 10 + 0.1x at x = 20 MB = 20e6 / 1152 tokens.
  Crossover c = find_crossover(m, "fast_start", pat, "fast_stream", pat, shape(1, 16, 1, 1));
  ASSERT_TRUE(c.has_model);
  EXPECT_EQ(c.short_winner, "fast_start");
  EXPECT_EQ(c.long_winner, "fast_stream");
  EXPECT_NEAR(static_cast<double>(c.seq_len), 20e6 / 1152, 1.0);
  EXPECT_CONTAINS(c.to_string(), "fast_start below S=");
  c = find_crossover(m, "fast_stream", pat, "fast_start", pat, shape(1, 16, 1, 1));
  EXPECT_EQ(c.short_winner, "fast_start");
  c = find_crossover(m, "fast_start", pat, "never", pat, shape(1, 16, 1, 1));
  EXPECT_EQ(c.seq_len, 0);
  EXPECT_EQ(c.short_winner, "fast_start");
  EXPECT_CONTAINS(c.to_string(), "every S");
  EXPECT_FALSE(find_crossover(m, "fast_start", pat, "missing", pat, shape(1, 16, 1, 1)).has_model);
}

// ---- Profiles
// -------------------------------------------------------------------------------------

TEST(Profile, BuiltinParsesAndCoversTheH200) {
  const Profile& p = builtin_profile();
  const CostModel* h200 = p.find("NVIDIA H200");
  ASSERT_NE(h200, nullptr);
  for (const char* b : {"cuda_fold", "cuda_rowwise"}) {
    for (DType kv : {DType::kBF16, DType::kFP8E4M3}) {
      for (int h : {16, 128}) {
        const CostEntry* e = h200->find(b, kv, h);
        ASSERT_NE(e, nullptr) << b;
        EXPECT_EQ(e->heads, h);
      }
    }
  }
  ASSERT_NE(p.find("cpu"), nullptr);
  EXPECT_NE(p.find("cpu")->find("cpu_reference", DType::kFP8E4M3, 16), nullptr);
}

std::string model_json(const std::string& extra_field, const std::string& value) {
  return R"({"format": "mlaspec-profile", "version": 1, "machines": {"G": {"models": [
      {"backend": "cuda_fold", "kv": "bf16", "heads": 16, "fixed_us": 1, "us_per_mb": 1,
       "us_per_gflop": 1)" +
         (extra_field.empty() ? std::string() : ", \"" + extra_field + "\": " + value) + "}]}}}";
}

TEST(Profile, MalformedProfilesSayWhatAndWhere) {
  auto msg = [](const std::string& text) {
    auto p = parse_profile(text, "p.json");
    EXPECT_FALSE(p.ok()) << text;
    EXPECT_EQ(p.status().code(), StatusCode::kDataLoss);
    return p.status().message();
  };
  EXPECT_TRUE(parse_profile(model_json("", ""), "p.json").ok());
  EXPECT_CONTAINS(msg("{\"version\": 1, \"machines\": {"), "p.json: not valid JSON");
  EXPECT_CONTAINS(msg("[]"), "expected an object");
  EXPECT_CONTAINS(msg("{\"machines\": {}}"), "version");
  EXPECT_CONTAINS(msg("{\"version\": 2, \"machines\": {}}"), "unsupported version 2");
  EXPECT_CONTAINS(msg("{\"version\": 1}"), "machines");
  EXPECT_CONTAINS(msg("{\"version\": 1, \"format\": \"x\", \"machines\": {}}"), "format");
  EXPECT_CONTAINS(msg("{\"version\": 1, \"machines\": {\"G\": {}}}"), "machines.\"G\".models");
  std::string bad = model_json("", "");
  bad.replace(bad.find("\"us_per_mb\": 1"), 14, "\"us_per_mb\": \"fast\"");
  const std::string m = msg(bad);
  EXPECT_CONTAINS(m, "machines.\"G\".models[0].us_per_mb");
  EXPECT_CONTAINS(m, "expected a finite number >= 0, got \"fast\"");
  bad = model_json("", "");
  bad.replace(bad.find("\"fixed_us\": 1"), 13, "\"fixed_us\": -1");
  EXPECT_CONTAINS(msg(bad), "fixed_us");
  EXPECT_CONTAINS(msg(model_json("us_per_MB", "1")), "unknown key \"us_per_MB\"");
  bad = model_json("", "");
  bad.replace(bad.find("\"kv\": \"bf16\""), 12, "\"kv\": \"f32\"");
  EXPECT_CONTAINS(msg(bad), "models[0].kv: expected \"bf16\" or \"fp8\"");
  bad = model_json("", "");
  bad.replace(bad.find("\"fixed_us\": 1,"), 14, "");
  EXPECT_CONTAINS(msg(bad), "missing \"fixed_us\"");
  std::string dup = R"({"version": 1, "machines": {"G": {"models": [
      {"backend": "a", "kv": "bf16", "fixed_us": 1, "us_per_mb": 1, "us_per_gflop": 1},
      {"backend": "a", "kv": "bf16", "fixed_us": 2, "us_per_mb": 1, "us_per_gflop": 1}]}}})";
  EXPECT_CONTAINS(msg(dup), "duplicate model for backend a");
}

class ProfileFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("mlaspec_profile_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const auto p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  std::filesystem::path dir_;
};

TEST_F(ProfileFiles, MalformedFileIsAnErrorWhenExplicitElseDefaultsWithAWarning) {
  const std::string path = write("bad.json", "{\"version\": 1, \"machines\": ");
  auto strict = resolve_cost_model({path, "NVIDIA H200", true});
  ASSERT_FALSE(strict.ok());
  EXPECT_EQ(strict.status().code(), StatusCode::kDataLoss);
  EXPECT_CONTAINS(strict.status().message(), path);
  EXPECT_CONTAINS(strict.status().message(), "not valid JSON");

  auto lenient = resolve_cost_model({path, "NVIDIA H200", false});
  ASSERT_TRUE(lenient.ok());
  ASSERT_FALSE(lenient->warnings.empty());
  EXPECT_CONTAINS(lenient->warnings[0], path);
  EXPECT_CONTAINS(lenient->warnings[0], "using built-in defaults");
  EXPECT_NE(lenient->model.find("cuda_fold", DType::kBF16, 16), nullptr);
  EXPECT_EQ(lenient->model.machine(), "NVIDIA H200");
}

TEST_F(ProfileFiles, ProfileForThisGpuIsUsedWithoutWarnings) {
  CostModel m("Test GPU", "mlaspec calibrate (test)", {});
  CostEntry e;
  e.backend = "cuda_fold";
  e.heads = 16;
  e.terms = {5, 0.2, 0.1};
  m.add(e);
  auto text = merge_profile_json("", m);
  ASSERT_TRUE(text.ok()) << text.status().to_string();
  const std::string path = write("p.json", *text);
  auto r = resolve_cost_model({path, "Test GPU", true});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_TRUE(r->warnings.empty()) << r->warnings[0];
  const CostEntry* got = r->model.find("cuda_fold", DType::kBF16, 16);
  ASSERT_NE(got, nullptr);
  EXPECT_DOUBLE_EQ(got->terms.fixed_us, 5);
  EXPECT_DOUBLE_EQ(got->terms.us_per_mb, 0.2);
  EXPECT_CONTAINS(r->model.source(), path);
  // CPU backends come along from the built-in "cpu" section.
  EXPECT_NE(r->model.find("cpu_reference", DType::kBF16, 16), nullptr);
}

TEST_F(ProfileFiles, UnknownGpuAndProvisionalDefaultsWarn) {
  auto r = resolve_cost_model({(dir_ / "missing.json").string(), "NVIDIA B300", false});
  ASSERT_TRUE(r.ok());
  bool uncalibrated = false;
  for (const auto& w : r->warnings) uncalibrated |= w.find("NVIDIA B300") != std::string::npos;
  EXPECT_TRUE(uncalibrated);
  EXPECT_NE(r->model.find("cuda_rowwise", DType::kFP8E4M3, 128), nullptr);
  ASSERT_FALSE(r->notes.empty());
  EXPECT_CONTAINS(r->notes[0], "no profile file at");
  // An explicit missing file is an error.
  auto strict = resolve_cost_model({(dir_ / "missing.json").string(), "NVIDIA H200", true});
  EXPECT_EQ(strict.status().code(), StatusCode::kNotFound);
  // CPU only: the built-in cpu model, no warning.
  auto cpu = resolve_cost_model({(dir_ / "missing.json").string(), "", false});
  ASSERT_TRUE(cpu.ok());
  EXPECT_TRUE(cpu->warnings.empty());
  EXPECT_EQ(cpu->model.machine(), "cpu");
}

TEST_F(ProfileFiles, MergeKeepsOtherMachines) {
  CostModel a("GPU A", "a", {});
  CostModel b("GPU B", "b", {});
  CostEntry e;
  e.backend = "cuda_fold";
  e.kv_dtype = DType::kFP8E4M3;
  e.heads = 128;
  e.terms = {1, 2, 3};
  e.points = 30;
  e.rms_rel_err = 0.02;
  a.add(e);
  b.add(e);
  auto one = merge_profile_json("", a);
  ASSERT_TRUE(one.ok());
  auto two = merge_profile_json(*one, b, R"({"samples": [1, 2]})");
  ASSERT_TRUE(two.ok());
  auto p = parse_profile(*two, "merged");
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  ASSERT_NE(p->find("GPU A"), nullptr);
  ASSERT_NE(p->find("GPU B"), nullptr);
  const CostEntry* got = p->find("GPU B")->find("cuda_fold", DType::kFP8E4M3, 128);
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(got->points, 30);
  EXPECT_DOUBLE_EQ(got->terms.us_per_gflop, 3);
  EXPECT_CONTAINS(*two, "\"samples\"");
  // Re-calibrating one dtype of a machine keeps its other entries and replaces the same ones.
  CostModel b2("GPU B", "b2", {});
  CostEntry bf = e;
  bf.kv_dtype = DType::kBF16;
  b2.add(bf);
  CostEntry fp = e;
  fp.terms = {9, 9, 9};
  b2.add(fp);
  auto three = merge_profile_json(*two, b2);
  ASSERT_TRUE(three.ok());
  auto p3 = parse_profile(*three, "merged");
  ASSERT_TRUE(p3.ok()) << p3.status().to_string();
  EXPECT_EQ(p3->find("GPU B")->entries().size(), 2u);
  EXPECT_DOUBLE_EQ(p3->find("GPU B")->find("cuda_fold", DType::kFP8E4M3, 128)->terms.fixed_us, 9);
  EXPECT_NE(p3->find("GPU B")->find("cuda_fold", DType::kBF16, 128), nullptr);
  CostModel b3("GPU B", "b3", {});
  CostEntry h16 = e;
  h16.heads = 16;
  b3.add(h16);
  auto four = merge_profile_json(*three, b3);
  ASSERT_TRUE(four.ok());
  EXPECT_EQ(parse_profile(*four, "merged")->find("GPU B")->entries().size(), 3u);
  EXPECT_FALSE(merge_profile_json("{oops", b).ok());
}

TEST(Profile, DefaultPathHonoursTheEnvironment) {
  const char* saved = std::getenv("MLASPEC_PROFILE");
  const std::string keep = saved ? saved : "";
  setenv("MLASPEC_PROFILE", "/tmp/x/profile.json", 1);
  EXPECT_EQ(default_profile_path(), "/tmp/x/profile.json");
  unsetenv("MLASPEC_PROFILE");
  EXPECT_CONTAINS(default_profile_path(), "mlaspec/profile.json");
  if (saved) setenv("MLASPEC_PROFILE", keep.c_str(), 1);
}

}  // namespace
}  // namespace mlaspec::attn
