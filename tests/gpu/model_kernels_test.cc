// The CUDA model runtime's kernels (src/model/cuda/kernels.h), each against the CPU runtime's own
// function for the same step (src/model/layers.h, gpu_plan.h) on fresh random inputs over shape
// sweeps: odd sizes, hidden 256..7168, tokens 1..33, routers shaped like DeepSeek-V2-Lite (64
// experts top-6, softmax), DeepSeek-V3 (256 / 8, 8 groups keep 4, sigmoid) and Kimi-K2 (384 / 8,
// n_group 1). Every output buffer starts poisoned (0xff bytes: NaN in f32 / bf16, -1 in int32)
// and every element a kernel must write is checked to be written (finite / in range); where a
// kernel writes a strided sub-block, the gaps must still hold the poison.
//
// Bounds, and why (f32: one rounding is within eps = 2^-24 relative, one ulp 2^-23; bf16: an ulp is
// at most 2^-7 relative, so two values that round to different sides of a bf16 boundary differ by
// one ulp <= 2^-7 |ref| after rounding):
//   - exact (bitwise): embed, add, add_rms_norm against add + rms_norm, gather, plan_moe (and its
//   touched-expert list), route's expert ids (the same IEEE operations
//     on the same inputs; ties by lower index as cpu::top_k);
//   - rms_norm: both sum squares in double, in different orders, then one f32 rounding of the
//     scale (may differ by one ulp) and two f32 products: |d| <= 8 eps |ref| for f32 outputs;
//     bf16 outputs may land on the other side of a rounding boundary: one bf16 ulp, 2^-7 |ref|;
//   - RoPE (kv_rows, split_q): cosf / sinf on the device are within 2 ulp of the true values and
//     glibc's within 1, so each rotated value is off by a few eps (|a| + |b|) before the bf16
//     rounding of both sides, which adds one bf16 ulp: 2^-7 |ref| + 4e-6 max(|a|, |b|) factor;
//   - silu_mul: expf (2 ulp) vs std::exp (1 ulp), then the bf16 rounding: 2^-7 |ref| + 1e-6 |g u|;
//   - moe_combine: the same products and sums in the same order, but nvcc contracts a * b + c to
//     an fma where the host compiler may not: one rounding per term, 4 eps sum |w y| per element;
//   - route weights: the scores' expf (2 ulp against glibc's 1) and a division; for softmax also
//     the sum of E terms in another order (each order within (E - 1) eps of the exact sum):
//     (2 E + 16) eps relative;
//   - grouped row-invariant GEMM (the routed experts' GEMMs of short calls): bitwise the plain
//     row-invariant GEMM per expert, and that GEMM's bound against cpu::linear;
//   - row-invariant GEMM vs cpu::linear (CBLAS f32) on the same bf16-rounded inputs: different
//     summation orders, each within K eps sum_k |x_k w_k| of the exact sum (the worst-case bound of
//     any order, fma or not), so |d| <= 2 K eps sum_k |x_k w_k|, plus one bf16 ulp for bf16
//     outputs; and bitwise equal rows whether the call carries 1 token or T.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gpu_test_util.h"
#include "mlaspec/core/dtype.h"
#include "mlaspec/model/sampling.h"
#include "model/cuda/kernels.h"
#include "model/gpu_plan.h"
#include "model/layers.h"

