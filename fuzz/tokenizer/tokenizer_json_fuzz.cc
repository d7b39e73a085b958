// Fuzz target: tokenizer.json loading. Any bytes must load or fail with a Status, never crash or
// hang; a file that loads must then encode, decode and stream-decode a few texts without crashing.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "mlaspec/tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mlaspec::tokenizer;
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  auto tok = Tokenizer::from_json(json);
  if (!tok.ok()) return 0;
  static constexpr std::string_view kTexts[] = {"Hello world 123", "  a\n\n b\t",
                                                "中文 😀👨‍👩‍👧 e\xCC\x81",
                                                "<s>x</s><unk>", "\xFF\xC3"};
  for (const std::string_view text : kTexts) {
    auto ids =
        tok->encode(text, {.add_special_tokens = true, .invalid_utf8 = InvalidUtf8::kReplace});
    if (!ids.ok()) continue;
    (void)tok->decode(*ids);
    (void)tok->decode(*ids, {.skip_special_tokens = true});
    StreamDecoder stream(*tok);
    for (const int32_t id : *ids) (void)stream.push(id);
    (void)stream.flush();
  }
  for (int32_t id = -1; id < 8; ++id) {
    (void)tok->id_to_token(id);
    const int32_t one[] = {id, tok->vocab_size() - 1, tok->vocab_size()};
    (void)tok->decode(one);
  }
  return 0;
}
