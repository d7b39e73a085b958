#include "mlaspec/tokenizer/tokenizer.h"

#include "tokenizer/tokenizer_impl.h"
#include "tokenizer/utf8.h"

namespace mlaspec::tokenizer {
namespace {

bool ends_with_replacement(const std::string& s) {
  return s.size() >= utf8::kReplacement.size() &&
         s.compare(s.size() - utf8::kReplacement.size(), std::string::npos, utf8::kReplacement) ==
             0;
}

}  // namespace

StreamDecoder::StreamDecoder(const Tokenizer& tokenizer, DecodeOptions options)
    : impl_(tokenizer.impl_), options_(options) {}

// tokenizers' step_decode_stream: decode a short window of ids, release the growth past the
// window's already-released prefix once it no longer ends in U+FFFD, then slide the window.
Result<std::string> StreamDecoder::push(int32_t id) {
  if (prefix_.empty() && !ids_.empty()) {
    auto p = impl_->decode(ids_, options_);
    if (!p.ok()) return p.status();
    if (!ends_with_replacement(*p)) {
      prefix_ = std::move(*p);
      prefix_index_ = ids_.size();
    }
  }
  ids_.push_back(id);
  auto text = impl_->decode(ids_, options_);
  if (!text.ok()) {
    ids_.pop_back();
    return text.status();
  }
  if (text->size() <= prefix_.size() || ends_with_replacement(*text)) return std::string();
  if (text->compare(0, prefix_.size(), prefix_) != 0) {
    return internal_error("stream decode: the text of id " + std::to_string(id) +
                          " rewrites text already released");
  }
  std::string fresh = text->substr(prefix_.size());
  const size_t new_prefix_index = ids_.size() - prefix_index_;
  ids_.erase(ids_.begin(), ids_.begin() + static_cast<long>(prefix_index_));
  auto p = impl_->decode(ids_, options_);
  if (!p.ok()) return p.status();
  prefix_ = std::move(*p);
  prefix_index_ = new_prefix_index;
  return fresh;
}

Result<std::string> StreamDecoder::flush() {
  auto text = impl_->decode(ids_, options_);
  if (!text.ok()) return text.status();
  std::string rest;
  if (text->size() > prefix_.size() && text->compare(0, prefix_.size(), prefix_) == 0) {
    rest = text->substr(prefix_.size());
  }
  ids_.clear();
  prefix_.clear();
  prefix_index_ = 0;
  return rest;
}

}  // namespace mlaspec::tokenizer