namespace mlaspec::model {
namespace {

using testing::download;
using testing::upload;

constexpr float kEps = 1.0f / (1 << 24);
constexpr float kBf16Ulp = 1.0f / 128;  // one bf16 ulp relative to |ref| (rounding boundary)

// The worst |d| / bound per check family, printed after the suite (how close each kernel runs to
// its bound on this machine).
std::map<std::string, float>& worst_ratios() {
  static std::map<std::string, float> m;
  return m;
}
class WorstRatioReport : public ::testing::Environment {
 public:
  void TearDown() override {
    for (const auto& [what, r] : worst_ratios()) {
      std::printf("[kernels] %-28s worst |d| / bound = %.3g\n", what.c_str(), r);
    }
  }
};
[[maybe_unused]] ::testing::Environment* const kReport =
    ::testing::AddGlobalTestEnvironment(new WorstRatioReport);

// Fresh inputs every run (every bound here holds for any data); the seed is printed, and
// MLASPEC_TEST_SEED=N replays a run.
std::mt19937& rng() {
  static std::mt19937 g(testing::fresh_seed("kernels"));
  return g;
}

std::vector<float> randn(size_t n, float scale = 1.0f) {
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng());
  return v;
}

float round_bf16(float v) {
  return bf16::from_float(v).to_float();
}
std::vector<uint16_t> to_bf16(const std::vector<float>& v) {
  std::vector<uint16_t> b(v.size());
  for (size_t i = 0; i < v.size(); ++i) b[i] = bf16::from_float(v[i]).bits;
  return b;
}
std::vector<float> from_bf16(const std::vector<uint16_t>& b) {
  std::vector<float> v(b.size());
  for (size_t i = 0; i < b.size(); ++i) v[i] = bf16{b[i]}.to_float();
  return v;
}

// A device buffer of n elements of T filled with 0xff bytes.
template <typename T>
Buffer poisoned(size_t n) {
  Buffer b(std::max<size_t>(n, 1) * sizeof(T), Device::kCUDA);
  throw_if_error(b.fill_bytes(0xff));
  return b;
}

void sync() {
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

// |got - want| <= bound for every i; NaN (an element never written) fails.
void expect_near_all(const std::vector<float>& got, const std::vector<float>& want,
                     const std::vector<float>& bound, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  float worst = 0.0f;
  for (size_t i = 0; i < got.size(); ++i) {
    const float d = std::fabs(got[i] - want[i]);
    if (!(d <= bound[i])) {  // NaN fails here
      if (++bad <= 5) {
        ADD_FAILURE() << what << " [" << i << "]: got " << got[i] << ", want " << want[i]
                      << ", bound " << bound[i];
      }
    }
    if (bound[i] > 0 && std::isfinite(d)) worst = std::max(worst, d / bound[i]);
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << got.size() << " outside the bound";
  const std::string family = what.substr(0, what.find(' ', what.find(' ') + 1));
  float& w = worst_ratios()[family];
  w = std::max(w, worst);
}

const std::vector<int64_t> kHidden = {256, 257, 1000, 2048, 5120, 7168};
const std::vector<int64_t> kTokens = {1, 2, 7, 16, 33};

TEST(CudaModelKernels, Embed) {
  MLASPEC_SKIP_WITHOUT_GPU();
  for (int64_t hidden : {256, 1000, 7168}) {
    const int64_t vocab = 97;
    const std::vector<uint16_t> table = to_bf16(randn(static_cast<size_t>(vocab * hidden)));
    for (int64_t T : kTokens) {
      std::vector<int32_t> tok(static_cast<size_t>(T));
      for (auto& t : tok) t = static_cast<int32_t>(rng()() % vocab);
      Buffer dt = upload(table), dk = upload(tok), dx = poisoned<float>(T * hidden);
      ASSERT_TRUE(gpu::embed(static_cast<const uint16_t*>(dt.data()),
                             static_cast<const int32_t*>(dk.data()), T, hidden,
                             static_cast<float*>(dx.data()), nullptr)
                      .ok());
      sync();
      const std::vector<float> x = download<float>(dx);
      for (int64_t t = 0; t < T; ++t) {
        for (int64_t i = 0; i < hidden; ++i) {
          const float want = bf16{table[static_cast<size_t>(tok[t] * hidden + i)]}.to_float();
          ASSERT_EQ(x[static_cast<size_t>(t * hidden + i)], want) << "t " << t << " i " << i;
        }
      }
    }
  }
}

// rms_norm with padded row strides (the gaps must stay poisoned), f32 and bf16 outputs, and the
// in-place form (y_f32 = x) the runtime uses for kv_a_layernorm.
TEST(CudaModelKernels, RmsNorm) {
  MLASPEC_SKIP_WITHOUT_GPU();
  for (int64_t dim : {256, 257, 512, 1536, 2048, 7168}) {
    for (int64_t T : kTokens) {
      const int64_t ldx = dim + 64, ldy = dim + 3, ldyb = dim + 5;
      const std::vector<float> x = randn(static_cast<size_t>(T * ldx), 3.0f);
      const std::vector<float> w = randn(static_cast<size_t>(dim));
      const float eps = 1e-6f;
      std::vector<float> ref(static_cast<size_t>(T * dim));
      cpu::rms_norm(x.data(), T, dim, w, eps, ref.data(), ldx, dim);
      Buffer dx = upload(x), dw = upload(w);
      Buffer dy = poisoned<float>(T * ldy), dyb = poisoned<uint16_t>(T * ldyb);
      ASSERT_TRUE(gpu::rms_norm(static_cast<const float*>(dx.data()), ldx, T, dim,
                                static_cast<const float*>(dw.data()), eps,
                                static_cast<float*>(dy.data()), ldy,
                                static_cast<uint16_t*>(dyb.data()), ldyb, nullptr)
                      .ok());
      sync();
      const std::vector<float> y = download<float>(dy);
      const std::vector<uint16_t> yb = download<uint16_t>(dyb);
      std::vector<float> got, gotb, bound, boundb;
      for (int64_t t = 0; t < T; ++t) {
        for (int64_t i = 0; i < ldy; ++i) {
          const float v = y[static_cast<size_t>(t * ldy + i)];
          if (i >= dim) {
            ASSERT_TRUE(std::isnan(v)) << "rms_norm wrote the gap at t " << t << " i " << i;
            continue;
          }
          const float r = ref[static_cast<size_t>(t * dim + i)];
          got.push_back(v);
          bound.push_back(8 * kEps * std::fabs(r) + 1e-30f);
        }
        for (int64_t i = 0; i < ldyb; ++i) {
          const uint16_t b = yb[static_cast<size_t>(t * ldyb + i)];
          if (i >= dim) {
            ASSERT_EQ(b, 0xffff) << "rms_norm wrote the bf16 gap at t " << t << " i " << i;
            continue;
          }
          const float r = ref[static_cast<size_t>(t * dim + i)];
          gotb.push_back(bf16{b}.to_float());
          boundb.push_back(kBf16Ulp * std::fabs(r) + 1e-30f);
        }
      }
      std::vector<float> want(ref), wantb(ref.size());
      for (size_t i = 0; i < ref.size(); ++i) wantb[i] = round_bf16(ref[i]);
      const std::string tag = "dim " + std::to_string(dim) + " T " + std::to_string(T);
      expect_near_all(got, want, bound, "rms_norm f32 " + tag);
      expect_near_all(gotb, wantb, boundb, "rms_norm bf16 " + tag);

      // In place over a strided row (y_f32 = x, no bf16).
      ASSERT_TRUE(gpu::rms_norm(static_cast<float*>(dx.data()), ldx, T, dim,
                                static_cast<const float*>(dw.data()), eps,
                                static_cast<float*>(dx.data()), ldx, nullptr, 0, nullptr)
                      .ok());
      sync();
      const std::vector<float> xi = download<float>(dx);
      got.clear();
      for (int64_t t = 0; t < T; ++t) {
        for (int64_t i = 0; i < ldx; ++i) {
          const float v = xi[static_cast<size_t>(t * ldx + i)];
          if (i >= dim) {
            ASSERT_EQ(v, x[static_cast<size_t>(t * ldx + i)]) << "in-place rms_norm wrote past dim";
          } else {
            got.push_back(v);
          }
        }
      }
      expect_near_all(got, want, bound, "rms_norm in place " + tag);
    }
  }
}

TEST(CudaModelKernels, AddInplace) {
  MLASPEC_SKIP_WITHOUT_GPU();
  for (int64_t n : {1, 255, 256, 257, 33 * 7168}) {
    const std::vector<float> x = randn(static_cast<size_t>(n)), d = randn(static_cast<size_t>(n));
    Buffer dx = upload(x), dd = upload(d);
    ASSERT_TRUE(gpu::add_inplace(static_cast<float*>(dx.data()),
                                 static_cast<const float*>(dd.data()), n, nullptr)
                    .ok());
    sync();
    const std::vector<float> y = download<float>(dx);
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(y[static_cast<size_t>(i)], x[static_cast<size_t>(i)] + d[static_cast<size_t>(i)]);
    }
  }
}

// add_rms_norm (the residual add inside the norm after it): bitwise add_inplace then rms_norm, the
// sums written back to x, both outputs (padded strides, gaps still poisoned) and the f32-only and
// bf16-only forms the runtime uses.
TEST(CudaModelKernels, AddRmsNormIsAddThenNorm) {
  MLASPEC_SKIP_WITHOUT_GPU();
  for (int64_t dim : {256, 257, 2048, 7168}) {
    for (int64_t T : kTokens) {
      const int64_t ldy = dim + 3, ldyb = dim + 5;
      const std::vector<float> x = randn(static_cast<size_t>(T * dim), 3.0f);
      const std::vector<float> d = randn(static_cast<size_t>(T * dim));
      const std::vector<float> w = randn(static_cast<size_t>(dim));
      const float eps = 1e-6f;
      // The two-launch form.
      Buffer ax = upload(x), dd = upload(d), dw = upload(w);
      Buffer ay = poisoned<float>(T * ldy), ayb = poisoned<uint16_t>(T * ldyb);
      ASSERT_TRUE(gpu::add_inplace(static_cast<float*>(ax.data()),
                                   static_cast<const float*>(dd.data()), T * dim, nullptr)
                      .ok());
      ASSERT_TRUE(gpu::rms_norm(static_cast<const float*>(ax.data()), dim, T, dim,
                                static_cast<const float*>(dw.data()), eps,
                                static_cast<float*>(ay.data()), ldy,
                                static_cast<uint16_t*>(ayb.data()), ldyb, nullptr)
                      .ok());
      const std::string tag = "dim " + std::to_string(dim) + " T " + std::to_string(T);
      // Both against the CPU: the sums exactly (one f32 add each), the norm within RmsNorm's
      // bound (every element written: NaN poison fails).
      sync();
      std::vector<float> sums(x.size()), ref(x.size());
      for (size_t i = 0; i < x.size(); ++i) sums[i] = x[i] + d[i];
      ASSERT_EQ(download<float>(ax), sums) << "sums, " << tag;
      cpu::rms_norm(sums.data(), T, dim, w, eps, ref.data(), dim, dim);
      {
        const std::vector<float> y = download<float>(ay);
        std::vector<float> got, bound;
        for (int64_t t = 0; t < T; ++t) {
          for (int64_t i = 0; i < dim; ++i) {
            const float r = ref[static_cast<size_t>(t * dim + i)];
            got.push_back(y[static_cast<size_t>(t * ldy + i)]);
            bound.push_back(8 * kEps * std::fabs(r) + 1e-30f);
          }
        }
        expect_near_all(got, ref, bound, "add + rms_norm f32 vs CPU " + tag);
      }
      for (int outputs = 0; outputs < 3; ++outputs) {  // both, f32 only, bf16 only
        const bool f32 = outputs != 2, b16 = outputs != 1;
        Buffer bx = upload(x), by = poisoned<float>(T * ldy), byb = poisoned<uint16_t>(T * ldyb);
        ASSERT_TRUE(
            gpu::add_rms_norm(static_cast<float*>(bx.data()), static_cast<const float*>(dd.data()),
                              T, dim, static_cast<const float*>(dw.data()), eps,
                              f32 ? static_cast<float*>(by.data()) : nullptr, ldy,
                              b16 ? static_cast<uint16_t*>(byb.data()) : nullptr, ldyb, nullptr)
                .ok());
        sync();
        const std::string what = tag + " outputs " + std::to_string(outputs);
        ASSERT_EQ(download<float>(bx), download<float>(ax)) << "sums in x, " << what;
        const std::vector<float> ya = download<float>(ay), yb = download<float>(by);
        const std::vector<uint16_t> yab = download<uint16_t>(ayb), ybb = download<uint16_t>(byb);
        for (size_t i = 0; i < ya.size(); ++i) {
          // Bitwise: NaN poison in the gaps (and everywhere when not written) compared as bits.
          uint32_t a = 0, b = 0;
          std::memcpy(&a, &ya[i], 4);
          std::memcpy(&b, &yb[i], 4);
          if (f32) {
            ASSERT_EQ(a, b) << "f32 output " << i << ", " << what;
          } else {
            ASSERT_EQ(b, 0xffffffffu) << "f32 output written, " << what;
          }
        }
        for (size_t i = 0; i < yab.size(); ++i) {
          if (b16) {
            ASSERT_EQ(yab[i], ybb[i]) << "bf16 output " << i << ", " << what;
          } else {
            ASSERT_EQ(ybb[i], 0xffff) << "bf16 output written, " << what;
          }
        }
      }
    }
  }
}

struct RopeCase {
  RopeConfig config;
  std::string name;
};

std::vector<RopeCase> rope_cases() {
  std::vector<RopeCase> cases;
  RopeConfig plain;
  plain.theta = 10000.0;
  plain.interleave = false;
  cases.push_back({plain, "default"});
  RopeConfig yarn;  // DeepSeek-V3's
  yarn.type = RopeConfig::Type::kYarn;
  yarn.theta = 10000.0;
  yarn.factor = 40.0;
  yarn.original_max_position_embeddings = 4096;
  yarn.beta_fast = 32.0;
  yarn.beta_slow = 1.0;
  yarn.attention_factor = 1.3465735902799727;  // 0.1 * mscale * ln(40) + 1 with mscale 1.0
  yarn.interleave = true;
  cases.push_back({yarn, "yarn interleaved"});
  return cases;
}

// Token positions as a fused batch has them: runs of consecutive positions that restart (each
// request's new tokens), starting at `first`.
std::vector<int32_t> scattered_positions(int64_t first, int64_t T) {
  std::vector<int32_t> pos(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t)
    pos[static_cast<size_t>(t)] = static_cast<int32_t>(first + t % 5 + 97 * (t / 5));
  return pos;
}

// The device's RoPE arguments from cpu::Rope, as the runtime makes them.
struct DeviceRope {
  Buffer inv_freq;
  gpu::RopeArgs args;
  DeviceRope(const cpu::Rope& rope, const RopeConfig& c, int dim)
      : inv_freq(upload(rope.inv_freq())) {
    args.inv_freq = static_cast<const float*>(inv_freq.data());
    args.dim = dim;
    args.attention_factor = static_cast<float>(c.attention_factor);
    args.interleave = c.interleave;
  }
};

TEST(CudaModelKernels, KvRows) {
  MLASPEC_SKIP_WITHOUT_GPU();
  const int dim = 64;
  for (const RopeCase& rc : rope_cases()) {
    const cpu::Rope rope(rc.config, dim);
    DeviceRope dr(rope, rc.config, dim);
    for (int64_t latent : {512, 256}) {
      for (int64_t T : kTokens) {
        for (int64_t first : {int64_t{0}, int64_t{4093}, int64_t{131000}}) {
          const int64_t row = latent + dim;
          const std::vector<float> ckv = randn(static_cast<size_t>(T * row));
          const std::vector<int32_t> pos = scattered_positions(first, T);
          Buffer dc = upload(ckv), dr_out = poisoned<uint16_t>(T * row), dp = upload(pos);
          ASSERT_TRUE(gpu::kv_rows(static_cast<const float*>(dc.data()), T, latent,
                                   static_cast<const int32_t*>(dp.data()), dr.args,
                                   static_cast<uint16_t*>(dr_out.data()), nullptr)
                          .ok());
          sync();
          const std::vector<float> got = from_bf16(download<uint16_t>(dr_out));
          std::vector<float> want(got.size()), bound(got.size());
          for (int64_t t = 0; t < T; ++t) {
            std::vector<float> r(ckv.begin() + t * row, ckv.begin() + (t + 1) * row);
            float ab = 0.0f;
            for (int i = 0; i < dim; ++i) ab = std::max(ab, std::fabs(r[latent + i]));
            rope.apply(r.data() + latent, pos[static_cast<size_t>(t)]);
            for (int64_t i = 0; i < row; ++i) {
              const size_t o = static_cast<size_t>(t * row + i);
              want[o] = round_bf16(r[static_cast<size_t>(i)]);
              bound[o] = i < latent
                             ? 0.0f
                             : kBf16Ulp * std::fabs(r[static_cast<size_t>(i)]) +
                                   4e-6f * ab * static_cast<float>(rc.config.attention_factor);
            }
          }
          expect_near_all(got, want, bound,
                          "kv_rows " + rc.name + " latent " + std::to_string(latent) + " T " +
                              std::to_string(T) + " first " + std::to_string(first));
        }
      }
    }
  }
}

// kv_norm_rows (the latent's RMSNorm and the rope part's RoPE in one launch) is rms_norm (f32 in
// place) followed by kv_rows, bit for bit, on fresh random rows, every RoPE variant, scattered
// positions; every element of the rows written (poisoned, NaN compared as bits, and the two-launch
// form's rows checked all written); ckv itself is left as it was.
TEST(CudaModelKernels, KvNormRowsIsNormThenRows) {
  MLASPEC_SKIP_WITHOUT_GPU();
  const int dim = 64;
  for (const RopeCase& rc : rope_cases()) {
    const cpu::Rope rope(rc.config, dim);
    DeviceRope dr(rope, rc.config, dim);
    for (int64_t latent : {512, 256, 264}) {
      for (int64_t T : kTokens) {
        const int64_t row = latent + dim;
        const std::vector<float> ckv = randn(static_cast<size_t>(T * row), 2.0f);
        const std::vector<float> w = randn(static_cast<size_t>(latent));
        const std::vector<int32_t> pos = scattered_positions(4093, T);
        const float eps = 1e-6f;
        Buffer dp = upload(pos), dw = upload(w);
        const auto* positions = static_cast<const int32_t*>(dp.data());
        const auto* nw = static_cast<const float*>(dw.data());
        Buffer a = upload(ckv), arows = poisoned<uint16_t>(T * row);
        ASSERT_TRUE(gpu::rms_norm(static_cast<float*>(a.data()), row, T, latent, nw, eps,
                                  static_cast<float*>(a.data()), row, nullptr, 0, nullptr)
                        .ok());
        ASSERT_TRUE(gpu::kv_rows(static_cast<const float*>(a.data()), T, latent, positions, dr.args,
                                 static_cast<uint16_t*>(arows.data()), nullptr)
                        .ok());
        Buffer b = upload(ckv), brows = poisoned<uint16_t>(T * row);
        ASSERT_TRUE(gpu::kv_norm_rows(static_cast<const float*>(b.data()), T, latent, nw, eps,
                                      positions, dr.args, static_cast<uint16_t*>(brows.data()),
                                      nullptr)
                        .ok());
        sync();
        const std::string tag =
            rc.name + " latent " + std::to_string(latent) + " T " + std::to_string(T);
        const std::vector<uint16_t> want = download<uint16_t>(arows);
        EXPECT_EQ(std::count(want.begin(), want.end(), uint16_t{0xffff}), 0) << tag;
        EXPECT_EQ(download<uint16_t>(brows), want) << tag;
        EXPECT_EQ(download<float>(b), ckv) << tag << ": ckv changed";
        // Against the CPU: cpu::rms_norm of each latent (RmsNorm's bound) and cpu::Rope of each
        // rope part (KvRows' bound), both rounded to bf16.
        std::vector<float> ref(static_cast<size_t>(T * row)), bound(ref.size());
        for (int64_t t = 0; t < T; ++t) {
          std::vector<float> r(ckv.begin() + t * row, ckv.begin() + (t + 1) * row);
          std::vector<float> normed(static_cast<size_t>(latent));
          cpu::rms_norm(r.data(), 1, latent, w, eps, normed.data());
          float ab = 0.0f;
          for (int i = 0; i < dim; ++i) ab = std::max(ab, std::fabs(r[latent + i]));
          rope.apply(r.data() + latent, pos[static_cast<size_t>(t)]);
          for (int64_t i = 0; i < row; ++i) {
            const float v = i < latent ? normed[static_cast<size_t>(i)] : r[static_cast<size_t>(i)];
            const size_t o = static_cast<size_t>(t * row + i);
            ref[o] = round_bf16(v);
            bound[o] = i < latent ? (kBf16Ulp + 8 * kEps) * std::fabs(v) + 1e-30f
                                  : kBf16Ulp * std::fabs(v) +
                                        4e-6f * ab * static_cast<float>(rc.config.attention_factor);
          }
        }
        expect_near_all(from_bf16(download<uint16_t>(brows)), ref, bound, "kv_norm_rows " + tag);
      }
    }
  }
}

TEST(CudaModelKernels, SplitQ) {
  MLASPEC_SKIP_WITHOUT_GPU();
  const int dim = 64;
  for (const RopeCase& rc : rope_cases()) {
    const cpu::Rope rope(rc.config, dim);
    DeviceRope dr(rope, rc.config, dim);
    for (int64_t H : {1, 16, 128}) {
      for (int64_t T : {1, 7, 33}) {
        const int64_t nope = 128, latent = 512, first = 977;
        const int64_t qk = nope + dim, row = latent + dim;
        const std::vector<float> q = randn(static_cast<size_t>(T * H * qk));
        const std::vector<int32_t> pos = scattered_positions(first, T);
        Buffer dq = upload(q), dn = poisoned<uint16_t>(T * H * nope),
               da = poisoned<uint16_t>(T * H * row), dp = upload(pos);
        ASSERT_TRUE(gpu::split_q(static_cast<const float*>(dq.data()), T, H, nope, latent,
                                 static_cast<const int32_t*>(dp.data()), dr.args,
                                 static_cast<uint16_t*>(dn.data()),
                                 static_cast<uint16_t*>(da.data()), nullptr)
                        .ok());
        sync();
        const std::vector<uint16_t> qn = download<uint16_t>(dn), qa = download<uint16_t>(da);
        std::vector<float> got, want, bound;
        for (int64_t th = 0; th < T * H; ++th) {
          const int64_t t = th / H;
          std::vector<float> r(q.begin() + th * qk, q.begin() + (th + 1) * qk);
          for (int64_t i = 0; i < nope; ++i) {
            ASSERT_EQ(qn[static_cast<size_t>(th * nope + i)], bf16::from_float(r[i]).bits);
          }
          float ab = 0.0f;
          for (int i = 0; i < dim; ++i) ab = std::max(ab, std::fabs(r[nope + i]));
          rope.apply(r.data() + nope, pos[static_cast<size_t>(t)]);
          for (int64_t i = 0; i < row; ++i) {
            const uint16_t b = qa[static_cast<size_t>(th * row + i)];
            if (i < latent) {  // the W_UK GEMM's part: split_q must leave it alone
              ASSERT_EQ(b, 0xffff) << "split_q wrote the latent part";
              continue;
            }
            const float w = r[static_cast<size_t>(nope + i - latent)];
            got.push_back(bf16{b}.to_float());
            want.push_back(round_bf16(w));
            bound.push_back(kBf16Ulp * std::fabs(w) +
                            4e-6f * ab * static_cast<float>(rc.config.attention_factor));
          }
        }
        expect_near_all(
            got, want, bound,
            "split_q " + rc.name + " H " + std::to_string(H) + " T " + std::to_string(T));
      }
    }
  }
}

// Both overloads: f32 gate / up values, and bf16 ones (the long passes' grouped expert GEMMs
// write bf16; the reference then runs on the same bf16-rounded values).
TEST(CudaModelKernels, SiluMul) {
  MLASPEC_SKIP_WITHOUT_GPU();
  for (bool bf16_in : {false, true}) {
    for (int64_t inter : {1, 1407, 1408, 10944, 18432}) {
      for (int64_t T : kTokens) {
        std::vector<float> gu = randn(static_cast<size_t>(T * 2 * inter), 4.0f);
        if (bf16_in) gu = from_bf16(to_bf16(gu));
        Buffer dg = bf16_in ? upload(to_bf16(gu)) : upload(gu), da = poisoned<uint16_t>(T * inter);
        ASSERT_TRUE((bf16_in ? gpu::silu_mul(static_cast<const uint16_t*>(dg.data()), T, inter,
                                             static_cast<uint16_t*>(da.data()), nullptr)
                             : gpu::silu_mul(static_cast<const float*>(dg.data()), T, inter,
                                             static_cast<uint16_t*>(da.data()), nullptr))
                        .ok());
        sync();
        const std::vector<float> got = from_bf16(download<uint16_t>(da));
        std::vector<float> want(got.size()), bound(got.size());
        for (int64_t t = 0; t < T; ++t) {
          const float* g = gu.data() + t * 2 * inter;
          float* o = want.data() + t * inter;
          cpu::silu_mul(g, g + inter, inter, o);
          for (int64_t i = 0; i < inter; ++i) {
            bound[static_cast<size_t>(t * inter + i)] =
                kBf16Ulp * std::fabs(o[i]) + 1e-6f * std::fabs(g[i] * g[inter + i]);
            o[i] = round_bf16(o[i]);
          }
        }
        expect_near_all(got, want, bound,
                        std::string(bf16_in ? "silu_mul (bf16) inter " : "silu_mul inter ") +
                            std::to_string(inter) + " T " + std::to_string(T));
      }
    }
  }
}

// argmax_rows against model::argmax_rows (the rule ForwardOptions::argmax_only states) on random
// rows, rows of few distinct values (ties: the lowest id), rows whose max sits in the last thread
// stride, and refused rows (a NaN, +inf, every value -inf: -1), over vocabularies from 1 to
// V3's 129280 with odd sizes; the output starts poisoned with a value no row can give.
TEST(CudaModelKernels, ArgmaxRows) {
  MLASPEC_SKIP_WITHOUT_GPU();
  for (int64_t vocab : {1, 7, 255, 768, 32769, 102400, 129280}) {
    const int64_t rows = 11;
    // Fresh data each run (the comparison is exact, so no bound depends on the draw).
    const uint32_t seed = std::random_device{}();
    std::printf("[kernels] argmax_rows vocab %lld seed %u\n", static_cast<long long>(vocab), seed);
    std::mt19937 gen(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(static_cast<size_t>(rows * vocab));
    for (float& v : x) v = normal(gen);
    float* r = x.data();
    for (int64_t i = 0; i < vocab; ++i) r[vocab + i] = static_cast<float>(gen() % 3);  // ties
    r[2 * vocab + vocab - 1] = 100.0f;                                                 // last value
    r[3 * vocab + vocab / 2] = NAN;
    r[4 * vocab + (vocab - 1) / 3] = INFINITY;
    for (int64_t i = 0; i < vocab; ++i) r[5 * vocab + i] = -INFINITY;
    for (int64_t i = 0; i < vocab; i += 2) r[6 * vocab + i] = -INFINITY;  // -inf mixed in
    for (int64_t i = 0; i < vocab; ++i) r[7 * vocab + i] = 1.0f;          // all equal: id 0
    Buffer dx = upload(x);
    std::vector<int32_t> poison(static_cast<size_t>(rows), -7);
    Buffer dy = upload(poison);
    ASSERT_TRUE(gpu::argmax_rows(static_cast<const float*>(dx.data()), rows, vocab,
                                 static_cast<int32_t*>(dy.data()), nullptr)
                    .ok());
    sync();
    EXPECT_EQ(download<int32_t>(dy), model::argmax_rows(x, vocab)) << "vocab " << vocab;
  }
}

TEST(CudaModelKernels, GatherRows) {
  MLASPEC_SKIP_WITHOUT_GPU();
  for (int64_t cols : kHidden) {
    const int64_t src_rows = 33;
    const std::vector<uint16_t> src = to_bf16(randn(static_cast<size_t>(src_rows * cols)));
    for (int64_t n : {1, 6, 48, 264}) {
      std::vector<int32_t> idx(static_cast<size_t>(n));
      for (auto& i : idx) i = static_cast<int32_t>(rng()() % src_rows);
      Buffer ds = upload(src), di = upload(idx), dd = poisoned<uint16_t>(n * cols);
      ASSERT_TRUE(gpu::gather_rows(static_cast<const uint16_t*>(ds.data()),
                                   static_cast<const int32_t*>(di.data()), n, cols,
                                   static_cast<uint16_t*>(dd.data()), nullptr)
                      .ok());
      sync();
      const std::vector<uint16_t> d = download<uint16_t>(dd);
      for (int64_t r = 0; r < n; ++r) {
        ASSERT_EQ(0, std::memcmp(d.data() + r * cols, src.data() + idx[r] * cols,
                                 static_cast<size_t>(cols) * 2))
            << "row " << r;
      }
    }
  }
}

// Router shapes: (E, k, n_group, topk_group, kind, norm_topk_prob, routed_scaling_factor).
struct RouterShape {
  std::string name;
  int E, k, n_group, topk_group;
  RouterKind kind;
  bool norm;
  double scale;
};
const std::vector<RouterShape> kRouters = {
    {"V2-Lite 64/6 greedy", 64, 6, 1, 1, RouterKind::kSoftmaxGreedy, false, 1.0},
    {"V2 160/6 group-limited 8/3", 160, 6, 8, 3, RouterKind::kSoftmaxGroupLimitedGreedy, false,
     16.0},
    {"V3 256/8 noaux_tc 8/4", 256, 8, 8, 4, RouterKind::kSigmoidNoauxTc, true, 2.5},
    {"Kimi-K2 384/8 noaux_tc 1/1", 384, 8, 1, 1, RouterKind::kSigmoidNoauxTc, true, 2.827},
    {"odd 37/5 noaux_tc no norm", 37, 5, 1, 1, RouterKind::kSigmoidNoauxTc, false, 1.0},
};

ModelConfig router_config(const RouterShape& s) {
  ModelConfig c;
  c.n_routed_experts = s.E;
  c.num_experts_per_tok = s.k;
  c.n_group = s.n_group;
  c.topk_group = s.topk_group;
  c.router = s.kind;
  c.norm_topk_prob = s.norm;
  c.routed_scaling_factor = s.scale;
  return c;
}

gpu::RouteArgs route_args(const ModelConfig& c, const float* bias) {
  gpu::RouteArgs a;
  a.kind = c.router;
  a.E = c.n_routed_experts;
  a.k = c.num_experts_per_tok;
  a.n_group = c.n_group;
  a.topk_group = c.topk_group;
  a.norm_topk_prob = c.norm_topk_prob;
  a.routed_scaling_factor = static_cast<float>(c.routed_scaling_factor);
  a.bias = bias;
  return a;
}

// Routes T tokens on the device and with cpu::route_token; ids must be equal, weights within
// (2 E + 16) eps relative (the header says why). `logits` [T, E].
void check_route(const RouterShape& s, const std::vector<float>& logits, int64_t T,
                 const std::vector<float>& bias, const std::string& tag) {
  const ModelConfig c = router_config(s);
  MoeWeights w;
  if (s.kind == RouterKind::kSigmoidNoauxTc) w.e_score_correction_bias = bias;
  Buffer dl = upload(logits), db = upload(bias.empty() ? std::vector<float>{0.0f} : bias);
  Buffer dc = poisoned<int32_t>(T * s.k), dw = poisoned<float>(T * s.k);
  const gpu::RouteArgs a = route_args(c, static_cast<const float*>(db.data()));
  ASSERT_TRUE(gpu::route(static_cast<const float*>(dl.data()), T, a,
                         static_cast<int32_t*>(dc.data()), static_cast<float*>(dw.data()), nullptr)
                  .ok());
  sync();
  const std::vector<int32_t> ids = download<int32_t>(dc);
  const std::vector<float> wts = download<float>(dw);
  std::vector<int> want_ids(static_cast<size_t>(s.k));
  std::vector<float> want_w(static_cast<size_t>(s.k));
  for (int64_t t = 0; t < T; ++t) {
    cpu::route_token(c, w, logits.data() + t * s.E, want_ids.data(), want_w.data());
    for (int i = 0; i < s.k; ++i) {
      const size_t o = static_cast<size_t>(t * s.k + i);
      ASSERT_EQ(ids[o], want_ids[static_cast<size_t>(i)])
          << s.name << " " << tag << ": token " << t << " slot " << i;
      ASSERT_LE(
          std::fabs(wts[o] - want_w[static_cast<size_t>(i)]),
          static_cast<float>(2 * s.E + 16) * kEps * std::fabs(want_w[static_cast<size_t>(i)]) +
              1e-30f)
          << s.name << " " << tag << ": token " << t << " slot " << i << " weight";
    }
  }
}

TEST(CudaModelKernels, RouteRandom) {
  MLASPEC_SKIP_WITHOUT_GPU();
  for (const RouterShape& s : kRouters) {
    for (int64_t T : kTokens) {
      const std::vector<float> logits = randn(static_cast<size_t>(T * s.E), 2.0f);
      std::vector<float> bias;
      if (s.kind == RouterKind::kSigmoidNoauxTc) bias = randn(static_cast<size_t>(s.E), 0.05f);
      check_route(s, logits, T, bias, "T " + std::to_string(T));
    }
  }
}

// Ties: every logit equal (all scores tie: the lowest ids win, and with groups the lowest
// groups), logits taking few distinct values, and a bias that makes choices tie across groups.
TEST(CudaModelKernels, RouteTies) {
  MLASPEC_SKIP_WITHOUT_GPU();
  for (const RouterShape& s : kRouters) {
    const int64_t T = 9;
    std::vector<float> logits(static_cast<size_t>(T * s.E));
    for (int64_t t = 0; t < T; ++t) {
      for (int e = 0; e < s.E; ++e) {
        const size_t o = static_cast<size_t>(t * s.E + e);
        logits[o] = t == 0 ? 0.5f : static_cast<float>(static_cast<int>(rng()() % (t + 1))) * 0.25f;
      }
    }
    std::vector<float> bias;
    if (s.kind == RouterKind::kSigmoidNoauxTc) {
      bias.assign(static_cast<size_t>(s.E), 0.0f);
      for (int e = 0; e < s.E; ++e) bias[static_cast<size_t>(e)] = (e % 3) * 0.125f;
    }
    check_route(s, logits, T, bias, "ties");
  }
}

TEST(CudaModelKernels, RouteRefusesShapesBeyondItsLimits) {
  MLASPEC_SKIP_WITHOUT_GPU();
  gpu::RouteArgs a;
  a.kind = RouterKind::kSoftmaxGreedy;
  a.E = gpu::kRouteMaxExperts + 1;
  a.k = 8;
  EXPECT_FALSE(gpu::route(nullptr, 1, a, nullptr, nullptr, nullptr).ok());
  a.E = 64;
  a.n_group = 3;  // does not divide E
  EXPECT_FALSE(gpu::route(nullptr, 1, a, nullptr, nullptr, nullptr).ok());
  a.n_group = 1;
  a.kind = RouterKind::kSigmoidNoauxTc;  // no bias
  EXPECT_FALSE(gpu::route(nullptr, 1, a, nullptr, nullptr, nullptr).ok());
}

// plan_moe == plan_moe_groups exactly, on routed tokens (distinct experts per token).
TEST(CudaModelKernels, PlanMoe) {
  MLASPEC_SKIP_WITHOUT_GPU();
  for (const RouterShape& s : kRouters) {
    for (int64_t T : {1, 2, 7, 33, 256, 1024}) {
      std::vector<int> chosen(static_cast<size_t>(T * s.k));
      std::vector<float> weights = randn(chosen.size());
      std::vector<int> ids(static_cast<size_t>(s.E));
      for (int64_t t = 0; t < T; ++t) {
        for (int e = 0; e < s.E; ++e) ids[static_cast<size_t>(e)] = e;
        // Skewed: half the tokens draw from the first 2k experts (some experts get many rows,
        // most none).
        const int pool = t % 2 == 0 ? std::min(s.E, 2 * s.k) : s.E;
        std::shuffle(ids.begin(), ids.begin() + pool, rng());
        for (int i = 0; i < s.k; ++i) chosen[static_cast<size_t>(t * s.k + i)] = ids[i];
      }
      const MoeGroupPlan want = plan_moe_groups(chosen, weights, T, s.k, s.E);
      const std::vector<int32_t> chosen32(chosen.begin(), chosen.end());
      Buffer dc = upload(chosen32), dw = upload(weights);
      Buffer rows = poisoned<int32_t>(T * s.k), begin = poisoned<int32_t>(s.E + 1),
             crow = poisoned<int32_t>(T * s.k), cw = poisoned<float>(T * s.k),
             row_of = poisoned<int32_t>(T * s.k);
      const int64_t slots = gpu::touched_slots(T, s.k, s.E);
      Buffer touched = poisoned<int32_t>(slots);
      ASSERT_TRUE(gpu::plan_moe(
                      static_cast<const int32_t*>(dc.data()), static_cast<const float*>(dw.data()),
                      T, s.k, s.E, static_cast<int32_t*>(rows.data()),
                      static_cast<int32_t*>(begin.data()), static_cast<int32_t*>(crow.data()),
                      static_cast<float*>(cw.data()), static_cast<int32_t*>(row_of.data()),
                      static_cast<int32_t*>(touched.data()), nullptr)
                      .ok());
      sync();
      const std::string tag = s.name + " T " + std::to_string(T);
      EXPECT_EQ(download<int32_t>(rows), want.rows) << tag;
      const std::vector<int32_t> b = download<int32_t>(begin);
      ASSERT_EQ(b.size(), want.expert_begin.size()) << tag;
      for (size_t e = 0; e < b.size(); ++e) ASSERT_EQ(b[e], want.expert_begin[e]) << tag;
      EXPECT_EQ(download<int32_t>(crow), want.combine_row) << tag;
      EXPECT_EQ(download<float>(cw), want.combine_weight) << tag;
      std::vector<int32_t> want_touched;
      for (int e = 0; e < s.E; ++e) {
        if (want.expert_begin[e + 1] > want.expert_begin[e]) want_touched.push_back(e);
      }
      want_touched.resize(static_cast<size_t>(slots), -1);
      EXPECT_EQ(download<int32_t>(touched), want_touched) << tag;
    }
  }
}

// add_rms_norm_combine (a MoE layer's combine inside the norm after it) is moe_combine into a
// buffer then add_rms_norm, bit for bit: the sums left in x and the norm's f32 and bf16 outputs,
// f32 and bf16 expert outputs, with and without shared experts, fresh random data, poisoned
// outputs (NaN compared as bits: an element neither form writes would show as equal, so the
// two-launch form's outputs are also checked to be all written).
TEST(CudaModelKernels, AddRmsNormCombineIsCombineThenAddNorm) {
  MLASPEC_SKIP_WITHOUT_GPU();
  for (bool bf16_in : {false, true}) {
    for (int64_t hidden : {257, 2048, 7168}) {
      for (int64_t T : kTokens) {
        for (bool with_shared : {true, false}) {
          const int k = std::array{16, 6, 8, 1}[static_cast<size_t>(T % 4)];  // 1 .. kMax
          const int64_t n = T * k;
          std::vector<float> ys = randn(static_cast<size_t>(n * hidden));
          if (bf16_in) ys = from_bf16(to_bf16(ys));
          std::vector<int32_t> pos(static_cast<size_t>(n));
          std::iota(pos.begin(), pos.end(), 0);
          std::shuffle(pos.begin(), pos.end(), rng());
          const std::vector<float> x = randn(static_cast<size_t>(T * hidden), 3.0f),
                                   cw = randn(static_cast<size_t>(n), 0.3f),
                                   shared = randn(static_cast<size_t>(T * hidden)),
                                   nw = randn(static_cast<size_t>(hidden));
          Buffer dys = bf16_in ? upload(to_bf16(ys)) : upload(ys), dp = upload(pos),
                 dcw = upload(cw), ds = upload(shared), dnw = upload(nw);
          gpu::MoeCombineArgs c;
          c.ys = dys.data();
          c.ys_bf16 = bf16_in;
          c.pos = static_cast<const int32_t*>(dp.data());
          c.w = static_cast<const float*>(dcw.data());
          c.k = k;
          c.shared = with_shared ? static_cast<const float*>(ds.data()) : nullptr;
          const float eps = 1e-6f;
          const auto* normw = static_cast<const float*>(dnw.data());
          // Two launches.
          Buffer ax = upload(x), delta = poisoned<float>(T * hidden),
                 ay = poisoned<float>(T * hidden), ayb = poisoned<uint16_t>(T * hidden);
          auto* d = static_cast<float*>(delta.data());
          ASSERT_TRUE((bf16_in ? gpu::moe_combine(static_cast<const uint16_t*>(c.ys), c.pos, c.w, k,
                                                  c.shared, T, hidden, d, nullptr)
                               : gpu::moe_combine(static_cast<const float*>(c.ys), c.pos, c.w, k,
                                                  c.shared, T, hidden, d, nullptr))
                          .ok());
          ASSERT_TRUE(gpu::add_rms_norm(static_cast<float*>(ax.data()), d, T, hidden, normw, eps,
                                        static_cast<float*>(ay.data()), hidden,
                                        static_cast<uint16_t*>(ayb.data()), hidden, nullptr)
                          .ok());
          // One launch.
          Buffer bx = upload(x), by = poisoned<float>(T * hidden),
                 byb = poisoned<uint16_t>(T * hidden);
          ASSERT_TRUE(gpu::add_rms_norm_combine(static_cast<float*>(bx.data()), c, T, hidden, normw,
                                                eps, static_cast<float*>(by.data()), hidden,
                                                static_cast<uint16_t*>(byb.data()), hidden, nullptr)
                          .ok());
          sync();
          const std::string tag = std::string(bf16_in ? "bf16" : "f32") + " ys, hidden " +
                                  std::to_string(hidden) + " T " + std::to_string(T) +
                                  (with_shared ? " shared" : " no shared");
          auto bits = [](const Buffer& b) { return download<uint32_t>(b); };
          const std::vector<uint32_t> ya = bits(ay);
          EXPECT_EQ(std::count(ya.begin(), ya.end(), 0xffffffffu), 0) << tag << ": unwritten";
          EXPECT_EQ(bits(bx), bits(ax)) << tag << ": sums in x";
          EXPECT_EQ(bits(by), ya) << tag << ": f32 output";
          EXPECT_EQ(download<uint16_t>(byb), download<uint16_t>(ayb)) << tag << ": bf16 output";
          // Against the CPU: the sums left in x are x + cpu::moe_combine within the combine's
          // bound (MoeCombine's) and the add's rounding; the norm of those sums (the GPU's own)
          // within RmsNorm's bound.
          std::vector<float> comb(static_cast<size_t>(T * hidden));
          cpu::moe_combine(ys.data(), pos.data(), cw.data(), k,
                           with_shared ? shared.data() : nullptr, T, hidden, comb.data());
          std::vector<float> want(comb.size()), bound(comb.size());
          for (int64_t t = 0; t < T; ++t) {
            for (int64_t j = 0; j < hidden; ++j) {
              const size_t o = static_cast<size_t>(t * hidden + j);
              float mag = with_shared ? std::fabs(shared[o]) : 0.0f;
              for (int e = 0; e < k; ++e) {
                const size_t ie = static_cast<size_t>(t * k + e);
                mag += std::fabs(cw[ie] * ys[static_cast<size_t>(pos[ie] * hidden + j)]);
              }
              want[o] = x[o] + comb[o];
              bound[o] = 4 * (k + 1) * kEps * mag + 2 * kEps * std::fabs(want[o]) + 1e-30f;
            }
          }
          const std::vector<float> sums = download<float>(bx);
          expect_near_all(sums, want, bound, "add_rms_norm_combine sums " + tag);
          std::vector<float> ref(sums.size()), nbound(sums.size());
          cpu::rms_norm(sums.data(), T, hidden, nw, eps, ref.data());
          for (size_t o = 0; o < ref.size(); ++o) nbound[o] = 8 * kEps * std::fabs(ref[o]) + 1e-30f;
          expect_near_all(download<float>(by), ref, nbound, "add_rms_norm_combine norm " + tag);
        }
      }
    }
  }
  // k outside [1, 16] is refused by both forms (a token's rows are held in registers).
  for (int k : {0, 17}) {
    gpu::MoeCombineArgs c;
    c.k = k;
    EXPECT_EQ(gpu::add_rms_norm_combine(nullptr, c, 1, 256, nullptr, 1e-6f, nullptr, 0, nullptr, 0,
                                        nullptr)
                  .code(),
              StatusCode::kInvalidArgument)
        << k;
    EXPECT_EQ(gpu::moe_combine(static_cast<const float*>(nullptr), nullptr, nullptr, k, nullptr, 1,
                               256, nullptr, nullptr)
                  .code(),
              StatusCode::kInvalidArgument)
        << k;
  }
}

// route_and_plan (one launch up to kRoutePlanMaxTokens tokens, two above) gives route +
// plan_moe's outputs bit for bit: every router kind, random and tied logits, token counts across
// the one-launch limit, poisoned outputs; and it refuses what either refuses.
TEST(CudaModelKernels, RouteAndPlanIsRouteThenPlan) {
  MLASPEC_SKIP_WITHOUT_GPU();
  for (const RouterShape& s : kRouters) {
    const ModelConfig c = router_config(s);
    for (int64_t T : {1, 2, 3, 5, 8, 15, 16, 17, 40}) {
      for (bool ties : {false, true}) {
        std::vector<float> logits = randn(static_cast<size_t>(T * s.E), 2.0f);
        if (ties) {
          for (float& v : logits) v = static_cast<float>(static_cast<int>(rng()() % 3)) * 0.25f;
        }
        std::vector<float> bias;
        if (s.kind == RouterKind::kSigmoidNoauxTc) bias = randn(static_cast<size_t>(s.E), 0.05f);
        Buffer dl = upload(logits), db = upload(bias.empty() ? std::vector<float>{0.0f} : bias);
        const gpu::RouteArgs a = route_args(c, static_cast<const float*>(db.data()));
        const int64_t n = T * s.k, slots = gpu::touched_slots(T, s.k, s.E);
        // Outputs of each form: chosen, weights, rows, begin, combine row / weight, row_of,
        // touched.
        struct Out {
          Buffer chosen, weights, rows, begin, crow, cw, row_of, touched;
          gpu::MoePlanOut plan() {
            gpu::MoePlanOut o;
            o.rows = static_cast<int32_t*>(rows.data());
            o.expert_begin = static_cast<int32_t*>(begin.data());
            o.combine_row = static_cast<int32_t*>(crow.data());
            o.combine_weight = static_cast<float*>(cw.data());
            o.row_of = static_cast<int32_t*>(row_of.data());
            o.touched = static_cast<int32_t*>(touched.data());
            return o;
          }
        };
        auto make = [&]() {
          return Out{poisoned<int32_t>(n),       poisoned<float>(n),      poisoned<int32_t>(n),
                     poisoned<int32_t>(s.E + 1), poisoned<int32_t>(n),    poisoned<float>(n),
                     poisoned<int32_t>(n),       poisoned<int32_t>(slots)};
        };
        Out two = make(), one = make();
        const gpu::MoePlanOut p2 = two.plan();
        ASSERT_TRUE(gpu::route(static_cast<const float*>(dl.data()), T, a,
                               static_cast<int32_t*>(two.chosen.data()),
                               static_cast<float*>(two.weights.data()), nullptr)
                        .ok());
        ASSERT_TRUE(gpu::plan_moe(static_cast<const int32_t*>(two.chosen.data()),
                                  static_cast<const float*>(two.weights.data()), T, s.k, s.E,
                                  p2.rows, p2.expert_begin, p2.combine_row, p2.combine_weight,
                                  p2.row_of, p2.touched, nullptr)
                        .ok());
        ASSERT_TRUE(gpu::route_and_plan(static_cast<const float*>(dl.data()), T, a,
                                        static_cast<int32_t*>(one.chosen.data()),
                                        static_cast<float*>(one.weights.data()), one.plan(),
                                        nullptr)
                        .ok());
        sync();
        const std::string tag =
            s.name + " T " + std::to_string(T) + (ties ? " tied logits" : " random logits");
        const std::pair<const char*, Buffer Out::*> fields[] = {
            {"chosen", &Out::chosen}, {"weights", &Out::weights},  {"rows", &Out::rows},
            {"begin", &Out::begin},   {"combine row", &Out::crow}, {"combine weight", &Out::cw},
            {"row_of", &Out::row_of}, {"touched", &Out::touched}};
        for (const auto& [name, f] : fields) {
          const std::vector<int32_t> want = download<int32_t>(two.*f),
                                     got = download<int32_t>(one.*f);  // bits, f32 or int32
          EXPECT_EQ(got, want) << tag << ": " << name;
        }
        const std::vector<int32_t> chosen = download<int32_t>(one.chosen);
        EXPECT_EQ(std::count(chosen.begin(), chosen.end(), -1), 0) << tag << ": chosen unwritten";
        // Against the CPU: each token's experts as cpu::route_token picks them (weights within
        // RouteRandom's bound), and the plan as plan_moe_groups makes it from those.
        MoeWeights mw;
        if (s.kind == RouterKind::kSigmoidNoauxTc) mw.e_score_correction_bias = bias;
        const std::vector<float> wts = download<float>(one.weights);
        std::vector<int> want_ids(static_cast<size_t>(s.k));
        std::vector<float> want_w(static_cast<size_t>(s.k));
        for (int64_t t = 0; t < T; ++t) {
          cpu::route_token(c, mw, logits.data() + t * s.E, want_ids.data(), want_w.data());
          for (int i = 0; i < s.k; ++i) {
            const size_t o = static_cast<size_t>(t * s.k + i);
            ASSERT_EQ(chosen[o], want_ids[static_cast<size_t>(i)]) << tag << ": token " << t;
            ASSERT_LE(std::fabs(wts[o] - want_w[static_cast<size_t>(i)]),
                      static_cast<float>(2 * s.E + 16) * kEps *
                              std::fabs(want_w[static_cast<size_t>(i)]) +
                          1e-30f)
                << tag << ": token " << t << " weight " << i;
          }
        }
        const std::vector<int> chosen_int(chosen.begin(), chosen.end());
        const MoeGroupPlan plan = plan_moe_groups(chosen_int, wts, T, s.k, s.E);
        EXPECT_EQ(download<int32_t>(one.rows), plan.rows) << tag;
        EXPECT_EQ(download<int32_t>(one.crow), plan.combine_row) << tag;
        EXPECT_EQ(download<float>(one.cw), plan.combine_weight) << tag;
        const std::vector<int32_t> begin = download<int32_t>(one.begin);
        EXPECT_TRUE(std::equal(begin.begin(), begin.end(), plan.expert_begin.begin(),
                               plan.expert_begin.end()))
            << tag << ": expert_begin";
      }
    }
  }
  gpu::RouteArgs bad;
  bad.kind = RouterKind::kSoftmaxGreedy;
  bad.E = 64;
  bad.k = gpu::kRouteMaxExperts;  // k > E
  EXPECT_EQ(gpu::route_and_plan(nullptr, 1, bad, nullptr, nullptr, {}, nullptr).code(),
            StatusCode::kInvalidArgument);
  bad.k = 17;  // route takes it, plan_moe does not (k <= 16)
  EXPECT_EQ(gpu::route_and_plan(nullptr, 1, bad, nullptr, nullptr, {}, nullptr).code(),
            StatusCode::kInvalidArgument);
}

// Both overloads: f32 expert outputs, and bf16 ones (the long passes' grouped GEMMs), the
// reference on the same bf16-rounded values.
TEST(CudaModelKernels, MoeCombine) {
  MLASPEC_SKIP_WITHOUT_GPU();
  for (bool bf16_in : {false, true}) {
    for (int64_t hidden : kHidden) {
      for (int64_t T : kTokens) {
        for (int k : {6, 8}) {
          for (bool with_shared : {true, false}) {
            const int64_t n = T * k;
            std::vector<float> ys = randn(static_cast<size_t>(n * hidden));
            if (bf16_in) ys = from_bf16(to_bf16(ys));
            const std::vector<float> shared = randn(static_cast<size_t>(T * hidden));
            std::vector<int32_t> pos(static_cast<size_t>(n));
            for (int64_t i = 0; i < n; ++i) pos[static_cast<size_t>(i)] = static_cast<int32_t>(i);
            std::shuffle(pos.begin(), pos.end(), rng());
            std::vector<float> w = randn(static_cast<size_t>(n), 0.3f);
            Buffer dy = bf16_in ? upload(to_bf16(ys)) : upload(ys), dp = upload(pos),
                   dw = upload(w), ds = upload(shared), dout = poisoned<float>(T * hidden);
            const auto* dpos = static_cast<const int32_t*>(dp.data());
            const auto* dwt = static_cast<const float*>(dw.data());
            const float* dsh = with_shared ? static_cast<const float*>(ds.data()) : nullptr;
            auto* o = static_cast<float*>(dout.data());
            ASSERT_TRUE((bf16_in ? gpu::moe_combine(static_cast<const uint16_t*>(dy.data()), dpos,
                                                    dwt, k, dsh, T, hidden, o, nullptr)
                                 : gpu::moe_combine(static_cast<const float*>(dy.data()), dpos, dwt,
                                                    k, dsh, T, hidden, o, nullptr))
                            .ok());
            sync();
            std::vector<float> want(static_cast<size_t>(T * hidden)), bound(want.size());
            cpu::moe_combine(ys.data(), pos.data(), w.data(), k,
                             with_shared ? shared.data() : nullptr, T, hidden, want.data());
            for (int64_t t = 0; t < T; ++t) {
              for (int64_t j = 0; j < hidden; ++j) {
                float mag =
                    with_shared ? std::fabs(shared[static_cast<size_t>(t * hidden + j)]) : 0;
                for (int i = 0; i < k; ++i) {
                  mag += std::fabs(w[static_cast<size_t>(t * k + i)] *
                                   ys[static_cast<size_t>(pos[t * k + i] * hidden + j)]);
                }
                bound[static_cast<size_t>(t * hidden + j)] = 4 * (k + 1) * kEps * mag + 1e-30f;
              }
            }
            expect_near_all(
                download<float>(dout), want, bound,
                std::string(bf16_in ? "moe_combine (bf16) hidden " : "moe_combine hidden ") +
                    std::to_string(hidden) + " T " + std::to_string(T) + " k " + std::to_string(k) +
                    (with_shared ? " shared" : ""));
          }
        }
      }
    }
  }
}

// The row-invariant GEMM against cpu::linear (CBLAS, f32) on the same bf16-rounded inputs, batched
// with strides, and row invariance: a row's output from a call of T rows equals, bitwise, its
// output from a call of 1.
TEST(CudaModelKernels, RowInvariantGemm) {
  MLASPEC_SKIP_WITHOUT_GPU();
  struct Shape {
    int64_t N, K;
    int batch;
  };
  const std::vector<Shape> shapes = {{64, 2048, 1},  {1408 * 2, 2048, 1}, {2048, 1408, 1},
                                     {512, 128, 16}, {128, 512, 16},      {61, 257, 3},
                                     {384, 7168, 1}};
  for (const Shape& sh : shapes) {
    // 1 .. 4 rows take the GEMV form (gemv_serves) where K % 8 == 0, more the warp per column:
    // each form is held to the CPU and, by the last-row check below, to the other's bits.
    for (int64_t T : {1, 2, 3, 4, 7, 16, 33}) {
      // bf16 -> f32, bf16 -> bf16 (the model's GEMMs), f32 -> f32 (the MoE router's).
      for (int mode = 0; mode < 3; ++mode) {
        const bool all_f32 = mode == 2;
        const gpu::GemmType yt = mode == 1 ? gpu::GemmType::kBF16 : gpu::GemmType::kF32;
        const int64_t N = sh.N, K = sh.K, B = sh.batch;
        // x: [T, B, K] (per-batch slices interleaved as the per-head GEMMs read them); w: [B, N,
        // K].
        const std::vector<float> xf = randn(static_cast<size_t>(T * B * K));
        const std::vector<float> wf = randn(static_cast<size_t>(B * N * K), 0.05f);
        const std::vector<uint16_t> xb = to_bf16(xf), wb = to_bf16(wf);
        const std::vector<float> xr = all_f32 ? xf : from_bf16(xb);
        const std::vector<float> wr = all_f32 ? wf : from_bf16(wb);
        const size_t ye = yt == gpu::GemmType::kF32 ? 4 : 2;
        Buffer dx = all_f32 ? upload(xf) : upload(xb), dw = all_f32 ? upload(wf) : upload(wb);
        Buffer dy(static_cast<size_t>(T * B * N) * ye, Device::kCUDA);
        throw_if_error(dy.fill_bytes(0xff));
        gpu::RowInvariantGemm g;
        g.x = dx.data();
        g.x_type = all_f32 ? gpu::GemmType::kF32 : gpu::GemmType::kBF16;
        g.ldx = B * K;
        g.stride_x = K;
        g.w = dw.data();
        g.w_type = g.x_type;
        g.ldw = K;
        g.stride_w = N * K;
        g.y = dy.data();
        g.y_type = yt;
        g.ldy = B * N;
        g.stride_y = N;
        g.T = T;
        g.N = N;
        g.K = K;
        g.batch = static_cast<int>(B);
        EXPECT_EQ(gpu::gemv_serves(g), !all_f32 && T <= 4 && K % 8 == 0) << N << " x " << K;
        ASSERT_TRUE(gpu::gemm_row_invariant(g, nullptr).ok());
        sync();
        std::vector<float> got(static_cast<size_t>(T * B * N));
        if (yt == gpu::GemmType::kF32) {
          got = download<float>(dy);
        } else {
          got = from_bf16(download<uint16_t>(dy));
        }
        std::vector<float> want(got.size()), bound(got.size());
        for (int64_t b = 0; b < B; ++b) {
          Matrix W;
          W.rows = static_cast<int>(N);
          W.cols = static_cast<int>(K);
          W.data.assign(wr.begin() + b * N * K, wr.begin() + (b + 1) * N * K);
          cpu::linear(xr.data() + b * K, T, W, want.data() + b * N, B * K, B * N);
          for (int64_t t = 0; t < T; ++t) {
            for (int64_t j = 0; j < N; ++j) {
              float mag = 0.0f;
              for (int64_t kk = 0; kk < K; ++kk) {
                mag += std::fabs(xr[static_cast<size_t>(t * B * K + b * K + kk)] *
                                 wr[static_cast<size_t>(b * N * K + j * K + kk)]);
              }
              const size_t o = static_cast<size_t>(t * B * N + b * N + j);
              bound[o] = 2 * static_cast<float>(K) * kEps * mag +
                         (yt == gpu::GemmType::kBF16 ? kBf16Ulp * std::fabs(want[o]) : 0.0f) +
                         1e-30f;
              if (yt == gpu::GemmType::kBF16) want[o] = round_bf16(want[o]);
            }
          }
        }
        const std::string tag = "N " + std::to_string(N) + " K " + std::to_string(K) + " x" +
                                std::to_string(B) + " T " + std::to_string(T) +
                                (all_f32 ? " f32 in" : "") +
                                (yt == gpu::GemmType::kF32 ? " f32" : " bf16");
        expect_near_all(got, want, bound, "gemm_row_invariant " + tag);

        // Row invariance: the last row alone.
        if (T > 1) {
          Buffer dx1 = all_f32 ? upload(std::vector<float>(xf.end() - B * K, xf.end()))
                               : upload(std::vector<uint16_t>(xb.end() - B * K, xb.end()));
          Buffer dy1(static_cast<size_t>(B * N) * ye, Device::kCUDA);
          throw_if_error(dy1.fill_bytes(0xff));
          gpu::RowInvariantGemm g1 = g;
          g1.x = dx1.data();
          g1.y = dy1.data();
          g1.T = 1;
          ASSERT_TRUE(gpu::gemm_row_invariant(g1, nullptr).ok());
          sync();
          std::vector<uint8_t> all(static_cast<size_t>(T * B * N) * ye), one(B * N * ye);
          throw_if_error(dy.copy_to_host(all.data(), all.size()));
          throw_if_error(dy1.copy_to_host(one.data(), one.size()));
          EXPECT_EQ(0, std::memcmp(all.data() + (T - 1) * B * N * ye, one.data(), one.size()))
              << "gemm_row_invariant " << tag << ": the last row differs alone";
        }
      }
    }
  }
}

// A grouped expert GEMM's shape: E experts of [N, K], k per token.
struct ExpertShape {
  std::string name;
  int E, k;
  int64_t N, K;
};

// E experts' random bf16 weights [N, K]: the host copies, the device copies and the device
// table of their pointers (GroupedGemm::w).
struct Experts {
  std::vector<std::vector<uint16_t>> w;
  std::vector<Buffer> dw;
  std::vector<const uint16_t*> ptrs;
  Buffer dptrs;
};
Experts random_experts(int E, int64_t N, int64_t K) {
  Experts ex;
  for (int e = 0; e < E; ++e) {
    ex.w.push_back(to_bf16(randn(static_cast<size_t>(N * K), 0.05f)));
    ex.dw.push_back(upload(ex.w.back()));
    ex.ptrs.push_back(static_cast<const uint16_t*>(ex.dw.back().data()));
  }
  ex.dptrs = Buffer(ex.ptrs.size() * sizeof(const uint16_t*), Device::kCUDA);
  throw_if_error(ex.dptrs.copy_from_host(ex.ptrs.data(), ex.ptrs.size() * sizeof(const uint16_t*)));
  return ex;
}

// Routing of T tokens to k distinct experts of E each, skewed to the first 2k experts for even
// tokens (so some experts get many rows and some none).
std::vector<int32_t> random_routing(int64_t T, int k, int E) {
  std::vector<int32_t> chosen(static_cast<size_t>(T * k));
  std::vector<int> ids(static_cast<size_t>(E));
  for (int64_t t = 0; t < T; ++t) {
    std::iota(ids.begin(), ids.end(), 0);
    const int pool = t % 2 == 0 ? std::min(E, 2 * k) : E;
    std::shuffle(ids.begin(), ids.begin() + pool, rng());
    for (int i = 0; i < k; ++i) chosen[static_cast<size_t>(t * k + i)] = ids[i];
  }
  return chosen;
}

// A grouped GEMM's arguments over device buffers: x [rows, K] bf16, the experts' pointer table,
// plan_moe's begin and touched, y f32.
gpu::GroupedGemm grouped_args(const Buffer& x, const Buffer& w, const Buffer& begin,
                              const Buffer& touched, Buffer& y, int64_t T, int64_t N, int64_t K,
                              int k, int E) {
  gpu::GroupedGemm g;
  g.x = static_cast<const uint16_t*>(x.data());
  g.w = static_cast<const uint16_t* const*>(w.data());
  g.begin = static_cast<const int32_t*>(begin.data());
  g.touched = static_cast<const int32_t*>(touched.data());
  g.y = y.data();
  g.max_rows = T;
  g.N = N;
  g.K = K;
  g.k = k;
  g.experts = E;
  return g;
}

// The CPU reference of one expert's rows [r0, r0 + m) of a grouped GEMM (x [rows, K] as float,
// the expert's bf16 w [N, K]): want = cpu::linear, bound = the f32 accumulation bound
// 2 K eps sum_k |x w| per element.
void expert_reference(const std::vector<float>& xr, const std::vector<uint16_t>& w, int64_t r0,
                      int64_t m, int64_t N, int64_t K, std::vector<float>* want,
                      std::vector<float>* bound) {
  Matrix W;
  W.rows = static_cast<int>(N);
  W.cols = static_cast<int>(K);
  W.data = from_bf16(w);
  cpu::linear(xr.data() + r0 * K, m, W, want->data() + r0 * N);
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t j = 0; j < N; ++j) {
      float mag = 0.0f;
      for (int64_t kk = 0; kk < K; ++kk) {
        mag += std::fabs(xr[static_cast<size_t>((r0 + r) * K + kk)] *
                         W.data[static_cast<size_t>(j * K + kk)]);
      }
      (*bound)[static_cast<size_t>((r0 + r) * N + j)] =
          2 * static_cast<float>(K) * kEps * mag + 1e-30f;
    }
  }
}

// The grouped row-invariant GEMM over routed experts (plan_moe's touched list and row ranges):
// bitwise equal to gemm_row_invariant per expert, and within the GEMM bound of cpu::linear.
TEST(CudaModelKernels, GroupedRowInvariantGemm) {
  MLASPEC_SKIP_WITHOUT_GPU();
  const std::vector<ExpertShape> shapes = {{"V2-Lite gate_up", 64, 6, 2 * 1408, 2048},
                                           {"V2-Lite down", 64, 6, 2048, 1408},
                                           {"Kimi down", 384, 8, 1024, 544},
                                           {"odd", 37, 5, 61, 257}};
  for (const ExpertShape& sh : shapes) {
    const Experts ex = random_experts(sh.E, sh.N, sh.K);
    const auto& w = ex.w;
    const auto& ptrs = ex.ptrs;
    const Buffer& dptrs = ex.dptrs;
    for (int64_t T : {1, 2, 7, 16, 33, 128}) {  // 128: the runtime's grouped-path limit
      const std::vector<int32_t> chosen = random_routing(T, sh.k, sh.E);
      const int64_t n = T * sh.k, slots = gpu::touched_slots(T, sh.k, sh.E);
      const std::vector<float> weights(static_cast<size_t>(n), 1.0f);
      Buffer dc = upload(chosen), dwt = upload(weights);
      Buffer rows = poisoned<int32_t>(n), begin = poisoned<int32_t>(sh.E + 1),
             crow = poisoned<int32_t>(n), cw = poisoned<float>(n), row_of = poisoned<int32_t>(n),
             touched = poisoned<int32_t>(slots);
      ASSERT_TRUE(gpu::plan_moe(
                      static_cast<const int32_t*>(dc.data()), static_cast<const float*>(dwt.data()),
                      T, sh.k, sh.E, static_cast<int32_t*>(rows.data()),
                      static_cast<int32_t*>(begin.data()), static_cast<int32_t*>(crow.data()),
                      static_cast<float*>(cw.data()), static_cast<int32_t*>(row_of.data()),
                      static_cast<int32_t*>(touched.data()), nullptr)
                      .ok());
      const std::vector<uint16_t> xb = to_bf16(randn(static_cast<size_t>(n * sh.K)));
      Buffer dx = upload(xb), dy = poisoned<float>(n * sh.N);
      gpu::GroupedGemm g = grouped_args(dx, dptrs, begin, touched, dy, T, sh.N, sh.K, sh.k, sh.E);
      ASSERT_TRUE(gpu::gemm_grouped_row_invariant(g, nullptr).ok());
      sync();
      const std::vector<float> got = download<float>(dy);
      const std::vector<int32_t> b = download<int32_t>(begin);
      const std::vector<float> xr = from_bf16(xb);
      const std::string tag = sh.name + " T " + std::to_string(T);
      std::vector<float> want(got.size()), bound(got.size());
      for (int e = 0; e < sh.E; ++e) {
        const int64_t r0 = b[static_cast<size_t>(e)], m = b[static_cast<size_t>(e) + 1] - r0;
        if (m == 0) continue;
        // Bitwise: the plain row-invariant GEMM over this expert's rows.
        Buffer dy1 = poisoned<float>(m * sh.N);
        gpu::RowInvariantGemm p;
        p.x = static_cast<const uint16_t*>(dx.data()) + r0 * sh.K;
        p.ldx = sh.K;
        p.w = ptrs[static_cast<size_t>(e)];
        p.ldw = sh.K;
        p.y = dy1.data();
        p.ldy = sh.N;
        p.T = m;
        p.N = sh.N;
        p.K = sh.K;
        ASSERT_TRUE(gpu::gemm_row_invariant(p, nullptr).ok());
        sync();
        const std::vector<float> one = download<float>(dy1);
        ASSERT_EQ(0, std::memcmp(one.data(), got.data() + r0 * sh.N, one.size() * sizeof(float)))
            << tag << ": expert " << e << " differs from gemm_row_invariant";
        expert_reference(xr, w[static_cast<size_t>(e)], r0, m, sh.N, sh.K, &want, &bound);
      }
      ASSERT_EQ(b[static_cast<size_t>(sh.E)], n) << tag;
      expect_near_all(got, want, bound, "grouped_gemm " + tag);
    }
  }
}

// plan_moe over `chosen` ([T, k] expert ids): the begin offsets and touched slots on the device.
struct MoePlan {
  Buffer rows, begin, crow, cw, row_of, touched;
};
MoePlan plan_routing(const std::vector<int32_t>& chosen, int64_t T, int k, int E) {
  const int64_t n = T * k, slots = gpu::touched_slots(T, k, E);
  const std::vector<float> weights(static_cast<size_t>(n), 1.0f);
  Buffer dc = upload(chosen), dwt = upload(weights);
  MoePlan p{poisoned<int32_t>(n), poisoned<int32_t>(E + 1), poisoned<int32_t>(n),
            poisoned<float>(n),   poisoned<int32_t>(n),     poisoned<int32_t>(slots)};
  throw_if_error(gpu::plan_moe(
      static_cast<const int32_t*>(dc.data()), static_cast<const float*>(dwt.data()), T, k, E,
      static_cast<int32_t*>(p.rows.data()), static_cast<int32_t*>(p.begin.data()),
      static_cast<int32_t*>(p.crow.data()), static_cast<float*>(p.cw.data()),
      static_cast<int32_t*>(p.row_of.data()), static_cast<int32_t*>(p.touched.data()), nullptr));
  return p;
}

using GroupedKernel = Status (*)(const gpu::GroupedGemm&, void*);

// A default-mode grouped expert GEMM (`kernel`, named `name`): every routed row within the f32
// accumulation bound of the CPU's linear, every output written (poisoned y), and each row bitwise
// what the same row gives routed alone (a one-token pass to its expert): the row-invariance that
// makes a token's result independent of its batchmates. With `same_bits_as`, also bitwise that
// kernel's output on the same call.
void check_grouped_kernel(const std::string& name, GroupedKernel kernel,
                          const std::vector<ExpertShape>& shapes, const std::vector<int64_t>& Ts,
                          GroupedKernel same_bits_as = nullptr) {
  for (const ExpertShape& sh : shapes) {
    const Experts ex = random_experts(sh.E, sh.N, sh.K);
    const auto& w = ex.w;
    const Buffer& dptrs = ex.dptrs;
    for (int64_t T : Ts) {
      const std::vector<int32_t> chosen = random_routing(T, sh.k, sh.E);
      const int64_t n = T * sh.k;
      MoePlan p = plan_routing(chosen, T, sh.k, sh.E);
      const std::vector<uint16_t> xb = to_bf16(randn(static_cast<size_t>(n * sh.K)));
      Buffer dx = upload(xb), dy = poisoned<float>(n * sh.N);
      gpu::GroupedGemm g =
          grouped_args(dx, dptrs, p.begin, p.touched, dy, T, sh.N, sh.K, sh.k, sh.E);
      ASSERT_TRUE(kernel(g, nullptr).ok());
      sync();
      const std::vector<float> got = download<float>(dy);
      const std::vector<int32_t> b = download<int32_t>(p.begin);
      ASSERT_EQ(b[static_cast<size_t>(sh.E)], n);
      const std::vector<float> xr = from_bf16(xb);
      const std::string tag = sh.name + " T " + std::to_string(T);
      std::vector<float> want(got.size()), bound(got.size());
      std::vector<std::pair<int, int64_t>> sample;  // (expert, row) checked alone below
      for (int e = 0; e < sh.E; ++e) {
        const int64_t r0 = b[static_cast<size_t>(e)], m = b[static_cast<size_t>(e) + 1] - r0;
        if (m == 0) continue;
        if (sample.size() < 3) sample.emplace_back(e, r0 + m - 1);
        expert_reference(xr, w[static_cast<size_t>(e)], r0, m, sh.N, sh.K, &want, &bound);
      }
      expect_near_all(got, want, bound, name + " " + tag);
      if (same_bits_as != nullptr) {
        Buffer dy2 = poisoned<float>(n * sh.N);
        gpu::GroupedGemm g2 = g;
        g2.y = dy2.data();
        ASSERT_TRUE(same_bits_as(g2, nullptr).ok());
        sync();
        const std::vector<float> other = download<float>(dy2);
        ASSERT_EQ(0, std::memcmp(other.data(), got.data(), got.size() * sizeof(float)))
            << name << " " << tag << ": not bitwise the other kernel's output";
      }
      // Row-invariance: a sampled row routed alone (T = 1, k = 1) gives the same bits.
      for (const auto& [e, r] : sample) {
        MoePlan p1 = plan_routing({e}, 1, 1, sh.E);
        const std::vector<uint16_t> x1(xb.begin() + r * sh.K, xb.begin() + (r + 1) * sh.K);
        Buffer dx1 = upload(x1), dy1 = poisoned<float>(sh.N);
        gpu::GroupedGemm g1 = g;
        g1.x = static_cast<const uint16_t*>(dx1.data());
        g1.begin = static_cast<const int32_t*>(p1.begin.data());
        g1.touched = static_cast<const int32_t*>(p1.touched.data());
        g1.y = dy1.data();
        g1.max_rows = 1;
        g1.k = 1;
        ASSERT_TRUE(kernel(g1, nullptr).ok());
        sync();
        const std::vector<float> alone = download<float>(dy1);
        ASSERT_EQ(0, std::memcmp(alone.data(), got.data() + r * sh.N, alone.size() * sizeof(float)))
            << name << " " << tag << ": expert " << e << " row " << r
            << " differs from the row routed alone";
      }
    }
  }
}

// A grouped kernel refuses an [N, K] expert shape it cannot take (kInvalidArgument), with or
// without rows to run.
void expect_refuses(GroupedKernel kernel, int64_t N, int64_t K) {
  gpu::GroupedGemm bad;
  bad.N = N, bad.K = K, bad.k = 1, bad.experts = 1;
  for (int64_t rows : {0, 1}) {
    bad.max_rows = rows;
    EXPECT_EQ(kernel(bad, nullptr).code(), StatusCode::kInvalidArgument) << N << " x " << K;
  }
}

// The grouped expert GEMM on tensor cores (default mode, passes of >= kGroupedTcMinTokens).
// Shapes the kernel cannot take are refused.
TEST(CudaModelKernels, GroupedTensorCoreGemm) {
  MLASPEC_SKIP_WITHOUT_GPU();
  EXPECT_FALSE(gpu::grouped_tc_fits(61, 256));
  EXPECT_FALSE(gpu::grouped_tc_fits(64, 257));
  expect_refuses(gpu::gemm_grouped_tc, 61, 257);
  check_grouped_kernel("grouped_tc", gpu::gemm_grouped_tc,
                       {{"V2-Lite gate_up", 64, 6, 2 * 1408, 2048},
                        {"V2-Lite down", 64, 6, 2048, 1408},
                        {"Kimi-like down", 384, 8, 1024, 544}},
                       {1, 3, 16, 33, 128});
}

// The grouped GEMV (default mode, passes of fewer tokens), including column counts that leave a
// warp's last columns empty and experts with more rows than one row group; bitwise the grouped
// row-invariant kernel (the same order of operations per sum).
TEST(CudaModelKernels, GroupedGemv) {
  MLASPEC_SKIP_WITHOUT_GPU();
  EXPECT_FALSE(gpu::grouped_gemv_fits(64, 257));
  EXPECT_TRUE(gpu::grouped_gemv_fits(61, 256));
  expect_refuses(gpu::gemm_grouped_gemv, 64, 257);
  check_grouped_kernel("grouped_gemv", gpu::gemm_grouped_gemv,
                       {{"V2-Lite gate_up", 64, 6, 2 * 1408, 2048},
                        {"V2-Lite down", 64, 6, 2048, 1408},
                        {"Kimi-like down", 384, 8, 1024, 544},
                        {"odd N", 37, 5, 61, 264}},
                       {1, 2, 5, 16, 31}, gpu::gemm_grouped_row_invariant);
}

// The experts' gate_up pass in one launch (gemm_grouped_gemv_swiglu: routed rows read in place
// from the token rows, SwiGLU in the epilogue): bitwise gather_rows + gemm_grouped_gemv (f32) +
// silu_mul on fresh random tokens and routings, every activation written (poisoned output), odd
// intermediate sizes that leave a warp's last column pair half empty, experts with more rows than
// one row group; shapes it cannot take are refused.
TEST(CudaModelKernels, GroupedGemvSwiglu) {
  MLASPEC_SKIP_WITHOUT_GPU();
  gpu::GroupedGemm bad;
  bad.k = 1, bad.experts = 1, bad.max_rows = 1, bad.y_type = gpu::GemmType::kBF16;
  for (auto [N, K] : {std::pair<int64_t, int64_t>{63, 256}, {64, 257}}) {
    bad.N = N, bad.K = K;
    EXPECT_EQ(gpu::gemm_grouped_gemv_swiglu(bad, nullptr, nullptr).code(),
              StatusCode::kInvalidArgument)
        << N << " x " << K;
  }
  bad.N = 64, bad.K = 256, bad.y_type = gpu::GemmType::kF32;
  EXPECT_EQ(gpu::gemm_grouped_gemv_swiglu(bad, nullptr, nullptr).code(),
            StatusCode::kInvalidArgument);
  const std::vector<ExpertShape> shapes = {{"V2-Lite gate_up", 64, 6, 2 * 1408, 2048},
                                           {"Kimi-like gate_up", 384, 8, 2 * 512, 1024},
                                           {"odd inter", 37, 5, 2 * 61, 264},
                                           {"one column", 3, 2, 2, 8}};
  for (const ExpertShape& sh : shapes) {
    const Experts ex = random_experts(sh.E, sh.N, sh.K);
    const int64_t inter = sh.N / 2;
    for (int64_t T : {1, 2, 3, 5, 16, 31}) {
      const std::vector<int32_t> chosen = random_routing(T, sh.k, sh.E);
      const int64_t n = T * sh.k;
      MoePlan p = plan_routing(chosen, T, sh.k, sh.E);
      Buffer dx = upload(to_bf16(randn(static_cast<size_t>(T * sh.K))));
      const auto* rows = static_cast<const int32_t*>(p.rows.data());
      // The three launches.
      Buffer xs = poisoned<uint16_t>(n * sh.K), gu = poisoned<float>(n * sh.N),
             want = poisoned<uint16_t>(n * inter);
      ASSERT_TRUE(gpu::gather_rows(static_cast<const uint16_t*>(dx.data()), rows, n, sh.K,
                                   static_cast<uint16_t*>(xs.data()), nullptr)
                      .ok());
      gpu::GroupedGemm g =
          grouped_args(xs, ex.dptrs, p.begin, p.touched, gu, T, sh.N, sh.K, sh.k, sh.E);
      ASSERT_TRUE(gpu::gemm_grouped_gemv(g, nullptr).ok());
      ASSERT_TRUE(gpu::silu_mul(static_cast<const float*>(gu.data()), n, inter,
                                static_cast<uint16_t*>(want.data()), nullptr)
                      .ok());
      // The one launch.
      Buffer got = poisoned<uint16_t>(n * inter);
      gpu::GroupedGemm f = g;
      f.x = static_cast<const uint16_t*>(dx.data());
      f.y = got.data();
      f.y_type = gpu::GemmType::kBF16;
      ASSERT_TRUE(gpu::gemm_grouped_gemv_swiglu(f, rows, nullptr).ok());
      sync();
      const std::vector<uint16_t> a = download<uint16_t>(got), b = download<uint16_t>(want);
      int64_t differ = 0, first = -1;
      EXPECT_EQ(std::count(a.begin(), a.end(), uint16_t{0xffff}), 0)
          << sh.name << " T " << T << ": activations left unwritten (poison)";
      for (size_t i = 0; i < a.size(); ++i) {
        if (a[i] != b[i]) {
          if (first < 0) first = static_cast<int64_t>(i);
          ++differ;
        }
      }
      EXPECT_EQ(differ, 0) << sh.name << " T " << T << ": " << differ << " of " << a.size()
                           << " activations differ from the three launches, first at row "
                           << first / std::max<int64_t>(inter, 1) << " column "
                           << first % std::max<int64_t>(inter, 1);
      // Against the CPU: each routed row's token gathered on the host, its expert's gate_up by
      // cpu::linear (expert_reference: the value and the f32 accumulation bound), cpu::silu_mul,
      // one bf16 rounding; the bound carries the GEMM bounds through silu(g) * u (|silu'| < 1.1).
      const std::vector<int32_t> tok = download<int32_t>(p.rows), b0 = download<int32_t>(p.begin);
      const std::vector<float> xt = from_bf16(download<uint16_t>(dx));
      std::vector<float> xr(static_cast<size_t>(n * sh.K));
      for (int64_t i = 0; i < n; ++i) {
        std::copy_n(xt.begin() + tok[static_cast<size_t>(i)] * sh.K, sh.K, xr.begin() + i * sh.K);
      }
      std::vector<float> gu_ref(static_cast<size_t>(n * sh.N)), gu_bound(gu_ref.size());
      for (int e = 0; e < sh.E; ++e) {
        const int64_t r0 = b0[static_cast<size_t>(e)], m = b0[static_cast<size_t>(e) + 1] - r0;
        if (m > 0)
          expert_reference(xr, ex.w[static_cast<size_t>(e)], r0, m, sh.N, sh.K, &gu_ref, &gu_bound);
      }
      std::vector<float> act_want(static_cast<size_t>(n * inter)), act_bound(act_want.size());
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < inter; ++j) {
          const size_t gi = static_cast<size_t>(i * sh.N + j), ui = gi + static_cast<size_t>(inter);
          const float g = gu_ref[gi], u = gu_ref[ui];
          float o = 0.0f;
          cpu::silu_mul(&g, &u, 1, &o);
          const float silu = g / (1.0f + std::exp(-g));
          const size_t ai = static_cast<size_t>(i * inter + j);
          act_want[ai] = round_bf16(o);
          act_bound[ai] = kBf16Ulp * std::fabs(o) + 1.1f * gu_bound[gi] * std::fabs(u) +
                          std::fabs(silu) * gu_bound[ui] + 1e-6f * std::fabs(g * u) + 1e-30f;
        }
      }
      expect_near_all(from_bf16(a), act_want, act_bound,
                      "grouped_gemv_swiglu " + sh.name + " T " + std::to_string(T));
    }
  }
}

