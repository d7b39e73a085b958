// DFlash drafter: the block drafter network (model/dflash.h) behind the Drafter interface, with its
// own KV pool and page tables (docs/dflash.md).
//
//   auto d = DFlashDrafter::create(DFlashNetwork::load(dir, target).value(),
//                                  {.target_kv_dtype = DType::kFP8E4M3}).value();  // pool: bf16
//   d->add_request(id, prompt, sampling);
//   // every target forward captures d->capture_layers(); committed rows go to the drafter:
//   d->append_context(id, {out.hidden, 0, prompt.size(), 0});       // after prefill
//   d->commit(id, {first_token});
//   d->propose(slots);                                               // num_draft tokens
//   ... verify, accept a drafts ...
//   d->append_context(id, {verify.hidden, 0, a + 1, anchor_position});
//   d->commit(id, acceptance.tokens);
//
// State per request: its committed tokens (prompt + emitted) and its context length L (positions
// whose target hidden states were appended; their K/V rows are in the pool). A block is proposed
// for the anchor = the last committed token, which must sit at position L: every committed token
// but the last has its context row. The pool holds exactly the appended context rows (the block's
// own K/V are never written), so nothing is rolled back: rejected drafts never reach it.
//
// Proposals: greedy (temperature 0) takes each slot's argmax and gives no probabilities (one-hot
// drafts). With temperature > 0, slot k's distribution is model::process_logits of its logits with
// the request's sampling params, drawn with random_uniform(seed, L + k, kDraft), and returned as
// probs for rejection sampling.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "mlaspec/core/dtype.h"
#include "mlaspec/core/status.h"
#include "mlaspec/kvcache/page_table.h"
#include "mlaspec/kvcache/pool.h"
#include "mlaspec/model/dflash.h"
#include "mlaspec/model/sampling.h"
#include "mlaspec/spec/drafter.h"

namespace mlaspec::spec {

struct DFlashDrafterConfig {
  int page_size = 64;
  int max_requests = 16;
  // Longest context of one request (its page-table row); pages for all requests at this length
  // when num_pages is 0.
  int64_t max_tokens_per_request = 4096;
  int num_pages = 0;
  // The target pool's KV dtype: the draft pool's dtype rule (spec/draft_pool_rule.h) takes it if
  // the drafter's attention reads it, else bf16. pool_dtype overrides (must be readable).
  DType target_kv_dtype = DType::kBF16;
  std::optional<DType> pool_dtype;
};

class DFlashDrafter final : public Drafter {
 public:
  // Decides the pool dtype (logged with its reason), allocates the pool and page tables.
  static Result<std::unique_ptr<DFlashDrafter>> create(model::DFlashNetwork network,
                                                       const DFlashDrafterConfig& config = {});

  std::string_view name() const override { return "dflash"; }
  Status add_request(RequestId id, std::span<const int32_t> prompt,
                     const model::SamplingParams& params) override;
  Status propose(std::span<DraftSlot> batch) override;
  Status commit(RequestId id, std::span<const int32_t> tokens) override;
  Status remove_request(RequestId id) override;
  std::vector<int> capture_layers() const override;
  // Rows must continue the context: first_position == context_len(id). The pool's pages for them
  // are taken first; kResourceExhausted (and nothing changed) when the pool is full. The rows are
  // copied and their K/V written to the pool at the next propose (or flush_context), every
  // request's waiting rows in one network call: an engine step appends for each request of the
  // batch, and one call per request cost a launch sequence and a sync each on the GPU.
  Status append_context(RequestId id, const ContextRows& rows) override;
  // Writes the waiting context rows of every request to the pool now (propose does it first).
  // An error leaves those requests' context rows unwritten; remove them.
  Status flush_context();

  int num_draft() const { return network_.num_draft(); }
  const model::DFlashNetwork& network() const { return network_; }
  // The draft pool; rows appended since the last propose / flush_context are not in it yet.
  const kv::KvPool& pool() const { return pool_; }
  const kv::PageTables& page_tables() const { return tables_; }
  const std::string& pool_dtype_reason() const { return pool_reason_; }
  // Positions with context rows in the pool (0 for unknown requests).
  int64_t context_len(RequestId id) const { return tables_.length(id); }
  // The request's committed tokens (empty for unknown requests).
  std::span<const int32_t> history(RequestId id) const;
  // The request's sampling params (nullptr for unknown requests).
  const model::SamplingParams* sampling(RequestId id) const;

  // propose's first half, for drafters built on this one (DSpark): clears every slot's output,
  // validates, and runs the network's block for each slot with max_draft > 0; blocks[i] belongs
  // to batch[slot_of_block[i]].
  Status run_blocks(std::span<DraftSlot> batch, std::vector<model::DFlashBlock>* blocks,
                    std::vector<size_t>* slot_of_block);
  // One slot's token from its logits [vocab]: the argmax when greedy (q unused), else q =
  // process_logits(logits, params) and a draw with random_uniform(seed, position, kDraft).
  static Status choose_token(std::span<const float> logits, const model::SamplingParams& params,
                             int64_t position, std::span<float> q, int32_t* token);

 private:
  struct Request {
    std::vector<int32_t> history;
    model::SamplingParams params;
  };
  // Context rows appended but not yet written (their positions are already in the page tables).
  struct PendingContext {
    RequestId id = 0;
    std::vector<std::vector<float>> layers;  // [capture layer][rows * target_hidden_size]
    int64_t rows = 0;
    int64_t first_position = 0;
  };
  DFlashDrafter(model::DFlashNetwork network, kv::KvPool pool, kv::PageTables tables,
                std::string pool_reason);
  Result<Request*> find(RequestId id, const char* what);

  model::DFlashNetwork network_;
  kv::KvPool pool_;
  kv::PageTables tables_;
  std::string pool_reason_;
  std::unordered_map<RequestId, Request> requests_;
  std::vector<PendingContext> pending_;
};

}  // namespace mlaspec::spec
