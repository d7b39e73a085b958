// Small helpers shared by the unit tests (not by the benchmarks: this header uses GoogleTest).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "mlaspec/attention/verify.h"

// EXPECT that `needle` occurs in the string `hay`, printing both when it does not.
#define EXPECT_CONTAINS(hay, needle)                          \
  EXPECT_NE(std::string(hay).find(needle), std::string::npos) \
      << "\"" << (hay) << "\" does not contain \"" << (needle) << "\""

namespace mlaspec::testing {

// A call shape of `b` requests of `s` tokens each (total_kv = b * s).
inline attn::VerifyShape uniform_shape(int b, int h, int q, int64_t s, DType kv = DType::kBF16,
                                       int page = 64) {
  attn::VerifyShape x;
  x.batch = b;
  x.num_heads = h;
  x.q_len = q;
  x.max_seq_len = s;
  x.total_kv = s * b;
  x.kv_dtype = kv;
  x.page_size = page;
  return x;
}

}  // namespace mlaspec::testing
