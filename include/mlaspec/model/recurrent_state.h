// RecurrentState: the recurrent-state layers of a hybrid model (MLA layers interleaved with
// linear-attention or state-space layers), as the speculative step sees them.
//
// An MLA layer keeps one KV row per token, so rejecting drafts is the page table's rollback. A
// recurrent layer keeps one fixed-size state per request that every token overwrites: a verify
// forward over [anchor, d1 .. dk] leaves a candidate state after each row, and after acceptance
// only the state after the last kept row may survive. commit() is that step. It is called after
// every forward the engine keeps rows of (each prefill chunk: all rows; each verify block: the
// anchor and the accepted drafts), with the tokens the forward carried, so an implementation that
// advances its state in commit (a test double) and one that advanced it inside the forward and
// kept per-row candidates (a real hybrid layer) serve the same contract.
//
// Whether a model has such layers is decided once, at load: Model::recurrent_state() is null for
// a pure-MLA model (every family model/config.h accepts), and then the engine never calls any of
// this (sglang PR #29218's `_need_mamba_verify_commit`: the check is made once at init, not per
// step).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "mlaspec/core/status.h"

namespace mlaspec::model {

class RecurrentState {
 public:
  virtual ~RecurrentState() = default;

  // For logs ("hash-double", a layer kind).
  virtual std::string_view name() const = 0;

  // A new request starts from the initial state. Duplicate ids are kInvalidArgument.
  virtual Status add_request(int64_t request) = 0;
  // Forgets a request (finished, failed or cancelled). Unknown ids are kNotFound.
  virtual Status remove_request(int64_t request) = 0;

  // The last forward over `request` carried `tokens` (a prefill chunk or a verify block, in
  // order): keep the state after the first `rows` of them, 1 <= rows <= tokens.size(), and drop
  // the candidates after later rows.
  virtual Status commit(int64_t request, std::span<const int32_t> tokens, int32_t rows) = 0;
};

}  // namespace mlaspec::model
