// Fuzz target: encode of arbitrary bytes with the committed tokenizer files. Byte 0 picks the
// file, byte 1 the options, the rest is the text. Checks beyond "no crash": decode succeeds on
// the ids, the streamed decode equals the whole decode, and a lossless tokenizer round-trips
// valid UTF-8 without added-token text.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mlaspec/tokenizer/tokenizer.h"

namespace {

using namespace mlaspec::tokenizer;

const std::vector<std::unique_ptr<Tokenizer>>& tokenizers() {
  static const auto all = [] {
    std::vector<std::unique_ptr<Tokenizer>> out;
    std::vector<std::filesystem::path> dirs;
    for (const auto& e : std::filesystem::directory_iterator(MLASPEC_TOKENIZER_DATA)) {
      if (e.is_directory()) dirs.push_back(e.path());
    }
    std::sort(dirs.begin(), dirs.end());
    for (const auto& d : dirs) {
      auto tok = Tokenizer::from_path(d.string());
      if (!tok.ok()) {
        std::fprintf(stderr, "%s\n", tok.status().to_string().c_str());
        std::abort();
      }
      out.push_back(std::make_unique<Tokenizer>(std::move(*tok)));
    }
    if (out.empty()) std::abort();
    return out;
  }();
  return all;
}

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "tokenizer_encode: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2 || !tokenizer_available()) return 0;
  const auto& all = tokenizers();
  const Tokenizer& tok = *all[data[0] % all.size()];
  const bool special = data[1] & 1;
  const bool replace = data[1] & 2;
  const std::string_view text(reinterpret_cast<const char*>(data + 2), size - 2);
  auto ids =
      tok.encode(text, {.add_special_tokens = special,
                        .invalid_utf8 = replace ? InvalidUtf8::kReplace : InvalidUtf8::kReject});
  if (!ids.ok()) return 0;  // invalid UTF-8 under kReject
  auto whole = tok.decode(*ids);
  check(whole.ok(), "decode of encode's ids failed");
  StreamDecoder stream(tok);
  std::string streamed;
  for (const int32_t id : *ids) {
    auto piece = stream.push(id);
    check(piece.ok(), "stream push failed");
    streamed += *piece;
  }
  auto rest = stream.flush();
  check(rest.ok(), "stream flush failed");
  check(streamed + *rest == *whole, "streamed decode differs from decode");
  if (tok.lossless() && !replace && !special && text.find('<') == std::string_view::npos) {
    check(*whole == text, "lossless tokenizer does not round-trip");
  }
  return 0;
}
