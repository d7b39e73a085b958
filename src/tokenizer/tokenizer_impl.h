// The pieces of a loaded tokenizer, shared by Tokenizer and StreamDecoder.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "mlaspec/tokenizer/tokenizer.h"
#include "tokenizer/added_tokens.h"
#include "tokenizer/bpe.h"
#include "tokenizer/decoder.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/post_processor.h"
#include "tokenizer/pre_tokenizer.h"

namespace mlaspec::tokenizer {

class TokenizerImpl {
 public:
  Status encode(std::string_view text, const EncodeOptions& options,
                std::vector<int32_t>& out) const;
  Result<std::string> decode(std::span<const int32_t> ids, const DecodeOptions& options) const;

  std::unique_ptr<Normalizer> normalizer;
  std::unique_ptr<PreTokenizer> pre_tokenizer;
  std::unique_ptr<Bpe> model;
  PostProcessor post;
  std::unique_ptr<Decoder> decoder;

  std::vector<AddedToken> added;  // never resized after the matchers point into it
  std::unordered_map<int32_t, size_t> added_by_id;
  TokenMap added_by_content;
  AddedTokenMatcher raw_matcher, normalized_matcher;
  std::vector<AddedTokenInfo> added_info;

  std::optional<int32_t> bos, eos;
  bool byte_level = false;
  bool lossless = false;
  int32_t vocab_size = 0;

 private:
  Status encode_text(std::string_view segment, bool at_origin, std::vector<int32_t>& out) const;
};

}  // namespace mlaspec::tokenizer
