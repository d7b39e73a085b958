// String -> id map with string_view lookup, and the GPT-2 byte <-> character table.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

namespace mlaspec::tokenizer {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using TokenMap = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;

// GPT-2's bytes_to_unicode: printable bytes map to themselves, the rest to U+0100 upwards, so
// every byte is one visible character.
struct ByteTable {
  std::array<char32_t, 256> byte_to_char{};
  std::array<std::string, 256> byte_to_utf8{};
  // Character -> byte, -1 for characters outside the table (indexed by code point < 512).
  std::array<int16_t, 512> char_to_byte{};
  ByteTable();
};
const ByteTable& byte_table();

}  // namespace mlaspec::tokenizer
