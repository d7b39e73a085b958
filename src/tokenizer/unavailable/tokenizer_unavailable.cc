// Built only when PCRE2 or ICU is missing at configure time (e.g. a lent GPU machine without the
// -dev packages): the rest of mlaspec builds, and loading a tokenizer says what to install.
#include "mlaspec/tokenizer/tokenizer.h"

namespace mlaspec::tokenizer {
namespace {

Status unavailable() {
  return unsupported(
      "the tokenizer is unavailable: mlaspec was built without PCRE2 or ICU (apt-get install "
      "libpcre2-dev libicu-dev, then reconfigure)");
}

}  // namespace

bool tokenizer_available() {
  return false;
}

Result<Tokenizer> Tokenizer::from_path(const std::string&) {
  return unavailable();
}
Result<Tokenizer> Tokenizer::from_json(std::string_view, std::string_view) {
  return unavailable();
}
Tokenizer::Tokenizer(std::shared_ptr<const TokenizerImpl> impl) : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(const Tokenizer&) = default;
Tokenizer& Tokenizer::operator=(const Tokenizer&) = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

// No Tokenizer can exist in this build; these only satisfy the linker.
Result<std::vector<int32_t>> Tokenizer::encode(std::string_view, const EncodeOptions&) const {
  return unavailable();
}
Result<std::string> Tokenizer::decode(std::span<const int32_t>, const DecodeOptions&) const {
  return unavailable();
}
int32_t Tokenizer::vocab_size() const {
  return 0;
}
std::optional<int32_t> Tokenizer::token_to_id(std::string_view) const {
  return std::nullopt;
}
std::optional<std::string> Tokenizer::id_to_token(int32_t) const {
  return std::nullopt;
}
bool Tokenizer::is_special(int32_t) const {
  return false;
}
const std::vector<AddedTokenInfo>& Tokenizer::added_tokens() const {
  static const std::vector<AddedTokenInfo> none;
  return none;
}
std::optional<int32_t> Tokenizer::bos_id() const {
  return std::nullopt;
}
std::optional<int32_t> Tokenizer::eos_id() const {
  return std::nullopt;
}
bool Tokenizer::lossless() const {
  return false;
}

StreamDecoder::StreamDecoder(const Tokenizer& tokenizer, DecodeOptions options)
    : impl_(tokenizer.impl_), options_(options) {}
Result<std::string> StreamDecoder::push(int32_t) {
  return unavailable();
}
Result<std::string> StreamDecoder::flush() {
  return unavailable();
}

}  // namespace mlaspec::tokenizer
