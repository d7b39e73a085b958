// Drafter: what the speculative step asks of any drafter (n-gram now, DFlash / DSpark later).
//
// The step is draft -> verify -> accept -> commit. A drafter sees each request's committed tokens
// only: the prompt at add_request, then after every verify step the tokens the acceptor emitted
// (accepted drafts + the target's token) through commit. Drafts that were rejected are never
// committed, so a drafter keeps no rollback logic for its token history; a model-based drafter
// rolls back its own KV rows for the rejected slots when commit tells it how many survived.
//
// propose fills, per request, at most `max_draft` tokens (fewer, even none, is fine: the step then
// verifies fewer) and optionally their distributions q (row i = the distribution d_i was drawn
// from, vocab entries each); no q means the tokens are one-hot drafts (acceptor.h's rule).
// A sampling drafter draws with model::random_uniform(seed, position, kDraft) so runs stay
// reproducible and independent of batching.
//
// A drafter conditioned on the target's hidden states (DFlash) names the target layers it reads
// (capture_layers) and receives their rows for committed positions through append_context; other
// drafters ignore both. Not thread-safe: the engine loop owns its drafter.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "mlaspec/core/status.h"
#include "mlaspec/model/sampling.h"

namespace mlaspec::spec {

using RequestId = int64_t;

// One request's slot in a propose call: the ask (request, max_draft) and the answer.
struct DraftSlot {
  RequestId request = 0;
  int32_t max_draft = 0;        // propose at most this many tokens
  std::vector<int32_t> tokens;  // out: the drafts, in order
  std::vector<float> probs;     // out: empty (one-hot drafts) or tokens.size() * vocab values
};

// Target hidden states of committed positions (append_context).
struct ContextRows {
  // One row-major [>= first_row + rows, target hidden] matrix per entry of capture_layers(), in
  // that order: a target forward's RequestOutput::hidden with ForwardOptions::capture_layers =
  // capture_layers().
  std::span<const std::vector<float>> hidden;
  int64_t first_row = 0;  // rows [first_row, first_row + rows) of each matrix are appended
  int64_t rows = 0;
  int64_t first_position = 0;  // the absolute position of row first_row
};

class Drafter {
 public:
  virtual ~Drafter() = default;

  // For logs and stats ("ngram", "dflash").
  virtual std::string_view name() const = 0;

  // Registers a request with its prompt. Duplicate ids are kInvalidArgument.
  virtual Status add_request(RequestId id, std::span<const int32_t> prompt,
                             const model::SamplingParams& params) = 0;

  // Fills tokens (and maybe probs) of every slot; unknown requests are kNotFound.
  virtual Status propose(std::span<DraftSlot> batch) = 0;

  // Tokens that became part of request `id` after a verify step, in order.
  virtual Status commit(RequestId id, std::span<const int32_t> tokens) = 0;

  // Forgets a finished or cancelled request. Unknown ids are kNotFound.
  virtual Status remove_request(RequestId id) = 0;

  // The target layers whose residual-stream outputs this drafter reads (model.h's
  // capture_layers); empty for drafters that read none.
  virtual std::vector<int> capture_layers() const { return {}; }

  // The captured rows of positions that became committed, in position order without gaps: after
  // each prefill chunk its rows; after a verify step verify rows 0 .. num_accepted (the anchor and
  // the accepted drafts; the emitted token's row comes with the next step). A drafter without
  // capture layers accepts and ignores them.
  virtual Status append_context(RequestId id, const ContextRows& rows) {
    (void)id;
    (void)rows;
    return Status::Ok();
  }
};

}  // namespace mlaspec::spec
