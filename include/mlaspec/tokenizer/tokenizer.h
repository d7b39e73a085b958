// Tokenizer: a Hugging Face tokenizer.json (byte-level BPE as GPT-2 and DeepSeek-V2/V3 ship it,
// and SentencePiece-style BPE with Metaspace and byte fallback), giving the same ids as the
// `tokenizers` Python package. A construct of the file this class cannot reproduce exactly is a
// load error naming it, never a different encoding.
//
//   auto tok = Tokenizer::from_path("/models/DeepSeek-V3");      // dir or tokenizer.json
//   Result<std::vector<int32_t>> ids = tok->encode("Hello");     // with the post-processor's BOS
//   Result<std::string> text = tok->decode(*ids, {.skip_special_tokens = true});
//
// Text in and out is UTF-8. Encode refuses invalid UTF-8 with the byte offset of the first bad
// sequence unless EncodeOptions::invalid_utf8 asks for replacement (each maximal invalid subpart
// becomes U+FFFD, as Python's bytes.decode("utf-8", errors="replace") does, which is the only way
// such bytes reach `tokenizers`).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mlaspec/core/status.h"

namespace mlaspec::tokenizer {

enum class InvalidUtf8 {
  kReject,   // invalid_argument naming the byte offset
  kReplace,  // each maximal invalid subpart -> U+FFFD, then encode
};

struct EncodeOptions {
  // Apply the post-processor (e.g. TemplateProcessing's BOS), as tokenizers' add_special_tokens.
  bool add_special_tokens = true;
  InvalidUtf8 invalid_utf8 = InvalidUtf8::kReject;
};

struct DecodeOptions {
  // Drop added tokens flagged "special" (BOS, EOS, ...), as tokenizers' skip_special_tokens.
  bool skip_special_tokens = false;
};

struct AddedTokenInfo {
  int32_t id = 0;
  std::string content;
  bool special = false;
};

class TokenizerImpl;

// Whether this build has the tokenizer: PCRE2 and ICU were found at configure time. Without them
// every load fails with unsupported, naming the packages.
bool tokenizer_available();

class Tokenizer {
 public:
  // `path` is a tokenizer.json or a directory holding one (and optionally tokenizer_config.json,
  // whose bos_token / eos_token name the BOS / EOS ids).
  static Result<Tokenizer> from_path(const std::string& path);
  // The text of a tokenizer.json; `config_json` is the optional tokenizer_config.json text.
  static Result<Tokenizer> from_json(std::string_view tokenizer_json,
                                     std::string_view config_json = {});

  // Texts over kMaxEncodeBytes are refused (pieces are addressed with 32-bit offsets and
  // pre-tokenizers may copy a piece several times).
  static constexpr size_t kMaxEncodeBytes = size_t{256} << 20;
  Result<std::vector<int32_t>> encode(std::string_view text, const EncodeOptions& options) const;
  Result<std::vector<int32_t>> encode(std::string_view text) const {
    return encode(text, EncodeOptions{});
  }
  // Ids outside the vocabulary are an out_of_range error (tokenizers drops them silently).
  Result<std::string> decode(std::span<const int32_t> ids, const DecodeOptions& options) const;
  Result<std::string> decode(std::span<const int32_t> ids) const {
    return decode(ids, DecodeOptions{});
  }

  // Vocabulary plus added tokens (one past the largest id).
  int32_t vocab_size() const;
  std::optional<int32_t> token_to_id(std::string_view token) const;
  std::optional<std::string> id_to_token(int32_t id) const;
  bool is_special(int32_t id) const;
  const std::vector<AddedTokenInfo>& added_tokens() const;
  // From tokenizer_config.json when given; else the first special token of the post-processor's
  // template (BOS) / none (EOS).
  std::optional<int32_t> bos_id() const;
  std::optional<int32_t> eos_id() const;
  // Whether decode(encode(x)) == x for every valid UTF-8 x without added tokens (byte-level
  // pipelines with no normalizer that changes text).
  bool lossless() const;

  // Copies share the loaded (immutable) tables; encode and decode are safe from many threads.
  Tokenizer(const Tokenizer&);
  Tokenizer& operator=(const Tokenizer&);
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

 private:
  explicit Tokenizer(std::shared_ptr<const TokenizerImpl> impl);
  friend class StreamDecoder;
  std::shared_ptr<const TokenizerImpl> impl_;
};

// Incremental detokenisation: push ids one at a time, get back only whole UTF-8 characters.
// Text is held back while the decoded tail ends in U+FFFD (an incomplete byte sequence); what is
// released is exactly the growth of decode(all ids so far), the algorithm of tokenizers'
// DecodeStream, so the concatenation of the outputs plus flush() equals decode(all ids).
class StreamDecoder {
 public:
  explicit StreamDecoder(const Tokenizer& tokenizer, DecodeOptions options = {});
  // The newly completed text (possibly empty).
  Result<std::string> push(int32_t id);
  // Whatever is still held back (an incomplete sequence decodes to U+FFFD here).
  Result<std::string> flush();

 private:
  std::shared_ptr<const TokenizerImpl> impl_;
  DecodeOptions options_;
  std::vector<int32_t> ids_;
  std::string prefix_;
  size_t prefix_index_ = 0;
};

}  // namespace mlaspec::tokenizer
