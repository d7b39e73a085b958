// make_drafter: a drafter by name for a loaded target, the one place the commands (generate,
// eval, serve) build theirs.
//
//   Result<MadeDrafter> d = make_drafter({.kind = "dflash", .model_dir = dir}, target);
//   config.num_draft = d->num_draft;   // the checkpoint's block may lower the ask
//   Engine::create(std::move(target), std::move(d->drafter), config);
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "mlaspec/core/dtype.h"
#include "mlaspec/core/status.h"
#include "mlaspec/model/model.h"
#include "mlaspec/spec/drafter.h"
#include "mlaspec/spec/verify_width.h"

namespace mlaspec::spec {

struct DrafterSpec {
  std::string kind = "none";        // "none", "ngram", "dflash" or "dspark"
  std::filesystem::path model_dir;  // dflash / dspark: the drafter's checkpoint directory
  // dspark: fixed or confidence-chosen verify widths (spec/verify_width.h).
  VerifyWidthPolicy::Mode verify_width = VerifyWidthPolicy::Mode::kFixed;
  int num_draft = 7;  // dflash / dspark: at most the checkpoint's block (see num_draft_asked)
  // Whether num_draft was asked for (a command's --num-draft given): then more than the
  // checkpoint's block is an error naming both; otherwise (a default) it is lowered to the block.
  bool num_draft_asked = false;
  // The engine's limits, which a model drafter sizes its own KV pool by.
  int max_requests = 16;
  int64_t max_tokens_per_request = 0;  // 0 = the target's max_position_embeddings
  DType target_kv_dtype = DType::kBF16;
  // Where a dflash / dspark network runs (model::DFlashOptions::device); empty: the target's
  // device, so a CUDA target gets a CUDA drafter and its draft pool.
  std::optional<Device> device = std::nullopt;
};

struct MadeDrafter {
  std::unique_ptr<Drafter> drafter;  // null for "none" (and for "ngram" with num_draft 0)
  int num_draft = 0;                 // what the engine should ask for (0 without a drafter)
};

// Errors: an unknown kind (kInvalidArgument naming it); a drafter checkpoint that is missing or
// does not match the target (its load error, in the context "draft model DIR"); num_draft asked
// for above the checkpoint's block (kOutOfRange naming both).
Result<MadeDrafter> make_drafter(const DrafterSpec& spec, const model::Model& target);

}  // namespace mlaspec::spec
