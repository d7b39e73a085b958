// DSparkDrafter: a DFlashDrafter's bookkeeping, DSpark's left-to-right Markov-biased slots and the
// verify-width policy.
#include "mlaspec/spec/dspark_drafter.h"

#include <algorithm>

#include "mlaspec/core/log.h"

namespace mlaspec::spec {

DSparkDrafter::DSparkDrafter(model::DSparkConfig config, model::DSparkHeads heads,
                             std::unique_ptr<DFlashDrafter> backbone, VerifyWidthPolicy width)
    : config_(std::move(config)),
      heads_(std::move(heads)),
      backbone_(std::move(backbone)),
      width_(width) {}

Result<std::unique_ptr<DSparkDrafter>> DSparkDrafter::create(model::DSparkNetwork network,
                                                             const DSparkDrafterConfig& config) {
  MLASPEC_RETURN_IF_ERROR(validate(config.width));
  Result<std::unique_ptr<DFlashDrafter>> backbone =
      DFlashDrafter::create(std::move(network.backbone), config.backbone);
  if (!backbone.ok()) return backbone.status();
  log_info(network.config.describe() + "; verify width " +
           (config.width.mode == VerifyWidthPolicy::Mode::kAdaptive ? "adaptive" : "fixed"));
  return std::unique_ptr<DSparkDrafter>(new DSparkDrafter(
      std::move(network.config), std::move(network.heads), std::move(*backbone), config.width));
}

Status DSparkDrafter::add_request(RequestId id, std::span<const int32_t> prompt,
                                  const model::SamplingParams& params) {
  return backbone_->add_request(id, prompt, params);
}

Status DSparkDrafter::commit(RequestId id, std::span<const int32_t> tokens) {
  return backbone_->commit(id, tokens);
}

Status DSparkDrafter::remove_request(RequestId id) {
  MLASPEC_RETURN_IF_ERROR(backbone_->remove_request(id));
  confidences_.erase(id);
  return Status::Ok();
}

std::vector<int> DSparkDrafter::capture_layers() const {
  return backbone_->capture_layers();
}

Status DSparkDrafter::append_context(RequestId id, const ContextRows& rows) {
  return backbone_->append_context(id, rows);
}

std::span<const float> DSparkDrafter::last_confidences(RequestId id) const {
  auto it = confidences_.find(id);
  if (it == confidences_.end()) return {};
  return it->second;
}

Status DSparkDrafter::propose(std::span<DraftSlot> batch) {
  const int vocab = config_.backbone.vocab_size;
  std::vector<model::DFlashBlock> blocks;
  std::vector<size_t> slot_of_block;
  MLASPEC_RETURN_IF_ERROR(backbone_->run_blocks(batch, &blocks, &slot_of_block));
  // The confidences of every block first: the widths are chosen for the step's batch at once
  // (choose_num_drafts: the verify forward's fixed cost is shared by its requests).
  std::vector<std::span<const float>> confs;
  std::vector<int> max_drafts;
  for (size_t bi = 0; bi < blocks.size(); ++bi) {
    const DraftSlot& slot = batch[slot_of_block[bi]];
    std::vector<float>& conf = confidences_[slot.request];
    conf = heads_.confidences(blocks[bi].hidden, config_.backbone.hidden_size);
    confs.push_back(conf);
    max_drafts.push_back(slot.max_draft);
  }
  const std::vector<int> widths = choose_num_drafts(confs, max_drafts, width_);
  std::vector<float> row(static_cast<size_t>(vocab));
  for (size_t bi = 0; bi < blocks.size(); ++bi) {
    DraftSlot& slot = batch[slot_of_block[bi]];
    const model::DFlashBlock& b = blocks[bi];
    const model::SamplingParams& params = *backbone_->sampling(slot.request);
    const int n = widths[bi];
    if (!params.greedy()) slot.probs.resize(static_cast<size_t>(n) * vocab);
    int32_t prev = b.anchor;
    for (int k = 0; k < n; ++k) {
      std::copy_n(b.logits.data() + static_cast<size_t>(k) * vocab, vocab, row.begin());
      heads_.add_markov_bias(prev, row);
      std::span<float> q;
      if (!params.greedy()) {
        q = {slot.probs.data() + static_cast<size_t>(k) * vocab, static_cast<size_t>(vocab)};
      }
      // Slot k + 1 drafts position L + k + 1 (DFlashDrafter's draw for that position).
      MLASPEC_RETURN_IF_ERROR(
          DFlashDrafter::choose_token(row, params, b.context_len + k + 1, q, &prev));
      slot.tokens.push_back(prev);
    }
  }
  return Status::Ok();
}

}  // namespace mlaspec::spec
