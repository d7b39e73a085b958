// UTF-8 helpers with the exact rules of Rust's str / String::from_utf8_lossy, which tokenizers
// uses: a sequence is valid per RFC 3629 (no surrogates, no overlongs, at most U+10FFFF), and
// each maximal invalid subpart becomes one U+FFFD.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mlaspec::tokenizer::utf8 {

inline constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// Length of the valid sequence starting at s[i], or 0 when s[i..] starts an invalid subpart.
// On 0, *invalid_len is the length of that maximal invalid subpart (>= 1).
size_t valid_sequence_length(std::string_view s, size_t i, size_t* invalid_len);

// Offset of the first invalid byte, or npos when `s` is valid UTF-8.
size_t first_invalid(std::string_view s);

// Rust's String::from_utf8_lossy.
std::string lossy(std::string_view s);

// Length of the (valid) character starting with lead byte `c`.
inline size_t char_length(unsigned char c) {
  return c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
}

// Code point of the valid character at s[i].
char32_t decode_at(std::string_view s, size_t i);

void append(std::string& out, char32_t cp);

}  // namespace mlaspec::tokenizer::utf8
