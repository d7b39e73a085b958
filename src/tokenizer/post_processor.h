// Post-processors of tokenizer.json, for single sequences: TemplateProcessing (the "single"
// template's special tokens around the sequence, e.g. a BOS), BertProcessing / RobertaProcessing
// (cls ... sep), ByteLevel (offsets only, nothing to do on ids) and Sequence of these.
#pragma once

#include <cstdint>
#include <vector>

#include "mlaspec/core/status.h"
#include "tokenizer/json_util.h"

namespace mlaspec::tokenizer {

struct PostProcessor {
  std::vector<int32_t> prefix;  // ids before the sequence
  std::vector<int32_t> suffix;  // ids after it
};

// null -> an empty PostProcessor.
Result<PostProcessor> parse_post_processor(const json_util::Json& j);

}  // namespace mlaspec::tokenizer
