// Decoders of tokenizer.json: ByteLevel, Metaspace, ByteFallback, Fuse, Strip, Replace and
// Sequence; no decoder joins tokens with spaces, as tokenizers does. Others (WordPiece, BPEDecoder,
// CTC) are refused by name at load.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "mlaspec/core/status.h"
#include "tokenizer/json_util.h"

namespace mlaspec::tokenizer {

class Decoder {
 public:
  virtual ~Decoder() = default;
  // tokenizers' Decoder::decode_chain: tokens in, tokens out.
  virtual Status decode_chain(std::vector<std::string>& tokens) const = 0;
  // Decodes GPT-2 byte characters back to bytes (lossless byte-level pipelines end with it).
  virtual bool byte_level() const { return false; }
};

// null -> nullptr.
Result<std::unique_ptr<Decoder>> parse_decoder(const json_util::Json& j);

// The text of `tokens` through `decoder` (nullptr: joined with " ").
Result<std::string> run_decoder(const Decoder* decoder, std::vector<std::string> tokens);

}  // namespace mlaspec::tokenizer
