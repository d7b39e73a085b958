// The command line's shape syntax: one spelling per key, every other spelling refused by name.
#include "tools/shape_spec.h"

#include <gtest/gtest.h>

#include "common/test_helpers.h"

namespace mlaspec::tools {
namespace {

TEST(ShapeSpec, ParsesTheDocumentedSyntax) {
  std::optional<Device> dev;
  auto s = parse_shape_spec("B=1,H=16,q=8,S=131072,kv=fp8", &dev);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->batch, 1);
  EXPECT_EQ(s->num_heads, 16);
  EXPECT_EQ(s->q_len, 8);
  EXPECT_EQ(s->max_seq_len, 131072);
  EXPECT_EQ(s->total_kv, 131072);
  EXPECT_EQ(s->kv_dtype, DType::kFP8E4M3);
  EXPECT_EQ(s->page_size, 64);
  EXPECT_FALSE(s->deterministic);
  EXPECT_FALSE(dev.has_value());
  s = parse_shape_spec("B=4, H=128, q=2, S=128k, page=16, det, dev=cpu", &dev);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->max_seq_len, 131072);
  EXPECT_EQ(s->total_kv, 4 * 131072);
  EXPECT_EQ(s->page_size, 16);
  EXPECT_TRUE(s->deterministic);
  EXPECT_EQ(dev, Device::kCPU);
  EXPECT_EQ(parse_shape_spec("S=1m")->max_seq_len, 1 << 20);
  EXPECT_FALSE(parse_shape_spec("S=1m")->fp8_math);
  s = parse_shape_spec("S=4k,kv=fp8,fp8math");
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_TRUE(s->fp8_math);
  EXPECT_EQ(s->to_string(), "B=1,H=16,q=1,S=4096,kv=fp8,page=64,fp8math");
  // What VerifyShape::to_string writes reads back as the same shape.
  s = parse_shape_spec("B=2,H=8,q=4,S=4096,kv=bf16,page=32,det");
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(parse_shape_spec(s->to_string())->to_string(), s->to_string());
}

TEST(ShapeSpec, RefusesEverythingElseByName) {
  auto err = [](const char* spec) { return parse_shape_spec(spec).status(); };
  EXPECT_CONTAINS(err("B=1,X=3,S=10").message(), "unknown key \"X\"");
  EXPECT_CONTAINS(err("B=1,X=3,S=10").message(), "B, H, q, S, kv, page, det, fp8math, dev");
  // Keys are case-sensitive and have no aliases.
  EXPECT_CONTAINS(err("b=1,S=10").message(), "unknown key \"b\" (keys are case-sensitive");
  EXPECT_CONTAINS(err("h=8,S=10").message(), "unknown key \"h\"");
  EXPECT_CONTAINS(err("s=10").message(), "unknown key \"s\"");
  EXPECT_CONTAINS(err("seq_len=10").message(), "unknown key \"seq_len\"");
  EXPECT_CONTAINS(err("q_len=2,S=10").message(), "unknown key \"q_len\"");
  EXPECT_CONTAINS(err("S=10,DET").message(), "unknown key \"DET\"");
  // Flags take no value.
  EXPECT_CONTAINS(err("S=10,det=1").message(), "det is a flag and takes no value");
  EXPECT_CONTAINS(err("S=10,det=0").message(), "det is a flag and takes no value");
  EXPECT_CONTAINS(err("S=10,fp8math=true").message(), "fp8math is a flag and takes no value");
  // An empty spec is an error, not a default.
  EXPECT_CONTAINS(err("").message(), "empty; expected keys B, H, q, S");
  EXPECT_CONTAINS(err("  ").message(), "empty");
  EXPECT_CONTAINS(err("H=abc,S=10").message(), "H=abc: expected a positive integer");
  EXPECT_CONTAINS(err("q=0,S=10").message(), "q=0");
  EXPECT_CONTAINS(err("kv=f32,S=10").message(), "expected bf16, fp8 or fp8tile");
  EXPECT_CONTAINS(err("B=1,H=16").message(), "missing S=");
  EXPECT_CONTAINS(err("q=8,S=4").message(), "shorter than q=8");
  EXPECT_CONTAINS(err("S=10,S=20").message(), "S given twice");
  EXPECT_CONTAINS(err("S=10,dev=tpu").message(), "expected cuda or cpu");
  EXPECT_CONTAINS(err("S=10,dev=gpu").message(), "expected cuda or cpu");
  EXPECT_CONTAINS(err("S=10,,q=1").message(), "empty item");
  EXPECT_CONTAINS(err("S=10k5").message(), "S=10k5");
  EXPECT_CONTAINS(err("S=1e12").message(), "S=1e12: expected a positive integer up to 2^40");
  EXPECT_CONTAINS(err("S=2000000000000").message(), "S=2000000000000");
  EXPECT_CONTAINS(err("B=2000000000,S=10").message(), "B=2000000000 is out of range");
  EXPECT_EQ(err("B=1,H=16").code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace mlaspec::tools
