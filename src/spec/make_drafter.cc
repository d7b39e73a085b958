#include "mlaspec/spec/make_drafter.h"

#include <algorithm>
#include <string>
#include <utility>

#include "mlaspec/model/dflash.h"
#include "mlaspec/model/dspark.h"
#include "mlaspec/spec/dflash_drafter.h"
#include "mlaspec/spec/dspark_drafter.h"
#include "mlaspec/spec/ngram_drafter.h"

namespace mlaspec::spec {
namespace {

// A num_draft the caller asked for may not exceed the drafts a checkpoint's block holds (a default
// is lowered to it instead).
Status within_block(const DrafterSpec& spec, int block, const char* what) {
  if (!spec.num_draft_asked || spec.num_draft <= block) return Status::Ok();
  return out_of_range("num_draft " + std::to_string(spec.num_draft) + " is more than the " +
                      std::to_string(block) + " drafts draft model " + spec.model_dir.string() +
                      " makes a step (" + what + ")");
}

}  // namespace

Result<MadeDrafter> make_drafter(const DrafterSpec& spec, const model::Model& target) {
  if (spec.kind != "none" && spec.kind != "ngram" && spec.kind != "dflash" &&
      spec.kind != "dspark") {
    return invalid_argument("drafter '" + spec.kind +
                            "' is not one of none, ngram, dflash, dspark");
  }
  MadeDrafter made;
  if (spec.kind == "none" || spec.num_draft <= 0) return made;
  const std::string context = "draft model " + spec.model_dir.string();
  const int64_t max_tokens = spec.max_tokens_per_request > 0
                                 ? spec.max_tokens_per_request
                                 : target.config().max_position_embeddings;
  if (spec.kind == "ngram") {
    Result<NgramDrafter> ngram = NgramDrafter::create();
    if (!ngram.ok()) return ngram.status();
    made.drafter = std::make_unique<NgramDrafter>(std::move(*ngram));
    made.num_draft = spec.num_draft;
    return made;
  }
  model::DFlashOptions network_options;
  network_options.device = spec.device.value_or(target.device());
  if (spec.kind == "dflash") {
    Result<model::DFlashNetwork> net =
        model::DFlashNetwork::load(spec.model_dir, target, network_options);
    if (!net.ok()) return net.status().with_context(context);
    // The block size is the checkpoint's: num_draft may only lower it.
    MLASPEC_RETURN_IF_ERROR(within_block(spec, net->num_draft(), "its block size - 1"));
    made.num_draft = std::min(spec.num_draft, net->num_draft());
    DFlashDrafterConfig config;
    config.max_requests = spec.max_requests;
    config.max_tokens_per_request = max_tokens;
    config.target_kv_dtype = spec.target_kv_dtype;
    Result<std::unique_ptr<DFlashDrafter>> d = DFlashDrafter::create(std::move(*net), config);
    if (!d.ok()) return d.status().with_context(context);
    made.drafter = std::move(*d);
    return made;
  }
  Result<model::DSparkNetwork> net =
      model::DSparkNetwork::load(spec.model_dir, target, network_options);
  if (!net.ok()) return net.status().with_context(context);
  // gamma is the checkpoint's: num_draft may only lower it; the width policy may send fewer.
  MLASPEC_RETURN_IF_ERROR(within_block(spec, net->gamma(), "its gamma"));
  made.num_draft = std::min(spec.num_draft, net->gamma());
  DSparkDrafterConfig config;
  config.backbone.max_requests = spec.max_requests;
  config.backbone.max_tokens_per_request = max_tokens;
  config.backbone.target_kv_dtype = spec.target_kv_dtype;
  config.width.mode = spec.verify_width;
  Result<std::unique_ptr<DSparkDrafter>> d = DSparkDrafter::create(std::move(*net), config);
  if (!d.ok()) return d.status().with_context(context);
  made.drafter = std::move(*d);
  return made;
}

}  // namespace mlaspec::spec
