// token_logprobs: the log_softmax of a logits row, the chosen token's value and the top k.
#include "mlaspec/spec/logprobs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace mlaspec::spec {
namespace {

TEST(TokenLogprobs, LogSoftmaxAndTopK) {
  const float inf = std::numeric_limits<float>::infinity();
  // exp: 1, e, e, e^2, 0 (masked): sum 1 + 2e + e^2 = (1 + e)^2.
  const std::vector<float> row = {0.0f, 1.0f, 1.0f, 2.0f, -inf};
  const double log_z = 2.0 * std::log1p(std::exp(1.0));
  const TokenLogprobs lp = token_logprobs(row, 1, 3);
  EXPECT_EQ(lp.chosen.token, 1);
  EXPECT_NEAR(lp.chosen.logprob, 1.0 - log_z, 1e-6);
  ASSERT_EQ(lp.top.size(), 3u);
  // Most likely first; the tie between 1 and 2 goes to the lower id.
  EXPECT_EQ(lp.top[0].token, 3);
  EXPECT_EQ(lp.top[1].token, 1);
  EXPECT_EQ(lp.top[2].token, 2);
  EXPECT_NEAR(lp.top[0].logprob, 2.0 - log_z, 1e-6);
  EXPECT_EQ(lp.top[1].logprob, lp.chosen.logprob);
  // A masked token has probability 0.
  EXPECT_EQ(token_logprobs(row, 4, 0).chosen.logprob, -inf);
  EXPECT_TRUE(token_logprobs(row, 4, 0).top.empty());
  // k beyond the row: every token, the masked one last.
  const TokenLogprobs all = token_logprobs(row, 0, kMaxTopLogprobs);
  ASSERT_EQ(all.top.size(), row.size());
  EXPECT_EQ(all.top.back().token, 4);
  double total = 0.0;
  for (const TokenLogprob& t : all.top) total += std::exp(static_cast<double>(t.logprob));
  EXPECT_NEAR(total, 1.0, 1e-6);
}

TEST(TokenLogprobs, LargeLogitsDoNotOverflow) {
  const std::vector<float> row = {1000.0f, 1000.0f};
  const TokenLogprobs lp = token_logprobs(row, 0, 1);
  EXPECT_NEAR(lp.chosen.logprob, -std::log(2.0), 1e-6);
  EXPECT_EQ(lp.top[0].token, 0);
}

}  // namespace
}  // namespace mlaspec::spec
