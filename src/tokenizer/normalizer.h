// Normalizers of tokenizer.json: NFC, NFD, NFKC, NFKD (ICU), Lowercase, Prepend, Replace, Strip
// and Sequence. Others (BertNormalizer, StripAccents, Precompiled, Nmt, ByteLevel) are refused
// by name at load.
#pragma once

#include <memory>
#include <string>

#include "mlaspec/core/status.h"
#include "tokenizer/json_util.h"

namespace mlaspec::tokenizer {

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  // Rewrites `text` (valid UTF-8) in place.
  virtual Status normalize(std::string& text) const = 0;
  // Whether the normalizer can change a string (everything except an empty Sequence).
  virtual bool changes_text() const { return true; }
};

// null -> nullptr (no normalizer).
Result<std::unique_ptr<Normalizer>> parse_normalizer(const json_util::Json& j);

}  // namespace mlaspec::tokenizer
