// n-gram drafter: the rule on hand cases, the incremental index against a brute-force rescan on
// random sequences (small alphabets and planted repeats, so long and overlapping matches occur),
// the Drafter interface, and a long history that must stay fast.
#include "mlaspec/spec/ngram_drafter.h"

#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <vector>

namespace mlaspec::spec {
namespace {

// The rule, by rescanning the whole history.
std::vector<int32_t> brute_force(const std::vector<int32_t>& h, const NgramConfig& c, int k) {
  const int64_t len = static_cast<int64_t>(h.size());
  if (k <= 0) return {};
  for (int n = c.max_ngram; n >= c.min_ngram; --n) {
    for (int64_t e = len - 1; e >= n; --e) {
      bool match = true;
      for (int i = 1; i <= n && match; ++i) match = h[e - i] == h[len - i];
      if (!match) continue;
      std::vector<int32_t> seq = h;  // copy h[e ..] on, reading what is appended as we go
      for (int64_t j = 0; j < k && (c.repeat_cycle || e + j < len); ++j) seq.push_back(seq[e + j]);
      return {seq.begin() + len, seq.end()};
    }
  }
  return {};
}

NgramIndex make(const std::vector<int32_t>& h, NgramConfig c = {}) {
  NgramIndex idx = NgramIndex::create(c).value();
  EXPECT_TRUE(idx.append(h).ok());
  return idx;
}

TEST(NgramIndex, HandCases) {
  // a b c d a b c -> suffix "a b c" ended at 3: propose "d a b c" (cut at the history end).
  EXPECT_EQ(make({1, 2, 3, 4, 1, 2, 3}).propose(8), (std::vector<int32_t>{4, 1, 2, 3}));
  EXPECT_EQ(make({1, 2, 3, 4, 1, 2, 3}).propose(2), (std::vector<int32_t>{4, 1}));
  // Overlapping occurrence: a b a b a -> "a b a" ended at 3 -> "b a".
  EXPECT_EQ(make({1, 2, 1, 2, 1}).propose(5), (std::vector<int32_t>{2, 1}));
  // Longest n wins over a more recent shorter match: "9 1 2" matched at n = 3 (ends at 3), though
  // "2" alone last occurred at 6.
  NgramIndex idx = make({9, 1, 2, 5, 7, 1, 2, 6, 9, 1, 2});
  EXPECT_EQ(idx.find().n, 3);
  EXPECT_EQ(idx.find().end, 3);
  EXPECT_EQ(idx.propose(3), (std::vector<int32_t>{5, 7, 1}));
  // Most recent occurrence among equals: "1 2" ends at 2 and 6 -> 6.
  EXPECT_EQ(make({1, 2, 3, 5, 1, 2, 4, 0, 1, 2}, {1, 2}).propose(2), (std::vector<int32_t>{4, 0}));
  // No match, empty history, one token, num_draft 0.
  EXPECT_TRUE(make({1, 2, 3}).propose(4).empty());
  EXPECT_TRUE(make({}).propose(4).empty());
  EXPECT_TRUE(make({7}).propose(4).empty());
  EXPECT_EQ(make({7, 7}).propose(4), (std::vector<int32_t>{7}));
  EXPECT_TRUE(make({1, 2, 1, 2}).propose(0).empty());
  // repeat_cycle continues a loop past the end of the history: a b c a b c | a b c a b ...
  EXPECT_EQ(make({1, 2, 3, 1, 2, 3}, {1, 3, true}).propose(7),
            (std::vector<int32_t>{1, 2, 3, 1, 2, 3, 1}));
  EXPECT_EQ(make({1, 2, 3, 1, 2, 3}).propose(7), (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(make({7, 7}, {1, 3, true}).propose(4), (std::vector<int32_t>{7, 7, 7, 7}));
  // min_ngram 2 ignores single-token matches.
  EXPECT_TRUE(make({1, 2, 3, 1}, {2, 3}).propose(4).empty());
  EXPECT_EQ(make({1, 2, 3, 1}, {1, 3}).propose(4), (std::vector<int32_t>{2, 3, 1}));
}

TEST(NgramIndex, ConfigErrors) {
  EXPECT_EQ(NgramIndex::create({0, 3}).status().message(), "min_ngram 0 is below 1");
  EXPECT_EQ(NgramIndex::create({3, 2}).status().message(), "max_ngram 2 is below min_ngram 3");
  EXPECT_EQ(NgramIndex::create({1, 65}).status().message(), "max_ngram 65 exceeds 64");
  EXPECT_EQ(NgramDrafter::create({2, 1}).status().code(), StatusCode::kInvalidArgument);
}

TEST(NgramIndex, IncrementalMatchesBruteForceOnRandomSequences) {
  std::mt19937 rng(17);
  const NgramConfig configs[] = {{1, 3}, {1, 1},       {2, 4},      {3, 3},
                                 {1, 8}, {1, 3, true}, {2, 5, true}};
  for (int trial = 0; trial < 70; ++trial) {
    const NgramConfig c = configs[trial % 7];
    const int alphabet = 2 + trial % 7;
    std::uniform_int_distribution<int> tok(0, alphabet - 1);
    NgramIndex idx = NgramIndex::create(c).value();
    std::vector<int32_t> h;
    while (h.size() < 600) {
      // Mostly random tokens, sometimes a copy of an earlier stretch (as in code or quotes).
      std::vector<int32_t> chunk;
      if (h.size() > 10 && rng() % 3 == 0) {
        const size_t from = rng() % h.size();
        const size_t n = 1 + rng() % 12;
        for (size_t i = from; i < std::min(h.size(), from + n); ++i) chunk.push_back(h[i]);
      } else {
        for (int i = 1 + rng() % 3; i > 0; --i) chunk.push_back(tok(rng));
      }
      ASSERT_TRUE(idx.append(chunk).ok());
      h.insert(h.end(), chunk.begin(), chunk.end());
      for (int k : {0, 1, 3, 8}) {
        ASSERT_EQ(idx.propose(k), brute_force(h, c, k))
            << "trial " << trial << " length " << h.size() << " k " << k;
      }
    }
  }
}

TEST(NgramIndex, LargeAndNegativeTokenIdsStayExact) {
  // Tokens spanning the int32 range, including negative ones (ids are opaque to the index).
  std::mt19937 rng(23);
  const std::vector<int32_t> pool = {0, 1, -1, 2147483647, -2147483647 - 1, 129279, 65536};
  NgramIndex idx = NgramIndex::create({1, 4}).value();
  std::vector<int32_t> h;
  for (int i = 0; i < 3000; ++i) {
    const int32_t t = pool[rng() % pool.size()];
    ASSERT_TRUE(idx.append({&t, 1}).ok());
    h.push_back(t);
    ASSERT_EQ(idx.propose(5), brute_force(h, {1, 4}, 5)) << "length " << h.size();
  }
}

TEST(NgramIndex, LongHistoryIsFast) {
  // 300k tokens appended one at a time with a proposal after each: a rescan per step would be
  // ~10^10 comparisons; the index takes well under a second.
  std::mt19937 rng(29);
  std::uniform_int_distribution<int> tok(0, 50000);
  NgramIndex idx = NgramIndex::create({}).value();
  std::vector<int32_t> h;
  int64_t proposed = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 300000; ++i) {
    const int32_t t = (i % 1000 < 300 && h.size() > 5000) ? h[h.size() - 4000] : tok(rng);
    ASSERT_TRUE(idx.append({&t, 1}).ok());
    h.push_back(t);
    proposed += static_cast<int64_t>(idx.propose(7).size());
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 5.0);  // generous: the machine is shared
  EXPECT_GT(proposed, 0);
  for (int k : {1, 7, 30}) EXPECT_EQ(idx.propose(k), brute_force(h, {}, k));
}

TEST(NgramDrafter, DrafterInterface) {
  NgramDrafter d = NgramDrafter::create().value();
  EXPECT_EQ(d.name(), "ngram");
  const std::vector<int32_t> prompt = {5, 6, 7, 8, 5, 6};
  ASSERT_TRUE(d.add_request(1, prompt, {}).ok());
  ASSERT_TRUE(d.add_request(2, std::vector<int32_t>{1, 2, 3}, {}).ok());
  EXPECT_EQ(d.add_request(1, prompt, {}).message(), "request 1 is already registered");
  std::vector<DraftSlot> batch(2);
  batch[0].request = 1;
  batch[0].max_draft = 2;
  batch[1].request = 2;
  batch[1].max_draft = 4;
  batch[1].probs = {0.5f};  // stale output is cleared
  ASSERT_TRUE(d.propose(batch).ok());
  EXPECT_EQ(batch[0].tokens, (std::vector<int32_t>{7, 8}));
  EXPECT_TRUE(batch[0].probs.empty());
  EXPECT_TRUE(batch[1].tokens.empty());
  EXPECT_TRUE(batch[1].probs.empty());
  // The verify step accepted 7, and the target's token was 9: history 5 6 7 8 5 6 7 9.
  ASSERT_TRUE(d.commit(1, std::vector<int32_t>{7, 9}).ok());
  EXPECT_EQ(d.index(1)->history().size(), 8u);
  ASSERT_TRUE(d.commit(2, std::vector<int32_t>{1, 2}).ok());
  ASSERT_TRUE(d.propose(batch).ok());
  EXPECT_TRUE(batch[0].tokens.empty());  // "7 9", "9": no earlier occurrence
  EXPECT_EQ(batch[1].tokens, (std::vector<int32_t>{3, 1, 2}));
  batch[0].max_draft = -1;
  EXPECT_EQ(d.propose(batch).message(), "request 1: max_draft -1 is negative");
  batch[0].request = 3;
  EXPECT_EQ(d.propose(batch).code(), StatusCode::kNotFound);
  EXPECT_EQ(d.commit(3, prompt).message(), "request 3 is not registered");
  ASSERT_TRUE(d.remove_request(1).ok());
  EXPECT_EQ(d.remove_request(1).code(), StatusCode::kNotFound);
  EXPECT_EQ(d.index(1), nullptr);
}

}  // namespace
}  // namespace mlaspec::spec
