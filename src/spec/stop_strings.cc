#include "mlaspec/spec/stop_strings.h"

#include <algorithm>

namespace mlaspec::spec {

StopStringFilter::StopStringFilter(std::vector<std::string> stops) {
  for (std::string& s : stops) {
    if (s.empty()) continue;
    hold_ = std::max(hold_, s.size() - 1);
    stops_.push_back(std::move(s));
  }
}

bool StopStringFilter::add(const std::string& piece) {
  if (stopped_) return true;
  // A stop string can only end in the new piece, so the search starts where the held-back tail
  // begins.
  const size_t from = text_.size() > hold_ ? text_.size() - hold_ : 0;
  text_ += piece;
  size_t cut = std::string::npos;
  for (const std::string& s : stops_) {
    const size_t at = text_.find(s, from);
    if (at != std::string::npos) cut = std::min(cut, at);
  }
  if (cut != std::string::npos) {
    text_.resize(cut);
    release(text_.size());
    stopped_ = true;
    return true;
  }
  size_t safe = text_.size() > hold_ ? text_.size() - hold_ : 0;
  while (safe > released_ && safe < text_.size() &&
         (static_cast<unsigned char>(text_[safe]) & 0xC0) == 0x80) {
    --safe;
  }
  release(std::max(safe, released_));
  return false;
}

void StopStringFilter::finish() {
  release(text_.size());
}

std::string StopStringFilter::take() {
  std::string out = text_.substr(taken_, released_ - taken_);
  taken_ = released_;
  return out;
}

void StopStringFilter::release(size_t upto) {
  released_ = std::max(released_, upto);
}

}  // namespace mlaspec::spec
