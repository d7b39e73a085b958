// DSpark block drafter network: the DFlash backbone (model/dflash.h) plus a low-rank Markov head
// and a confidence head, from a checkpoint written by python/dspark/model.py (docs/dspark.md).
//
//   DSparkNetwork net = DSparkNetwork::load("dspark_dir", target).value();
//   // the backbone's pool, append_context and propose are DFlash's: net.backbone
//   net.backbone.propose({&blk, 1}, pool);        // blk.logits [gamma, vocab], blk.hidden
//   std::vector<float> c = net.confidences(blk);  // [gamma]
//   for k in 0 .. gamma-1: row = blk.logits[k] + bias(prev); net.add_markov_bias(prev, row); ...
//
// Conventions (python/dspark/model.py says the same):
//   gamma = the drafts per block = the backbone's num_draft = block_size - 1; verify q_len =
//     gamma + 1. config.json holds DFlash's keys with model_type "dspark", plus markov_rank (>= 0;
//     0 = no Markov head), confidence_head (bool) and optionally gamma (must equal block_size - 1).
//   Markov head: markov.w1 [vocab, rank] (row x = token x's code) and markov.w2 [vocab, rank]
//     (nn.Linear(rank, vocab).weight). Slot k's logits = the backbone's + markov.w2 . markov.w1[x],
//     x = the token chosen for slot k - 1 (the anchor for slot 1): slots are chosen left to right.
//   Confidence head: confidence.weight [1, hidden], confidence.bias [1]; c_k = sigmoid(w . h_k +
//     b) of slot k's normed hidden (DFlashBlock::hidden) = the predicted probability that draft k
//     is accepted given drafts 1 .. k-1 were. Without the head every c_k is 1.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mlaspec/core/status.h"
#include "mlaspec/model/dflash.h"

namespace mlaspec::model {

struct DSparkConfig {
  DFlashConfig backbone;  // model_type "dspark"
  int markov_rank = 0;
  bool confidence_head = false;

  int gamma() const { return backbone.num_draft(); }
  std::string describe() const;
};

// Parses config.json text (`source` names it in errors): the backbone's keys as
// parse_dflash_config reads them, model_type "dspark" (required), markov_rank (required, 0 ..
// vocab_size), confidence_head (required, bool), gamma (optional, == block_size - 1). Errors are
// kInvalidArgument naming the key.
Result<DSparkConfig> parse_dspark_config(std::string_view json_text, std::string_view source);
Result<DSparkConfig> load_dspark_config(const std::filesystem::path& path);

struct DSparkHeads {
  Matrix markov_w1;                      // [vocab, rank]; empty without the Markov head
  Matrix markov_w2;                      // [vocab, rank]
  std::vector<float> confidence_weight;  // [hidden]; empty without the confidence head
  float confidence_bias = 0.0f;

  // logits [vocab] += markov.w2 . markov.w1[prev] (nothing without the Markov head). prev must be
  // in [0, vocab).
  void add_markov_bias(int32_t prev, std::span<float> logits) const;
  // c_k of each row of hidden [slots, hidden_size] (1 without the confidence head).
  std::vector<float> confidences(std::span<const float> hidden, int64_t hidden_size) const;
};

// The heads' tensors of the config with their shapes; a head the config leaves out must have no
// tensors. Errors name the tensor and its file.
Result<DSparkHeads> load_dspark_heads(const DSparkConfig& config, const Checkpoint& checkpoint);

struct DSparkNetwork {
  DSparkConfig config;
  DSparkHeads heads;
  DFlashNetwork backbone;

  // Reads dir/config.json and the safetensors; the backbone as DFlashNetwork::load does (checked
  // against the target), the heads with load_dspark_heads.
  static Result<DSparkNetwork> load(const std::filesystem::path& dir, const Model& target,
                                    const DFlashOptions& options = {});

  int gamma() const { return config.gamma(); }
  // c_k for the slots of a proposed block ([gamma]; all 1 without the confidence head).
  std::vector<float> confidences(const DFlashBlock& block) const;
  // Slot logits [gamma, vocab] of a proposed block with the Markov bias of `chosen` (the tokens of
  // slots 1 .. gamma; slot k's bias reads chosen[k - 2], slot 1's the anchor).
  std::vector<float> slot_logits(const DFlashBlock& block, std::span<const int32_t> chosen) const;
};

}  // namespace mlaspec::model
