#include "tokenizer/added_tokens.h"

#include <unicode/uchar.h>

#include <algorithm>

#include "tokenizer/utf8.h"

namespace mlaspec::tokenizer {
namespace {

// Rust regex's Unicode \w.
bool is_word_char(char32_t c) {
  const auto u = static_cast<UChar32>(c);
  if (u_hasBinaryProperty(u, UCHAR_ALPHABETIC) || u_hasBinaryProperty(u, UCHAR_JOIN_CONTROL)) {
    return true;
  }
  const int gc = u_charType(u);
  return (U_MASK(gc) & (U_GC_M_MASK | U_GC_ND_MASK | U_GC_PC_MASK)) != 0;
}

bool is_space(char32_t c) {
  return u_isUWhiteSpace(static_cast<UChar32>(c));
}

// Start of the character ending at `end` (> 0).
size_t char_before(std::string_view s, size_t end) {
  size_t i = end - 1;
  while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) --i;
  return i;
}

}  // namespace

void AddedTokenMatcher::add(const AddedToken* token) {
  if (token->pattern.empty()) return;
  tokens_.push_back(token);
  auto& bucket = by_first_byte_[static_cast<unsigned char>(token->pattern[0])];
  bucket.push_back(token);
  std::stable_sort(bucket.begin(), bucket.end(), [](const AddedToken* a, const AddedToken* b) {
    return a->pattern.size() > b->pattern.size();
  });
}

void AddedTokenMatcher::split(std::string_view text, uint32_t begin, uint32_t end,
                              std::vector<Segment>& out) const {
  const std::string_view s = text.substr(begin, end - begin);
  size_t start_offset = 0;
  size_t pos = 0;
  while (pos < s.size()) {
    const AddedToken* hit = nullptr;
    for (const AddedToken* t : by_first_byte_[static_cast<unsigned char>(s[pos])]) {
      if (s.compare(pos, t->pattern.size(), t->pattern) == 0) {
        hit = t;
        break;
      }
    }
    if (!hit) {
      ++pos;
      continue;
    }
    size_t start = pos, stop = pos + hit->pattern.size();
    // The automaton moves past a match even when the checks below discard it.
    pos = stop;
    if (hit->single_word) {
      const bool start_space =
          start == 0 || !is_word_char(utf8::decode_at(s, char_before(s, start)));
      const bool stop_space = stop == s.size() || !is_word_char(utf8::decode_at(s, stop));
      if (!start_space || !stop_space) continue;
    }
    if (hit->lstrip) {
      size_t b = start;
      while (b > 0) {
        const size_t c = char_before(s, b);
        if (!is_space(utf8::decode_at(s, c))) break;
        b = c;
      }
      start = std::max(b, start_offset);
    }
    if (hit->rstrip) {
      while (stop < s.size() && is_space(utf8::decode_at(s, stop))) {
        stop += utf8::char_length(static_cast<unsigned char>(s[stop]));
      }
    }
    if (start_offset < start) {
      out.push_back(
          {static_cast<uint32_t>(begin + start_offset), static_cast<uint32_t>(begin + start), -1});
    }
    out.push_back(
        {static_cast<uint32_t>(begin + start), static_cast<uint32_t>(begin + stop), hit->id});
    start_offset = stop;
  }
  if (start_offset < s.size()) {
    out.push_back({static_cast<uint32_t>(begin + start_offset), end, -1});
  }
}

}  // namespace mlaspec::tokenizer
