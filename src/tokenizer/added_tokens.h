// Added tokens of tokenizer.json ("added_tokens"): matched in the text before pre-tokenization,
// leftmost-longest, with single_word / lstrip / rstrip honoured as tokenizers does (Rust regex's
// \w and \s: Alphabetic | Mark | Nd | Pc | Join_Control, and White_Space). Tokens with
// normalized = false match the raw text, the others the normalized text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mlaspec/core/status.h"

namespace mlaspec::tokenizer {

struct AddedToken {
  int32_t id = 0;
  std::string content;
  std::string pattern;  // what is matched: content, or its normalized form
  bool single_word = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = true;
  bool special = false;
};

// A segment of the input: an added token's id, or text to pre-tokenize (id < 0).
struct Segment {
  uint32_t begin = 0;
  uint32_t end = 0;
  int32_t id = -1;
};

// Leftmost-longest matcher over a set of added tokens.
class AddedTokenMatcher {
 public:
  void add(const AddedToken* token);
  bool empty() const { return tokens_.empty(); }
  // tokenizers' AddedVocabulary::find_matches over text[begin, end): segments covering it.
  void split(std::string_view text, uint32_t begin, uint32_t end, std::vector<Segment>& out) const;

 private:
  std::vector<const AddedToken*> tokens_;
  // Tokens by first byte, longest first.
  std::vector<std::vector<const AddedToken*>> by_first_byte_ =
      std::vector<std::vector<const AddedToken*>>(256);
};

}  // namespace mlaspec::tokenizer
