// Goldens from the `tokenizers` Python package (python/tokenizer/make_tokenizer_goldens.py): for
// every committed tokenizer file and corpus entry, the same ids, the same decode with and without
// special tokens, decode(encode(x)) == x where the pipeline is lossless, and a streamed decode
// equal to the whole one.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "mlaspec/tokenizer/tokenizer.h"
#include "tokenizer_test_data.h"

#if MLASPEC_TOKENIZER_AVAILABLE
namespace mlaspec::tokenizer {
namespace {

using mlaspec::testing::from_hex;
using mlaspec::testing::read_text;
using mlaspec::testing::tokenizer_data_dir;

class Golden : public ::testing::TestWithParam<std::string> {};

std::string show(const std::vector<int32_t>& ids) {
  std::string s;
  for (size_t i = 0; i < ids.size() && i < 40; ++i) s += std::to_string(ids[i]) + " ";
  return s;
}

TEST_P(Golden, MatchesTokenizers) {
  const auto dir = tokenizer_data_dir() / GetParam();
  auto tok = Tokenizer::from_path(dir.string());
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  const auto goldens = nlohmann::json::parse(read_text(dir / "goldens.json"));
  int cases = 0, roundtrips = 0;
  for (const auto& c : goldens["cases"]) {
    const std::string name = c["name"];
    const std::string raw = from_hex(c["hex"]);
    const auto want = c["ids"].get<std::vector<int32_t>>();
    auto ids =
        tok->encode(raw, {.add_special_tokens = true, .invalid_utf8 = InvalidUtf8::kReplace});
    ASSERT_TRUE(ids.ok()) << name << ": " << ids.status().to_string();
    EXPECT_EQ(*ids, want) << GetParam() << " / " << name << "\n  mlaspec:    " << show(*ids)
                          << "\n  tokenizers: " << show(want);
    auto text = tok->decode(want);
    ASSERT_TRUE(text.ok()) << text.status().to_string();
    EXPECT_EQ(*text, c["decode"].get<std::string>()) << GetParam() << " / " << name;
    auto skipped = tok->decode(want, {.skip_special_tokens = true});
    ASSERT_TRUE(skipped.ok());
    EXPECT_EQ(*skipped, c.value("decode_skip", c["decode"].get<std::string>()))
        << GetParam() << " / " << name;

    // Streaming: the pieces, each valid UTF-8, add up to the whole decode.
    StreamDecoder stream(*tok);
    std::string streamed;
    for (const int32_t id : want) {
      auto piece = stream.push(id);
      ASSERT_TRUE(piece.ok()) << piece.status().to_string();
      streamed += *piece;
    }
    auto rest = stream.flush();
    ASSERT_TRUE(rest.ok());
    streamed += *rest;
    EXPECT_EQ(streamed, *text) << GetParam() << " / " << name << " (streamed)";

    const bool special = name.rfind("special", 0) == 0 || name == "nonspecial_added";
    if (tok->lossless() && !special) {
      auto plain = tok->encode(raw, {.add_special_tokens = false});
      if (plain.ok()) {  // invalid UTF-8 is refused here: nothing to round-trip
        auto back = tok->decode(*plain);
        ASSERT_TRUE(back.ok());
        EXPECT_EQ(*back, raw) << GetParam() << " / " << name << " (round trip)";
        ++roundtrips;
      }
    }
    ++cases;
  }
  EXPECT_GT(cases, 40);
  RecordProperty("cases", cases);
  RecordProperty("roundtrips", roundtrips);
}

INSTANTIATE_TEST_SUITE_P(Files, Golden, ::testing::ValuesIn(mlaspec::testing::tokenizer_names()),
                         [](const auto& info) { return info.param; });

TEST(GoldenData, AllFilesPresent) {
  ASSERT_FALSE(tokenizer_data_dir().empty()) << "tests/data/tokenizers not found";
  EXPECT_GE(mlaspec::testing::tokenizer_names().size(), 5u);
}

}  // namespace
}  // namespace mlaspec::tokenizer

#else
TEST(GoldenData, SkippedWithoutPcre2AndIcu) {
  GTEST_SKIP() << "mlaspec was built without PCRE2 or ICU: the tokenizer is a stub";
}
#endif
