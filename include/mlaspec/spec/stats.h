// SpecStats: what the speculative loop counts, per request or for a whole run.
//
// Per verify step: drafts proposed, drafts accepted, tokens emitted; per draft position k the
// conditional acceptance "draft k accepted, given drafts 0 .. k-1 were" (reached[k] counts steps
// that proposed a draft k and accepted all before it, accepted_at[k] those that also accepted
// it); and wall time in draft, verify, and accept + commit.
//   accept length tau = (accepted + verify_steps) / verify_steps: tokens per verify step, counting
//                       the target's own token (so tau = 1 with no drafts, num_draft + 1 at most);
//   acceptance rate   = accepted / drafted.
// Emitted tokens can fall short of accepted + 1 when a request stops inside a step (EOS,
// max_tokens); tau does not see that. Per-request stats merge into run totals by plain sums, so
// merging is associative and order-free.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mlaspec/core/status.h"

namespace mlaspec::spec {

enum class Phase { kDraft, kVerify, kAcceptCommit };

struct SpecStats {
  int64_t verify_steps = 0;
  int64_t drafted = 0;
  int64_t accepted = 0;
  int64_t emitted = 0;
  std::vector<int64_t> reached;      // [k]: steps with a draft k and drafts 0 .. k-1 accepted
  std::vector<int64_t> accepted_at;  // [k]: of those, steps that accepted draft k
  double draft_seconds = 0.0;
  double verify_seconds = 0.0;
  double accept_commit_seconds = 0.0;

  // One verify step. Needs 0 <= num_accepted <= num_draft and 0 <= num_emitted <=
  // num_accepted + 1, else kInvalidArgument and nothing is counted.
  Status record_step(int32_t num_draft, int32_t num_accepted, int32_t num_emitted);
  // The usual step: every accepted token and the target's token emitted.
  Status record_step(int32_t num_draft, int32_t num_accepted) {
    return record_step(num_draft, num_accepted, num_accepted + 1);
  }
  void add_time(Phase phase, double seconds);
  void merge(const SpecStats& other);

  double accept_length() const;    // tau; 0 before the first step
  double acceptance_rate() const;  // 0 before the first draft
  // Tokens per verify row spent: (accepted + verify_steps) / (drafted + verify_steps), each step's
  // q_len being its drafts + 1; what a verify-width policy trades against tau (issue 39). 0
  // before the first step.
  double tokens_per_verify_token() const;
  // accepted_at[k] / reached[k]; NaN when position k was never reached.
  double position_acceptance(size_t k) const;
};

// One line for the CLI:
// "ngram: 120 steps, 840 drafted, 512 accepted (61.0%), tau 5.27, per-position 0.92 0.85 ...,
//  632 emitted; ms/step draft 1.20 verify 8.10 accept+commit 0.10"
std::string format_summary(const SpecStats& stats, std::string_view drafter = "spec");

// Adds the wall time of its scope to one phase of `stats`.
class PhaseTimer {
 public:
  PhaseTimer(SpecStats& stats, Phase phase)
      : stats_(stats), phase_(phase), start_(std::chrono::steady_clock::now()) {}
  ~PhaseTimer() {
    stats_.add_time(
        phase_, std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  SpecStats& stats_;
  Phase phase_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace mlaspec::spec
