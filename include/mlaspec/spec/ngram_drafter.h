// n-gram (prompt lookup) drafter: no model; proposes what followed the longest earlier match.
//
// Rule, for a request whose committed history is h[0 .. L):
//   for n = max_ngram down to min_ngram:
//     if the suffix h[L-n .. L) also ends at some earlier e (h[e-n .. e) == h[L-n .. L), e < L),
//     take the most recent such e and propose h[e .. min(e + num_draft, L)); stop.
//   no n matches: propose nothing (the step then verifies the anchor alone: a plain decode step).
// The earlier occurrence may overlap the suffix (in "a b a b a" the suffix "a b a" last ended at
// e = 3, proposing "b a"); the proposal is cut at the end of the history, as vLLM's n-gram
// proposer does, so it can be shorter than num_draft. With repeat_cycle the copy instead runs on
// into the proposal itself (token j is (h ++ proposal)[e + j]): a history caught in a loop of
// period L - e gets the loop continued for all num_draft tokens. Defaults: n from 3 down to 1,
// repeat_cycle off (vLLM's rule, the baseline).
//
// Cost: an index per request with one open-addressing table per n, mapping an n-gram (hashed from
// the history, compared exactly) to the end of its most recent occurrence. Appending a token costs
// O(max_ngram^2) (one insert per n), proposing O(max_ngram^2 + num_draft): independent of the
// history's length. Memory: 8 to 16 bytes per token per n (4-byte slots, load at most one half).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "mlaspec/core/status.h"
#include "mlaspec/spec/drafter.h"

namespace mlaspec::spec {

struct NgramConfig {
  int32_t min_ngram = 1;
  int32_t max_ngram = 3;
  bool repeat_cycle = false;  // continue the copy into the proposal instead of stopping at L
};
constexpr int32_t kMaxNgram = 64;

// 1 <= min_ngram <= max_ngram <= kMaxNgram, else kInvalidArgument naming the value.
Status validate(const NgramConfig& config);

// One request's history and its n-gram index.
class NgramIndex {
 public:
  static Result<NgramIndex> create(const NgramConfig& config);

  // Appends committed tokens. Histories are limited to 2^31 - 1 tokens (kOutOfRange beyond).
  Status append(std::span<const int32_t> tokens);

  // The rule above; at most num_draft tokens (num_draft <= 0 proposes nothing).
  std::vector<int32_t> propose(int32_t num_draft) const;

  // The match the rule found: n (0 if none) and the end e of the earlier occurrence.
  struct Match {
    int32_t n = 0;
    int64_t end = -1;
  };
  Match find() const;

  std::span<const int32_t> history() const { return history_; }
  const NgramConfig& config() const { return config_; }

 private:
  // Open addressing, linear probing; a slot holds the end of the most recent occurrence of its
  // n-gram (-1 = empty); keys are read from history_.
  struct Table {
    std::vector<int32_t> slots;
    size_t used = 0;
  };
  explicit NgramIndex(const NgramConfig& config);
  uint64_t hash(int32_t n, int64_t end) const;
  bool same(int32_t n, int64_t a, int64_t b) const;
  void insert(int32_t n, int64_t end);
  int64_t lookup(int32_t n, int64_t end) const;

  NgramConfig config_;
  std::vector<int32_t> history_;
  std::vector<Table> tables_;  // tables_[n - min_ngram]
};

// The Drafter over one NgramIndex per request. Proposes one-hot drafts (no probs).
class NgramDrafter final : public Drafter {
 public:
  static Result<NgramDrafter> create(const NgramConfig& config = {});

  std::string_view name() const override { return "ngram"; }
  Status add_request(RequestId id, std::span<const int32_t> prompt,
                     const model::SamplingParams& params) override;
  Status propose(std::span<DraftSlot> batch) override;
  Status commit(RequestId id, std::span<const int32_t> tokens) override;
  Status remove_request(RequestId id) override;

  const NgramIndex* index(RequestId id) const;

 private:
  explicit NgramDrafter(const NgramConfig& config) : config_(config) {}
  NgramConfig config_;
  std::unordered_map<RequestId, NgramIndex> requests_;
};

}  // namespace mlaspec::spec
