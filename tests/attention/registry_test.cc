// The backend registry and dispatcher: capabilities from the kernels' own traits, the guard's
// reasons, explicit-but-incapable errors, auto's choice under a given profile, counters, logging.
#include "mlaspec/attention/registry.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <vector>

#include "../../src/attention/cuda/traits.h"
#include "common/test_helpers.h"
#include "common/verify_problem.h"
#include "mlaspec/attention/cpu_caps.h"
#include "mlaspec/core/log.h"

namespace mlaspec::attn {
namespace {

// gmock is not linked: a substring check that prints both strings.

using testing::uniform_shape;

bool caps_equal(const BackendCaps& a, const BackendCaps& b) {
  return a.name == b.name && a.device == b.device && a.min_q_len == b.min_q_len &&
         a.max_q_len == b.max_q_len && a.min_heads == b.min_heads && a.max_heads == b.max_heads &&
         a.max_batch == b.max_batch && a.max_seq_len == b.max_seq_len &&
         a.kv_dtypes == b.kv_dtypes && a.page_size_mask == b.page_size_mask &&
         a.deterministic == b.deterministic && a.split_kv == b.split_kv;
}

// ---- Capabilities come from the traits --------------------------------------------------------

TEST(Registry, BuiltinCapsAreTheKernelsTraits) {
  auto reg = BackendRegistry::with_builtin_backends();
  ASSERT_EQ(reg->size(), 3);
  EXPECT_EQ(reg->names(), (std::vector<std::string>{"cpu_reference", "cuda_fold", "cuda_rowwise"}));
  EXPECT_TRUE(caps_equal(reg->caps(0), kCpuReferenceCaps));
  EXPECT_TRUE(caps_equal(reg->caps(reg->index_of("cuda_fold").value()),
                         cuda::caps_from_traits<cuda::FoldTraits>()));
  EXPECT_TRUE(caps_equal(reg->caps(reg->index_of("cuda_rowwise").value()),
                         cuda::caps_from_traits<cuda::RowwiseTraits>()));
  // The instance reports the same caps as the registry (CPU reference; CUDA ones when built).
  for (int i = 0; i < reg->size(); ++i) {
    auto b = reg->get(i);
    if (b.ok()) {
      EXPECT_TRUE(caps_equal((*b)->caps(), reg->caps(i))) << reg->caps(i).name;
    }
  }
  EXPECT_EQ(reg->entry(reg->index_of("cuda_rowwise").value()).kv_reads,
            KvReadPattern::kOncePerQueryToken);
  EXPECT_EQ(reg->entry(reg->index_of("cuda_fold").value()).kv_reads,
            KvReadPattern::kOncePerRequest);
}

// The guard's verdict over a matrix of shapes equals what the traits constants say, at and just
// past every limit.
template <typename Traits>
void check_matrix(const BackendCaps& caps) {
  auto page_ok = [](int p) {
    return p > 0 && (p & (p - 1)) == 0 &&
           ((Traits::kPageSizeMask >> std::countr_zero(unsigned(p))) & 1);
  };
  const std::vector<int> qs = {0, Traits::kMinQLen, Traits::kMinQLen + 1,
                               8, Traits::kMaxQLen, Traits::kMaxQLen + 1};
  const std::vector<int> hs = {Traits::kMinHeads - 1, Traits::kMinHeads, 16, Traits::kMaxHeads,
                               Traits::kMaxHeads + 1};
  const std::vector<int> pages = {1, 8, 16, 32, 48, 64, 128, 256};
  int checked = 0;
  for (DType kv : {DType::kBF16, DType::kFP8E4M3, DType::kF32}) {
    for (int q : qs) {
      for (int h : hs) {
        for (int p : pages) {
          for (int64_t s : {int64_t{4096}, Traits::kMaxSeqLen, Traits::kMaxSeqLen + 1}) {
            for (int b : {1, Traits::kMaxBatch, Traits::kMaxBatch + 1}) {
              VerifyShape x = uniform_shape(b, h, q, s, kv, p);
              const bool expect = q >= Traits::kMinQLen && q <= Traits::kMaxQLen &&
                                  h >= Traits::kMinHeads && h <= Traits::kMaxHeads &&
                                  b <= Traits::kMaxBatch && s <= Traits::kMaxSeqLen &&
                                  (Traits::kKvDtypes & dtype_bit(kv)) && page_ok(p);
              Status st = can_serve(caps, x);
              ASSERT_EQ(st.ok(), expect)
                  << caps.name << " " << x.to_string() << ": " << st.to_string();
              if (!expect) {
                EXPECT_EQ(st.code(), StatusCode::kUnsupported);
                EXPECT_CONTAINS(st.message(), std::string(caps.name)) << st.message();
              }
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

TEST(Registry, CapabilityMatrixMatchesTraits) {
  auto reg = BackendRegistry::with_builtin_backends();
  check_matrix<cuda::FoldTraits>(reg->caps(reg->index_of("cuda_fold").value()));
  check_matrix<cuda::RowwiseTraits>(reg->caps(reg->index_of("cuda_rowwise").value()));
}

TEST(Registry, GuardReasonsAreActionable) {
  auto reg = BackendRegistry::with_builtin_backends();
  const BackendCaps& fold = reg->caps(reg->index_of("cuda_fold").value());
  const int over = cuda::FoldTraits::kMaxQLen + 1;
  Status st = can_serve(fold, uniform_shape(1, 16, over, 131072));
  EXPECT_CONTAINS(st.message(), "q_len " + std::to_string(over) + " exceeds cuda_fold's max " +
                                    std::to_string(cuda::FoldTraits::kMaxQLen));
  st = can_serve(fold, uniform_shape(1, 16, 8, 131072, DType::kBF16, 128));
  EXPECT_CONTAINS(st.message(), "page_size 128");
  EXPECT_CONTAINS(st.message(), "16|32|64");
}

// ---- Laziness and availability ------------------------------------------------------------------

class FakeBackend final : public Backend {
 public:
  explicit FakeBackend(BackendCaps caps, int* runs) : caps_(caps), runs_(runs) {}
  const BackendCaps& caps() const override { return caps_; }
  Status run(const VerifyArgs&, const VerifyOptions&) override {
    ++*runs_;
    return Status::Ok();
  }

 private:
  BackendCaps caps_;
  int* runs_;
};

TEST(Registry, ListingDoesNotInstantiateAndCreationIsCached) {
  BackendRegistry reg;
  int made = 0, runs = 0;
  BackendCaps caps = kCpuReferenceCaps;
  caps.name = "fake";
  ASSERT_TRUE(reg.add({caps, KvReadPattern::kOncePerRequest,
                       [&]() -> Result<std::unique_ptr<Backend>> {
                         ++made;
                         return std::unique_ptr<Backend>(new FakeBackend(caps, &runs));
                       }})
                  .ok());
  EXPECT_EQ(reg.caps(0).name, "fake");
  EXPECT_EQ(reg.names().size(), 1u);
  EXPECT_EQ(made, 0);
  EXPECT_TRUE(reg.availability(0).ok());
  auto a = reg.get("fake");
  auto b = reg.get(0);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(made, 1);
  auto fresh = reg.create("fake");
  ASSERT_TRUE(fresh.ok());
  EXPECT_NE(fresh->get(), *a);
  EXPECT_EQ(made, 2);
}

TEST(Registry, AddRejectsDuplicatesAndBadCaps) {
  BackendRegistry reg;
  auto factory = []() -> Result<std::unique_ptr<Backend>> { return make_cpu_reference_backend(); };
  ASSERT_TRUE(reg.add({kCpuReferenceCaps, KvReadPattern::kOncePerRequest, factory}).ok());
  EXPECT_EQ(reg.add({kCpuReferenceCaps, KvReadPattern::kOncePerRequest, factory}).code(),
            StatusCode::kInvalidArgument);
  BackendCaps bad = kCpuReferenceCaps;
  bad.name = "bad";
  bad.max_q_len = 0;
  EXPECT_EQ(reg.add({bad, KvReadPattern::kOncePerRequest, factory}).code(),
            StatusCode::kInvalidArgument);
  BackendCaps noname = kCpuReferenceCaps;
  noname.name = "";
  EXPECT_FALSE(reg.add({noname, KvReadPattern::kOncePerRequest, factory}).ok());
  auto missing = reg.index_of("nope");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_CONTAINS(missing.status().message(), "cpu_reference");
}

TEST(Registry, UnavailableBackendIsAReasonNotACrash) {
  BackendRegistry reg;
  BackendCaps caps = cuda::kFoldCaps;
  ASSERT_TRUE(
      reg.add({caps, KvReadPattern::kOncePerRequest,
               []() -> Result<std::unique_ptr<Backend>> { return unsupported("no CUDA device"); }})
          .ok());
  Status st = reg.availability(0);
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  EXPECT_CONTAINS(st.message(), "cuda_fold is unavailable: no CUDA device");
  EXPECT_FALSE(reg.get(0).ok());
  // A throwing factory is a reason too.
  BackendCaps t = kCpuReferenceCaps;
  t.name = "thrower";
  ASSERT_TRUE(
      reg.add({t, KvReadPattern::kOncePerRequest,
               []() -> Result<std::unique_ptr<Backend>> { throw Error(internal_error("boom")); }})
          .ok());
  EXPECT_CONTAINS(reg.availability(1).message(), "thrower is unavailable: boom");
}

// A backend that is created but cannot run here (no device, wrong GPU) says so in prepare().
class NoDeviceBackend final : public Backend {
 public:
  const BackendCaps& caps() const override { return cuda::kRowwiseCaps; }
  Status run(const VerifyArgs&, const VerifyOptions&) override { return Status::Ok(); }
  Status prepare(const VerifyShape& s) override {
    last_probe = s;
    return internal_error("cudaGetDevice: no CUDA-capable device is detected");
  }
  static inline VerifyShape last_probe;
};

TEST(Registry, PrepareFailureMakesABackendUnavailable) {
  BackendRegistry reg;
  ASSERT_TRUE(reg.add({cuda::kRowwiseCaps, KvReadPattern::kOncePerQueryToken,
                       []() -> Result<std::unique_ptr<Backend>> {
                         return std::unique_ptr<Backend>(new NoDeviceBackend());
                       }})
                  .ok());
  Status st = reg.availability(0);
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  EXPECT_CONTAINS(st.message(), "cuda_rowwise is unavailable: cudaGetDevice: no CUDA-capable");
  // The probe is the smallest shape the caps allow, so the guard accepts it.
  EXPECT_TRUE(can_serve(cuda::kRowwiseCaps, NoDeviceBackend::last_probe).ok())
      << NoDeviceBackend::last_probe.to_string();
  EXPECT_FALSE(reg.create("cuda_rowwise").ok());
}

TEST(Registry, CudaBackendsWithoutCudaSaySo) {
  if (built_with_cuda()) GTEST_SKIP() << "CUDA build";
  auto reg = BackendRegistry::with_builtin_backends();
  for (const char* n : {"cuda_fold", "cuda_rowwise"}) {
    Status st = reg->availability(reg->index_of(n).value());
    EXPECT_EQ(st.code(), StatusCode::kUnsupported);
    EXPECT_CONTAINS(st.message(), n);
    EXPECT_CONTAINS(st.message(), "built without CUDA");
  }
  EXPECT_TRUE(reg->availability(0).ok());
}

// ---- Dispatch -----------------------------------------------------------------------------------

// fold and rowwise with their real caps, available (fake kernels), so dispatch logic is tested on
// any machine.
// Select options for a call whose data is on the GPU, without the dispatcher's log lines.
SelectOptions quiet_on_cuda() {
  SelectOptions o;
  o.data_device = Device::kCUDA;
  o.quiet = true;
  return o;
}

struct FakeCudaWorld {
  BackendRegistry reg;
  int fold_runs = 0, rowwise_runs = 0;
  FakeCudaWorld() {
    // The read patterns are the built-in registry's (the cost model depends on them).
    auto builtin = BackendRegistry::with_builtin_backends();
    const KvReadPattern fold_reads =
        builtin->entry(builtin->index_of("cuda_fold").value()).kv_reads;
    const KvReadPattern row_reads =
        builtin->entry(builtin->index_of("cuda_rowwise").value()).kv_reads;
    // ... and so are the kernel descriptions.
    const auto fold_kernel = builtin->entry(builtin->index_of("cuda_fold").value()).kernel;
    const auto row_kernel = builtin->entry(builtin->index_of("cuda_rowwise").value()).kernel;
    throw_if_error(reg.add(
        {kCpuReferenceCaps, KvReadPattern::kOncePerRequest,
         []() -> Result<std::unique_ptr<Backend>> { return make_cpu_reference_backend(); }}));
    throw_if_error(reg.add({cuda::kFoldCaps, fold_reads,
                            [this]() -> Result<std::unique_ptr<Backend>> {
                              return std::unique_ptr<Backend>(
                                  new FakeBackend(cuda::kFoldCaps, &fold_runs));
                            },
                            fold_kernel}));
    throw_if_error(reg.add({cuda::kRowwiseCaps, row_reads,
                            [this]() -> Result<std::unique_ptr<Backend>> {
                              return std::unique_ptr<Backend>(
                                  new FakeBackend(cuda::kRowwiseCaps, &rowwise_runs));
                            },
                            row_kernel}));
  }
};

// A test profile: rowwise has the smaller fixed cost, fold the smaller per-token cost.
constexpr const char* kTestProfile = R"({
  "format": "mlaspec-profile", "version": 1,
  "machines": {"Test GPU": {"models": [
    {"backend": "cuda_fold",    "kv": "bf16", "heads": 16, "fixed_us": 9.0, "us_per_mb": 0.25, "us_per_gflop": 0.5},
    {"backend": "cuda_rowwise", "kv": "bf16", "heads": 16, "fixed_us": 3.0, "us_per_mb": 0.25, "us_per_gflop": 0.5},
    {"backend": "cuda_fold",    "kv": "fp8",  "heads": 16, "fixed_us": 9.0, "us_per_mb": 0.30, "us_per_gflop": 0.5},
    {"backend": "cuda_rowwise", "kv": "fp8",  "heads": 16, "fixed_us": 3.0, "us_per_mb": 0.30, "us_per_gflop": 0.5}
  ]}}})";

CostModel test_model() {
  auto p = parse_profile(kTestProfile, "test");
  throw_if_error(p.status());
  return *p.value().find("Test GPU");
}

// The crossover the profile implies, by hand: per KV token fold reads 576*e bytes, rowwise q times
// that, FLOPs are equal, so S* = (9 - 3) / ((q - 1) * 576 * e / 1e6 * us_per_mb).
double implied_crossover(int q, DType kv, double us_per_mb) {
  const double per_token_mb = 576.0 * dtype_size(kv) / 1e6;
  return (9.0 - 3.0) / ((q - 1) * per_token_mb * us_per_mb);
}

TEST(Dispatch, AutoPicksRowwiseShortFoldLongAtTheProfilesCrossover) {
  FakeCudaWorld w;
  Dispatcher d(w.reg, test_model());
  const SelectOptions cuda = quiet_on_cuda();
  for (DType kv : {DType::kBF16, DType::kFP8E4M3}) {
    for (int q : {2, 4, 8}) {
      const double xs = implied_crossover(q, kv, kv == DType::kBF16 ? 0.25 : 0.30);
      const int64_t below = static_cast<int64_t>(std::floor(xs)) - 1;
      const int64_t above = static_cast<int64_t>(std::ceil(xs)) + 1;
      ASSERT_GT(below, q);
      auto short_ctx = d.select(uniform_shape(1, 16, q, below, kv), cuda);
      auto long_ctx = d.select(uniform_shape(1, 16, q, above, kv), cuda);
      ASSERT_TRUE(short_ctx.ok()) << short_ctx.status().to_string();
      ASSERT_TRUE(long_ctx.ok()) << long_ctx.status().to_string();
      EXPECT_EQ(short_ctx->backend, "cuda_rowwise") << "q=" << q << " S=" << below;
      EXPECT_EQ(long_ctx->backend, "cuda_fold") << "q=" << q << " S=" << above;
      EXPECT_EQ(d.select(uniform_shape(1, 16, q, 4096 * 256, kv), cuda)->backend, "cuda_fold");
      // find_crossover agrees with the hand computation.
      Crossover c = find_crossover(d.cost_model(), "cuda_rowwise",
                                   KvReadPattern::kOncePerQueryToken, "cuda_fold",
                                   KvReadPattern::kOncePerRequest, uniform_shape(1, 16, q, 1, kv));
      ASSERT_TRUE(c.has_model);
      EXPECT_EQ(c.short_winner, "cuda_rowwise");
      EXPECT_EQ(c.long_winner, "cuda_fold");
      EXPECT_NEAR(static_cast<double>(c.seq_len), xs, 1.0);
    }
  }
  // 8 query tokens: rowwise reads the KV 8 times, so fold takes over much earlier than at q=2.
  EXPECT_LT(implied_crossover(8, DType::kBF16, 0.25), implied_crossover(2, DType::kBF16, 0.25) / 5);
}

// The built-in H200 profile through the dispatcher: PERF.md's S sweep (B=1, H=16, q_len=8) is
// rowwise at 4k and fold from 16k, bf16 and fp8 (measured on the H200: rowwise 18.0 vs fold 18.5 us
// at 4k bf16; fold 25.4 vs rowwise 56.3 us at 16k; docs/perf/h200.md).
TEST(Dispatch, BuiltinH200ProfilePicksTheFasterBackendOnTheSSweep) {
  FakeCudaWorld w;
  const CostModel* h200 = builtin_profile().find("NVIDIA H200");
  ASSERT_NE(h200, nullptr);
  Dispatcher d(w.reg, *h200);
  const SelectOptions cuda = quiet_on_cuda();
  for (DType kv : {DType::kBF16, DType::kFP8E4M3}) {
    EXPECT_EQ(d.select(uniform_shape(1, 16, 8, 4096, kv), cuda)->backend, "cuda_rowwise");
    for (int64_t s : {16384, 65536, 262144, 1048576}) {
      auto dec = d.select(uniform_shape(1, 16, 8, s, kv), cuda);
      ASSERT_TRUE(dec.ok()) << dec.status().to_string();
      EXPECT_EQ(dec->backend, "cuda_fold") << "S=" << s;
    }
    // Batches use the linear terms; at 4 x 256k tokens fold is still the pick.
    EXPECT_EQ(d.select(uniform_shape(4, 16, 8, 262144, kv), cuda)->backend, "cuda_fold");
  }
}

TEST(Dispatch, DecisionListsEveryBackendWithEstimates) {
  FakeCudaWorld w;
  Dispatcher d(w.reg, test_model());
  const SelectOptions o = quiet_on_cuda();
  auto dec = d.select(uniform_shape(1, 16, 8, 131072), o);
  ASSERT_TRUE(dec.ok());
  ASSERT_EQ(dec->verdicts.size(), 3u);
  EXPECT_FALSE(dec->verdicts[0].status.ok());  // cpu_reference: data on cuda
  EXPECT_CONTAINS(dec->verdicts[0].status.message(), "the data is on cuda");
  EXPECT_TRUE(dec->verdicts[1].status.ok());
  EXPECT_TRUE(dec->verdicts[2].status.ok());
  ASSERT_TRUE(dec->verdicts[1].est_us && dec->verdicts[2].est_us);
  EXPECT_LT(*dec->verdicts[1].est_us, *dec->verdicts[2].est_us);
  EXPECT_EQ(dec->backend_index, 1);
  EXPECT_FALSE(dec->forced);
  const std::string text = dec->explain();
  EXPECT_CONTAINS(text, "cuda_fold");
  EXPECT_CONTAINS(text, "<- pick");
  EXPECT_CONTAINS(text, "pick: cuda_fold");
}

// A profile without fp8_tile entries prices fp8_tile calls from the fp8 ones, and the decision says
// so: the estimate is marked and each such backend gets a note naming where it came from.
TEST(Dispatch, Fp8TileEstimatesDerivedFromFp8AreMarked) {
  FakeCudaWorld w;
  Dispatcher d(w.reg, test_model());
  auto dec = d.select(uniform_shape(1, 16, 8, 131072, DType::kFP8Tile), quiet_on_cuda());
  ASSERT_TRUE(dec.ok()) << dec.status().to_string();
  for (int i : {1, 2}) {
    ASSERT_TRUE(dec->verdicts[i].est_us.has_value()) << i;
    EXPECT_GT(*dec->verdicts[i].est_us, 0.0);
    EXPECT_CONTAINS(dec->verdicts[i].est_derived, "uncalibrated: no fp8tile entry");
  }
  EXPECT_EQ(dec->est_derived, dec->verdicts[dec->backend_index].est_derived);
  const std::string text = dec->explain();
  EXPECT_CONTAINS(text, " us*");
  EXPECT_CONTAINS(text, "* cuda_fold: uncalibrated: no fp8tile entry; the fp8 estimate");
  EXPECT_CONTAINS(text, "* cuda_rowwise: uncalibrated");
  // bf16 and fp8 calls are priced by their own entries: nothing marked.
  auto fp8 = d.select(uniform_shape(1, 16, 8, 131072, DType::kFP8E4M3), quiet_on_cuda());
  ASSERT_TRUE(fp8.ok());
  EXPECT_TRUE(fp8->est_derived.empty());
  EXPECT_EQ(fp8->explain().find('*'), std::string::npos) << fp8->explain();
}

// Which CUDA kernel serves a shape (traits.h): the narrow one when every row tile holds at most
// 16 rows, the 64-row one otherwise; the decision names it per backend.
TEST(Dispatch, ExplainNamesTheCudaKernel) {
  EXPECT_TRUE(cuda::uses_narrow_kernel(false, 1, 16));   // decode at H = 16: one 16-row tile
  EXPECT_TRUE(cuda::uses_narrow_kernel(false, 2, 8));    // two tokens' rows in one 16-row tile
  EXPECT_FALSE(cuda::uses_narrow_kernel(false, 2, 16));  // 32 rows
  EXPECT_FALSE(cuda::uses_narrow_kernel(false, 1, 32));
  EXPECT_TRUE(cuda::uses_narrow_kernel(true, 8, 16));  // rowwise: each token's 16 rows
  EXPECT_FALSE(cuda::uses_narrow_kernel(true, 1, 17));
  FakeCudaWorld w;
  Dispatcher d(w.reg, test_model());
  const SelectOptions o = quiet_on_cuda();
  auto dec = d.select(uniform_shape(1, 16, 8, 131072), o);
  ASSERT_TRUE(dec.ok()) << dec.status().to_string();
  EXPECT_TRUE(dec->verdicts[0].kernel.empty());  // cpu_reference: not capable for CUDA data
  EXPECT_EQ(dec->verdicts[1].kernel, "64-row kernel");
  EXPECT_EQ(dec->verdicts[2].kernel, "narrow kernel");
  EXPECT_CONTAINS(dec->explain(), "ok (narrow kernel)");
  auto wide = d.select(uniform_shape(1, 128, 1, 131072), o);
  ASSERT_TRUE(wide.ok()) << wide.status().to_string();
  EXPECT_EQ(wide->verdicts[1].kernel, "64-row kernel");
  EXPECT_EQ(wide->verdicts[2].kernel, "64-row kernel");
}

TEST(Dispatch, ExplicitButIncapableIsAnErrorWithTheReason) {
  FakeCudaWorld w;
  Dispatcher d(w.reg, test_model(), DispatchPolicy::parse("cuda_rowwise"));
  const int over = cuda::RowwiseTraits::kMaxQLen + 1;
  auto dec = d.select(uniform_shape(1, 16, over, 131072));
  ASSERT_FALSE(dec.ok());
  EXPECT_EQ(dec.status().code(), StatusCode::kUnsupported);
  EXPECT_CONTAINS(dec.status().message(), "backend cuda_rowwise was requested");
  EXPECT_CONTAINS(dec.status().message(),
                  "q_len " + std::to_string(over) + " exceeds cuda_rowwise's max");
  // The same backend, a shape it serves: honoured even where auto would pick fold.
  auto ok = d.select(uniform_shape(1, 16, 8, 1 << 20));
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_EQ(ok->backend, "cuda_rowwise");
  EXPECT_TRUE(ok->forced);
  // Unknown name.
  Dispatcher bad(w.reg, test_model(), DispatchPolicy::parse("cuda_folded"));
  EXPECT_EQ(bad.validate_policy().code(), StatusCode::kNotFound);
  EXPECT_EQ(bad.select(uniform_shape(1, 16, 8, 4096)).status().code(), StatusCode::kNotFound);
  // set_policy switches the policy for later calls; an unknown name leaves the old one.
  EXPECT_EQ(d.set_policy(DispatchPolicy::parse("cuda_folded")).code(), StatusCode::kNotFound);
  EXPECT_EQ(d.policy().to_string(), "cuda_rowwise");
  ASSERT_TRUE(d.set_policy(DispatchPolicy::parse("cuda_fold")).ok());
  auto fold = d.select(uniform_shape(1, 16, 8, 1 << 20));
  ASSERT_TRUE(fold.ok()) << fold.status().to_string();
  EXPECT_EQ(fold->backend, "cuda_fold");
  EXPECT_TRUE(fold->forced);
  ASSERT_TRUE(d.set_policy(DispatchPolicy::parse("auto")).ok());
  EXPECT_TRUE(d.policy().is_auto());
  auto picked = d.select(uniform_shape(1, 16, 8, 1 << 20));
  ASSERT_TRUE(picked.ok());
  EXPECT_FALSE(picked->forced);
}

TEST(Dispatch, ExplicitButUnavailableIsAnError) {
  if (built_with_cuda()) GTEST_SKIP() << "CUDA build";
  auto reg = BackendRegistry::with_builtin_backends();
  Dispatcher d(*reg, test_model(), DispatchPolicy::parse("cuda_fold"));
  auto dec = d.select(uniform_shape(1, 16, 8, 131072));
  ASSERT_FALSE(dec.ok());
  EXPECT_CONTAINS(dec.status().message(), "built without CUDA");
}

TEST(Dispatch, NoSilentFallbackToTheCpu) {
  // CUDA data, a q_len no CUDA backend serves: the CPU reference could compute it, but auto must
  // not quietly move the call there.
  FakeCudaWorld w;
  Dispatcher d(w.reg, test_model());
  const int over = cuda::FoldTraits::kMaxQLen + 1;
  auto dec = d.select(uniform_shape(1, 16, over, 131072));  // device defaults to CUDA (available)
  ASSERT_FALSE(dec.ok());
  EXPECT_EQ(dec.status().code(), StatusCode::kUnsupported);
  EXPECT_CONTAINS(dec.status().message(), "no attention backend can serve");
  EXPECT_CONTAINS(dec.status().message(), "exceeds cuda_fold's max");
  EXPECT_CONTAINS(dec.status().message(), "exceeds cuda_rowwise's max");
  EXPECT_CONTAINS(dec.status().message(), "cpu_reference runs on cpu");
}

// fp8 tensor-core math is opt-in: auto serves it with a CUDA backend whose caps offer it, priced
// from that backend's exact fp8 entries (this model has no fp8-math entries: the estimate is
// marked derived, and smaller where tensor-bound), and a backend without the mode refuses it by
// name, never computing exact math in its place.
TEST(Dispatch, Fp8MathIsServedWhereOfferedAndPricedFromTheFp8Entries) {
  FakeCudaWorld w;
  Dispatcher d(w.reg, test_model());
  VerifyShape s = uniform_shape(1, 16, 8, 131072);
  s.kv_dtype = DType::kFP8E4M3;
  auto exact = d.select(s, quiet_on_cuda());
  ASSERT_TRUE(exact.ok());
  s.fp8_math = true;
  auto dec = d.select(s, quiet_on_cuda());
  ASSERT_TRUE(dec.ok()) << dec.status().to_string();
  EXPECT_NE(dec->backend, "cpu_reference");
  for (int i : {1, 2}) {
    ASSERT_TRUE(dec->verdicts[i].est_us.has_value()) << i;
    ASSERT_TRUE(exact->verdicts[i].est_us.has_value()) << i;
    EXPECT_GT(*dec->verdicts[i].est_us, 0.0);
    EXPECT_LE(*dec->verdicts[i].est_us, *exact->verdicts[i].est_us);
    EXPECT_CONTAINS(dec->verdicts[i].est_derived, "uncalibrated: fp8 math from the exact fp8");
  }
  EXPECT_CONTAINS(dec->explain(), "e4m3 MMAs");
  // A world whose CUDA backends lack the mode: refused with every backend's reason.
  BackendRegistry lacking;
  for (const BackendCaps* c : {&cuda::kFoldCaps, &cuda::kRowwiseCaps}) {
    BackendCaps caps = *c;
    caps.fp8_math = false;
    throw_if_error(lacking.add({caps, KvReadPattern::kOncePerRequest, [caps]() {
                                  return Result<std::unique_ptr<Backend>>(
                                      std::unique_ptr<Backend>(new FakeBackend(caps, nullptr)));
                                }}));
  }
  Dispatcher none(lacking, test_model());
  auto refused = none.select(s, quiet_on_cuda());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnsupported);
  EXPECT_CONTAINS(refused.status().message(),
                  "no attention backend can serve B=1,H=16,q=8,S=131072,"
                  "kv=fp8,page=64,fp8math");
  EXPECT_CONTAINS(refused.status().message(), "cuda_fold has no fp8-math mode");
  EXPECT_CONTAINS(refused.status().message(), "cuda_rowwise has no fp8-math mode");
  Dispatcher forced(lacking, test_model(), DispatchPolicy::parse("cuda_fold"));
  EXPECT_CONTAINS(forced.select(s, quiet_on_cuda()).status().message(),
                  "cuda_fold has no fp8-math mode");
}

// Every built-in backend declares a deterministic mode, so the guard's refusal is reached only
// through a backend whose caps say no: the guard must refuse it by name, a forced dispatch must
// fail with that reason, and auto must pass the call to a backend that has the mode, never run it
// on one that would silently compute in the default mode.
TEST(Dispatch, DeterministicIsRefusedByABackendWithoutIt) {
  FakeCudaWorld w;
  BackendCaps no_det = cuda::kFoldCaps;
  no_det.name = "cuda_nodet";
  no_det.deterministic = false;
  int nodet_runs = 0;
  ASSERT_TRUE(w.reg
                  .add({no_det, KvReadPattern::kOncePerRequest,
                        [&]() -> Result<std::unique_ptr<Backend>> {
                          return std::unique_ptr<Backend>(new FakeBackend(no_det, &nodet_runs));
                        }})
                  .ok());
  VerifyShape s = uniform_shape(1, 16, 8, 131072);
  ASSERT_TRUE(can_serve(no_det, s).ok());
  s.deterministic = true;
  const Status refused = can_serve(no_det, s);
  EXPECT_EQ(refused.code(), StatusCode::kUnsupported);
  EXPECT_EQ(refused.message(), "cuda_nodet has no deterministic mode");

  Dispatcher forced(w.reg, test_model(), DispatchPolicy::parse("cuda_nodet"));
  ASSERT_TRUE(forced.select(uniform_shape(1, 16, 8, 131072)).ok());
  auto dec = forced.select(s);
  ASSERT_FALSE(dec.ok());
  EXPECT_EQ(dec.status().code(), StatusCode::kUnsupported);
  EXPECT_CONTAINS(dec.status().message(), "backend cuda_nodet was requested");
  EXPECT_CONTAINS(dec.status().message(), "cuda_nodet has no deterministic mode");

  Dispatcher autod(w.reg, test_model());
  auto pick = autod.select(s);
  ASSERT_TRUE(pick.ok()) << pick.status().to_string();
  EXPECT_NE(pick->backend, "cuda_nodet");
  const BackendVerdict& v =
      pick->verdicts[static_cast<size_t>(w.reg.index_of("cuda_nodet").value())];
  EXPECT_FALSE(v.capable);
  EXPECT_CONTAINS(v.status.message(), "cuda_nodet has no deterministic mode");
  EXPECT_EQ(nodet_runs, 0);
}

TEST(Dispatch, WithoutCudaAutoUsesTheCpuReferenceAndSaysSoOnce) {
  if (built_with_cuda()) GTEST_SKIP() << "CUDA build";
  auto reg = BackendRegistry::with_builtin_backends();
  auto model = resolve_cost_model({"/nonexistent/profile.json", "", false});
  ASSERT_TRUE(model.ok());
  Dispatcher d(*reg, model->model);
  const LogLevel saved = log_level();
  set_log_level(LogLevel::kInfo);
  ::testing::internal::CaptureStderr();
  auto a = d.select(uniform_shape(1, 16, 8, 4096));
  auto b = d.select(uniform_shape(2, 16, 8, 8192));
  const std::string err = ::testing::internal::GetCapturedStderr();
  set_log_level(saved);
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(a->backend, "cpu_reference");
  EXPECT_EQ(b->backend, "cpu_reference");
  EXPECT_CONTAINS(a->reason, "only capable");
  size_t n = 0;
  for (size_t p = err.find("no CUDA backend is available"); p != std::string::npos;
       p = err.find("no CUDA backend is available", p + 1))
    ++n;
  EXPECT_EQ(n, 1u) << err;
  EXPECT_CONTAINS(err, "built without CUDA");
}

TEST(Dispatch, AssumeAvailableExplainsWhatAGpuMachineWouldPick) {
  if (built_with_cuda()) GTEST_SKIP() << "CUDA build";
  auto reg = BackendRegistry::with_builtin_backends();
  Dispatcher d(*reg, test_model());
  SelectOptions o;
  o.assume_available = true;
  o.quiet = true;
  auto dec = d.select(uniform_shape(1, 16, 8, 131072), o);
  ASSERT_TRUE(dec.ok()) << dec.status().to_string();
  EXPECT_EQ(dec->backend, "cuda_fold");
  EXPECT_CONTAINS(dec->verdicts[1].status.message(), "built without CUDA");
  EXPECT_TRUE(dec->verdicts[1].capable);
}

TEST(Dispatch, FirstDecisionPerBucketIsLoggedOnce) {
  FakeCudaWorld w;
  Dispatcher d(w.reg, test_model());
  SelectOptions o;
  o.data_device = Device::kCUDA;
  const LogLevel saved = log_level();
  set_log_level(LogLevel::kInfo);
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(d.select(uniform_shape(1, 16, 8, 131072), o).ok());
  ASSERT_TRUE(d.select(uniform_shape(1, 16, 8, 131072 + 5000), o).ok());  // same log2 bucket
  ASSERT_TRUE(d.select(uniform_shape(1, 16, 8, 300000), o).ok());         // next bucket
  const std::string err = ::testing::internal::GetCapturedStderr();
  set_log_level(saved);
  size_t n = 0;
  for (size_t p = err.find("attention dispatch:"); p != std::string::npos;
       p = err.find("attention dispatch:", p + 1))
    ++n;
  EXPECT_EQ(n, 2u) << err;
  EXPECT_CONTAINS(err, "B=1,H=16,q=8,S=131072,kv=bf16");
  EXPECT_CONTAINS(err, "-> cuda_fold");
}

TEST(Dispatch, RunCountsCallsRowsAndKvBytes) {
  auto reg = BackendRegistry::with_builtin_backends();
  Dispatcher d(*reg, test_model());
  testing::ProblemSpec spec;
  spec.batch = 2;
  spec.q_len = 3;
  spec.num_heads = 4;
  spec.page_size = 16;
  spec.seq_lens = {40, 70};
  testing::Problem p = testing::make_problem(spec);
  std::vector<uint16_t> out(p.out_elems());
  std::vector<float> lse(p.lse_elems());
  VerifyArgs args = p.host_args(TensorView(out.data(), DType::kBF16, {2, 3, 4, kHeadDimV}),
                                TensorView(lse.data(), DType::kF32, {2, 3, 4}));
  for (int i = 0; i < 2; ++i) {
    auto dec = d.run_explained(args, {});
    ASSERT_TRUE(dec.ok()) << dec.status().to_string();
    EXPECT_EQ(dec->backend, "cpu_reference");
  }
  const BackendCounters c = d.counters(0);
  EXPECT_EQ(c.calls, 2u);
  EXPECT_EQ(c.rows, 2u * 2 * 3 * 4);
  EXPECT_EQ(c.kv_bytes, 2u * (40 + 70) * 576 * 2);
  EXPECT_EQ(d.counters(1).calls, 0u);
  // A graph replay counted from outside: rowwise reads the KV once per query token.
  FakeCudaWorld w;
  Dispatcher g(w.reg, test_model());
  g.record_call(2, uniform_shape(1, 16, 8, 1000));
  EXPECT_EQ(g.counters(2).kv_bytes, 8u * 1000 * 576 * 2);
  EXPECT_EQ(g.counters(2).rows, 128u);
  EXPECT_CONTAINS(g.counters_summary(), "cuda_rowwise: 1 calls, 128 rows");
  g.reset_counters();
  EXPECT_EQ(g.counters(2).calls, 0u);
}

TEST(Dispatch, InvalidArgsAreRejectedBeforeDispatch) {
  auto reg = BackendRegistry::with_builtin_backends();
  Dispatcher d(*reg, test_model());
  VerifyArgs empty;
  Status st = d.run(empty, {});
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(d.counters(0).calls, 0u);
}

}  // namespace
}  // namespace mlaspec::attn