// Timings (printed, not asserted): the three grouped expert kernels on DeepSeek-V2-Lite's
// gate_up shape with uniform routing, per pass size, as µs per call and GB/s of the touched
// experts' weights (each read once): where the runtime's kGroupedTcMinTokens should sit.
TEST(CudaModelKernels, GroupedGemmTimings) {
  MLASPEC_SKIP_WITHOUT_GPU();
  const ExpertShape sh{"V2-Lite gate_up", 64, 6, 2 * 1408, 2048};
  const Experts ex = random_experts(sh.E, sh.N, sh.K);
  cudaEvent_t t0, t1;
  ASSERT_EQ(cudaEventCreate(&t0), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&t1), cudaSuccess);
  const std::vector<std::pair<std::string, GroupedKernel>> kernels = {
      {"row_invariant", gpu::gemm_grouped_row_invariant},
      {"gemv", gpu::gemm_grouped_gemv},
      {"tc", gpu::gemm_grouped_tc}};
  for (int64_t T : {1, 2, 4, 8, 16, 32, 64, 128}) {
    std::vector<int32_t> chosen(static_cast<size_t>(T * sh.k));
    std::vector<int> ids(static_cast<size_t>(sh.E));
    std::vector<bool> used(static_cast<size_t>(sh.E), false);
    for (int64_t t = 0; t < T; ++t) {
      std::iota(ids.begin(), ids.end(), 0);
      std::shuffle(ids.begin(), ids.end(), rng());
      for (int i = 0; i < sh.k; ++i) {
        chosen[static_cast<size_t>(t * sh.k + i)] = ids[static_cast<size_t>(i)];
        used[static_cast<size_t>(ids[static_cast<size_t>(i)])] = true;
      }
    }
    const int64_t touched = std::count(used.begin(), used.end(), true);
    MoePlan p = plan_routing(chosen, T, sh.k, sh.E);
    Buffer dx = upload(to_bf16(randn(static_cast<size_t>(T * sh.k * sh.K))));
    Buffer dy = poisoned<float>(T * sh.k * sh.N);
    const gpu::GroupedGemm g =
        grouped_args(dx, ex.dptrs, p.begin, p.touched, dy, T, sh.N, sh.K, sh.k, sh.E);
    std::string line = "[kernels] grouped timings " + sh.name + " T " + std::to_string(T) + " (" +
                       std::to_string(touched) + " experts):";
    for (const auto& [name, kernel] : kernels) {
      for (int i = 0; i < 3; ++i) ASSERT_TRUE(kernel(g, nullptr).ok());  // warm-up
      std::vector<float> ms;
      for (int i = 0; i < 20; ++i) {
        ASSERT_EQ(cudaEventRecord(t0), cudaSuccess);
        ASSERT_TRUE(kernel(g, nullptr).ok());
        ASSERT_EQ(cudaEventRecord(t1), cudaSuccess);
        ASSERT_EQ(cudaEventSynchronize(t1), cudaSuccess);
        float v = 0;
        ASSERT_EQ(cudaEventElapsedTime(&v, t0, t1), cudaSuccess);
        ms.push_back(v);
      }
      std::sort(ms.begin(), ms.end());
      const double us = 1e3 * ms[ms.size() / 2];
      const double gbs = static_cast<double>(touched * sh.N * sh.K * 2) / (us * 1e3);
      char buf[96];
      std::snprintf(buf, sizeof buf, " %s %.1f us (%.0f GB/s)", name.c_str(), us, gbs);
      line += buf;
    }
    std::printf("%s\n", line.c_str());
  }
  cudaEventDestroy(t0);
  cudaEventDestroy(t1);
}

}  // namespace
}  // namespace mlaspec::model
