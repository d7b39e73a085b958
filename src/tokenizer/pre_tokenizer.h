// Pre-tokenizers of tokenizer.json: Split (Oniguruma regex or literal, all five behaviours,
// invert), ByteLevel, Digits, Metaspace and Sequence. Others (Whitespace, BertPreTokenizer,
// Punctuation, ...) are refused by name at load.
//
// Pieces are byte ranges of one growing buffer: a pre-tokenizer that rewrites a piece (a prefix
// space, Metaspace's ▁) appends the new text to the buffer and points the piece at it. ByteLevel's
// byte-to-character mapping is not materialised: it must come last and the model reads the raw
// bytes through its table (byte_level()).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mlaspec/core/status.h"
#include "tokenizer/json_util.h"

namespace mlaspec::tokenizer {

struct Piece {
  uint32_t begin = 0;
  uint32_t end = 0;
  // Starts at offset 0 of the original input (Metaspace's prepend_scheme "first").
  bool at_origin = false;
};

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Replaces `pieces` (ranges of `buf`) by their sub-pieces; empty pieces are dropped.
  virtual Status apply(std::string& buf, std::vector<Piece>& pieces) const = 0;
  // Ends with ByteLevel: the model maps bytes to GPT-2's byte characters.
  virtual bool byte_level() const { return false; }
  // Can drop text (a Split with behavior Removed): decode(encode(x)) != x.
  virtual bool removes_text() const { return false; }
  // Adds text (a prefix space, Metaspace): decode may differ from the input.
  virtual bool adds_text() const { return false; }
};

// null -> nullptr (no pre-tokenizer).
Result<std::unique_ptr<PreTokenizer>> parse_pre_tokenizer(const json_util::Json& j);

}  // namespace mlaspec::tokenizer
