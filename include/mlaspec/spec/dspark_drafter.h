// DSpark drafter: the DSpark network (model/dspark.h) behind the Drafter interface
// (docs/dspark.md). The backbone's bookkeeping (history, context rows, pool, page tables) is a
// DFlashDrafter's; DSpark changes how a block's tokens are chosen and how many are sent.
//
//   DSparkDrafterConfig c;
//   c.width.mode = VerifyWidthPolicy::Mode::kAdaptive;
//   auto d = DSparkDrafter::create(DSparkNetwork::load(dir, target).value(), c).value();
//   // then exactly as DFlashDrafter: add_request, append_context, commit, propose.
//
// propose: one backbone forward per request, then slots 1 .. n left to right: slot k's logits are
// the backbone's plus the Markov bias of the token chosen for slot k - 1 (the anchor for slot 1);
// greedy takes the argmax (no probs), sampling draws from process_logits(row, params) with
// random_uniform(seed, L + k, kDraft) and returns those distributions as probs. The n of the
// step's requests come from choose_num_drafts(their confidences, max_drafts, width policy)
// (spec/verify_width.h), chosen together since they share one verify forward: with kAdaptive a
// request may send fewer drafts than others in the same step. last_confidences(id) are the
// block's c_1 .. c_gamma.
#pragma once

#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "mlaspec/model/dspark.h"
#include "mlaspec/spec/dflash_drafter.h"
#include "mlaspec/spec/verify_width.h"

namespace mlaspec::spec {

struct DSparkDrafterConfig {
  DFlashDrafterConfig backbone;  // pool, pages, requests: as DFlashDrafter
  VerifyWidthPolicy width;
};

class DSparkDrafter final : public Drafter {
 public:
  static Result<std::unique_ptr<DSparkDrafter>> create(model::DSparkNetwork network,
                                                       const DSparkDrafterConfig& config = {});

  std::string_view name() const override { return "dspark"; }
  Status add_request(RequestId id, std::span<const int32_t> prompt,
                     const model::SamplingParams& params) override;
  Status propose(std::span<DraftSlot> batch) override;
  Status commit(RequestId id, std::span<const int32_t> tokens) override;
  Status remove_request(RequestId id) override;
  std::vector<int> capture_layers() const override;
  Status append_context(RequestId id, const ContextRows& rows) override;

  int gamma() const { return config_.gamma(); }
  const model::DSparkConfig& config() const { return config_; }
  const DFlashDrafter& backbone() const { return *backbone_; }
  // c_1 .. c_gamma of the request's last proposed block (empty before its first).
  std::span<const float> last_confidences(RequestId id) const;

 private:
  DSparkDrafter(model::DSparkConfig config, model::DSparkHeads heads,
                std::unique_ptr<DFlashDrafter> backbone, VerifyWidthPolicy width);

  model::DSparkConfig config_;
  model::DSparkHeads heads_;
  std::unique_ptr<DFlashDrafter> backbone_;
  VerifyWidthPolicy width_;
  std::unordered_map<RequestId, std::vector<float>> confidences_;
};

}  // namespace mlaspec::spec
