// The draft pool's dtype rule: the full matrix of target dtype x what the draft backend reads x
// override.
#include <gtest/gtest.h>

#include <optional>

#include "mlaspec/core/log.h"
#include "mlaspec/spec/draft_pool_rule.h"

namespace mlaspec::spec {
namespace {

constexpr DType BF = DType::kBF16, FP8 = DType::kFP8E4M3, F32 = DType::kF32;
constexpr uint32_t kNone = 0, kBf = attn::dtype_bit(BF), kFp8 = attn::dtype_bit(FP8),
                   kBoth = kBf | kFp8;

attn::BackendCaps caps_reading(uint32_t mask) {
  attn::BackendCaps c;
  c.name = "draft_attn";
  c.kv_dtypes = mask;
  return c;
}

struct RuleCase {
  DType target;
  uint32_t caps;
  std::optional<DType> override_dtype;
  std::optional<DType> want;  // nullopt: error
  StatusCode code = StatusCode::kOk;
  const char* reason_part = "";
};

// Every combination of target {bf16, fp8} x backend reads {none, bf16, fp8, both} x override
// {none, bf16, fp8, f32}, written out so the table, not the implementation, is the spec.
const RuleCase kMatrix[] = {
    // target bf16
    {BF, kNone, std::nullopt, std::nullopt, StatusCode::kUnsupported, "reads no KV dtype"},
    {BF, kBf, std::nullopt, BF, StatusCode::kOk, "target KV dtype bf16"},
    {BF, kFp8, std::nullopt, std::nullopt, StatusCode::kUnsupported, "neither the target"},
    {BF, kBoth, std::nullopt, BF, StatusCode::kOk, "target KV dtype bf16"},
    {BF, kNone, BF, std::nullopt, StatusCode::kUnsupported, "override bf16 cannot be read"},
    {BF, kBf, BF, BF, StatusCode::kOk, "explicit override bf16"},
    {BF, kFp8, BF, std::nullopt, StatusCode::kUnsupported, "override bf16 cannot be read"},
    {BF, kBoth, BF, BF, StatusCode::kOk, "explicit override bf16"},
    {BF, kNone, FP8, std::nullopt, StatusCode::kUnsupported, "override fp8_e4m3 cannot be read"},
    {BF, kBf, FP8, std::nullopt, StatusCode::kUnsupported, "which reads bf16"},
    {BF, kFp8, FP8, FP8, StatusCode::kOk, "explicit override fp8_e4m3"},
    {BF, kBoth, FP8, FP8, StatusCode::kOk, "explicit override fp8_e4m3"},
    {BF, kNone, F32, std::nullopt, StatusCode::kInvalidArgument, "override f32 is not a KV dtype"},
    {BF, kBf, F32, std::nullopt, StatusCode::kInvalidArgument, "override f32 is not a KV dtype"},
    {BF, kFp8, F32, std::nullopt, StatusCode::kInvalidArgument, "override f32 is not a KV dtype"},
    {BF, kBoth, F32, std::nullopt, StatusCode::kInvalidArgument, "override f32 is not a KV dtype"},
    // target fp8
    {FP8, kNone, std::nullopt, std::nullopt, StatusCode::kUnsupported, "reads no KV dtype"},
    {FP8, kBf, std::nullopt, BF, StatusCode::kOk, "cannot read the target KV dtype fp8_e4m3"},
    {FP8, kFp8, std::nullopt, FP8, StatusCode::kOk, "target KV dtype fp8_e4m3"},
    {FP8, kBoth, std::nullopt, FP8, StatusCode::kOk, "target KV dtype fp8_e4m3"},
    {FP8, kNone, BF, std::nullopt, StatusCode::kUnsupported, "override bf16 cannot be read"},
    {FP8, kBf, BF, BF, StatusCode::kOk, "explicit override bf16"},
    {FP8, kFp8, BF, std::nullopt, StatusCode::kUnsupported, "which reads fp8_e4m3"},
    {FP8, kBoth, BF, BF, StatusCode::kOk, "explicit override bf16"},
    {FP8, kNone, FP8, std::nullopt, StatusCode::kUnsupported, "override fp8_e4m3 cannot be read"},
    {FP8, kBf, FP8, std::nullopt, StatusCode::kUnsupported, "override fp8_e4m3 cannot be read"},
    {FP8, kFp8, FP8, FP8, StatusCode::kOk, "explicit override fp8_e4m3"},
    {FP8, kBoth, FP8, FP8, StatusCode::kOk, "explicit override fp8_e4m3"},
    {FP8, kNone, F32, std::nullopt, StatusCode::kInvalidArgument, "not a KV dtype"},
    {FP8, kBf, F32, std::nullopt, StatusCode::kInvalidArgument, "not a KV dtype"},
    {FP8, kFp8, F32, std::nullopt, StatusCode::kInvalidArgument, "not a KV dtype"},
    {FP8, kBoth, F32, std::nullopt, StatusCode::kInvalidArgument, "not a KV dtype"},
};

TEST(DraftKvDtypeRule, FullMatrix) {
  set_log_level(LogLevel::kInfo);
  int n = 0;
  for (const RuleCase& c : kMatrix) {
    SCOPED_TRACE("target " + std::string(dtype_name(c.target)) + " caps " + std::to_string(c.caps) +
                 " override " +
                 (c.override_dtype ? std::string(dtype_name(*c.override_dtype)) : "none"));
    ::testing::internal::CaptureStderr();
    Result<DTypeDecision> d =
        choose_draft_kv_dtype(c.target, caps_reading(c.caps), c.override_dtype);
    const std::string log = ::testing::internal::GetCapturedStderr();
    if (c.want) {
      ASSERT_TRUE(d.ok()) << d.status().to_string();
      EXPECT_EQ(d->dtype, *c.want);
      EXPECT_NE(d->reason.find(c.reason_part), std::string::npos) << d->reason;
      EXPECT_NE(d->reason.find("draft_attn"), std::string::npos) << d->reason;
      // The choice is logged with its reason.
      EXPECT_NE(log.find(d->reason), std::string::npos) << log;
      EXPECT_NE(log.find("draft KV pool dtype " + std::string(dtype_name(*c.want))),
                std::string::npos)
          << log;
    } else {
      ASSERT_FALSE(d.ok());
      EXPECT_EQ(d.status().code(), c.code) << d.status().to_string();
      EXPECT_NE(d.status().message().find(c.reason_part), std::string::npos)
          << d.status().message();
    }
    ++n;
  }
  EXPECT_EQ(n, 32);
}

TEST(DraftKvDtypeRule, InvalidTargetAndComputeDtypes) {
  Result<DTypeDecision> d = choose_draft_kv_dtype(F32, caps_reading(kBoth));
  EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(d.status().message().find("target KV dtype f32"), std::string::npos);
  d = choose_draft_kv_dtype(FP8, caps_reading(kBf), std::nullopt, DType::kI32);
  EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(d.status().message().find("compute dtype i32"), std::string::npos);
  // A drafter computing in fp8 (hypothetical) falls back to fp8 when the target's bf16 is
  // unreadable: the fallback is the compute dtype, not a hard-coded bf16.
  d = choose_draft_kv_dtype(BF, caps_reading(kFp8), std::nullopt, FP8);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->dtype, FP8);
}

// The per-tile-scaled target pool: the drafter's attention reads bf16 only, so its own pool is
// bf16 (the one-dtype rule), and says why.
TEST(DraftKvDtypeRule, Fp8TileTargetGivesABf16DraftPool) {
  Result<DTypeDecision> d = choose_draft_kv_dtype(DType::kFP8Tile, caps_reading(kBf));
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  EXPECT_EQ(d->dtype, BF);
  EXPECT_NE(d->reason.find("cannot read the target KV dtype fp8_tile"), std::string::npos)
      << d->reason;
}

}  // namespace
}  // namespace mlaspec::spec
