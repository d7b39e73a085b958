#include "tokenizer/vocab.h"

#include "tokenizer/utf8.h"

namespace mlaspec::tokenizer {

ByteTable::ByteTable() {
  char_to_byte.fill(-1);
  char32_t next = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174);
    const char32_t c = printable ? static_cast<char32_t>(b) : next++;
    byte_to_char[b] = c;
    utf8::append(byte_to_utf8[b], c);
    char_to_byte[c] = static_cast<int16_t>(b);
  }
}

const ByteTable& byte_table() {
  static const ByteTable table;
  return table;
}

}  // namespace mlaspec::tokenizer
