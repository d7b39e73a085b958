// A compiled regular expression of a tokenizer.json (PCRE2 with UTF + UCP, JIT when available).
//
// tokenizers compiles these patterns with Oniguruma (Ruby syntax); the translation below makes
// PCRE2 mean the same: \s / \S are the White_Space property (PCRE2's \s also takes U+180E), \w is
// Letter | Mark | Number | Connector_Punctuation, \uHHHH is \x{HHHH}, ^ and $ are line anchors.
// Constructs whose meaning differs and cannot be translated (Oniguruma's \h hex digits, nested
// classes and && intersections, POSIX brackets, \W inside a class) are refused by name.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mlaspec/core/status.h"

namespace mlaspec::tokenizer {

struct Span {
  uint32_t begin = 0;
  uint32_t end = 0;
};

class Regex {
 public:
  enum class Syntax { kOniguruma, kLiteral };
  static Result<std::shared_ptr<const Regex>> compile(std::string_view pattern, Syntax syntax);

  // The matches of Oniguruma's find_iter over `text` (valid UTF-8), appended to `out`: leftmost
  // matches, non-overlapping, an empty match right after the previous match skipped by one
  // character. Fails only when PCRE2 gives up (match limit), naming the pattern.
  Status find_all(std::string_view text, std::vector<Span>& out) const;
  // Replaces every match of find_all in `text` with `content` (the Replace normalizer and
  // decoder); text without a match is left as it is.
  Status replace_all(std::string& text, std::string_view content) const;

  const std::string& pattern() const { return pattern_; }
  ~Regex();

 private:
  Regex() = default;
  std::string pattern_;
  void* code_ = nullptr;  // pcre2_code_8*
};

// The PCRE2 text of an Oniguruma pattern (exposed for tests).
Result<std::string> translate_oniguruma(std::string_view pattern);

}  // namespace mlaspec::tokenizer
