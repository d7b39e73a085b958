// The tokenizer's contract beyond the goldens: constructs it cannot reproduce are refused by
// name, invalid UTF-8 is refused or replaced as asked, special tokens and BOS/EOS are found, and
// the streaming decoder never releases part of a character.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "mlaspec/tokenizer/tokenizer.h"
#if MLASPEC_TOKENIZER_AVAILABLE
#include "tokenizer/regex.h"
#include "tokenizer/utf8.h"
#endif
#include "tokenizer_test_data.h"

#if MLASPEC_TOKENIZER_AVAILABLE
namespace mlaspec::tokenizer {
namespace {

using nlohmann::json;

json load_spec(const std::string& name) {
  return json::parse(testing::read_text(testing::tokenizer_data_dir() / name / "tokenizer.json"));
}

Tokenizer load(const std::string& name) {
  auto tok = Tokenizer::from_path((testing::tokenizer_data_dir() / name).string());
  EXPECT_TRUE(tok.ok()) << tok.status().to_string();
  return std::move(*tok);
}

// Loading `spec` fails with `code` and a message containing `needle`.
void expect_refused(const json& spec, StatusCode code, const std::string& needle) {
  auto tok = Tokenizer::from_json(spec.dump());
  ASSERT_FALSE(tok.ok()) << "loaded, expected a refusal mentioning " << needle;
  EXPECT_EQ(tok.status().code(), code) << tok.status().to_string();
  EXPECT_NE(tok.status().message().find(needle), std::string::npos) << tok.status().to_string();
}

TEST(TokenizerLoad, RefusesUnsupportedConstructsByName) {
  json s = load_spec("deepseek_v3_style");
  {
    json t = s;
    t["normalizer"] = {{"type", "BertNormalizer"}};
    expect_refused(t, StatusCode::kUnsupported, "BertNormalizer");
  }
  {
    json t = s;
    t["pre_tokenizer"] = {{"type", "Whitespace"}};
    expect_refused(t, StatusCode::kUnsupported, "Whitespace");
  }
  {
    json t = s;
    t["model"]["type"] = "WordPiece";
    expect_refused(t, StatusCode::kUnsupported, "WordPiece");
  }
  {
    json t = s;
    t["model"]["dropout"] = 0.1;
    expect_refused(t, StatusCode::kUnsupported, "dropout");
  }
  {
    json t = s;
    t["truncation"] = {{"max_length", 8}};
    expect_refused(t, StatusCode::kUnsupported, "truncation");
  }
  {
    json t = s;
    t["decoder"] = {{"type", "WordPiece"}};
    expect_refused(t, StatusCode::kUnsupported, "WordPiece");
  }
  {
    json t = s;
    t["post_processor"] = {{"type", "Unknown"}};
    expect_refused(t, StatusCode::kUnsupported, "Unknown");
  }
  {
    json t = s;
    t["pre_tokenizer"]["pretokenizers"].push_back({{"type", "Digits"}});
    expect_refused(t, StatusCode::kUnsupported, "after ByteLevel");
  }
  {
    json t = s;
    t["pre_tokenizer"]["pretokenizers"][0]["pattern"] = {{"Regex", "\\h+"}};
    expect_refused(t, StatusCode::kUnsupported, "\\h");
  }
  {
    json t = s;
    t["pre_tokenizer"]["pretokenizers"][0]["behavior"] = "Sideways";
    expect_refused(t, StatusCode::kUnsupported, "Sideways");
  }
  {
    json t = s;
    t["added_tokens"][2]["id"] = 3005;
    expect_refused(t, StatusCode::kUnsupported, "tokenizers assigns 3000");
  }
  {
    json t = s;
    t["model"]["merges"].push_back("zzqq yyxx");
    expect_refused(t, StatusCode::kDataLoss, "zzqq");
  }
  expect_refused(json::array({1, 2}), StatusCode::kDataLoss, "JSON object");
  auto garbage = Tokenizer::from_json("{\"model\": ");
  EXPECT_EQ(garbage.status().code(), StatusCode::kDataLoss);
}

TEST(TokenizerLoad, MissingFileIsNotFound) {
  auto tok = Tokenizer::from_path("/nonexistent/tokenizer.json");
  EXPECT_EQ(tok.status().code(), StatusCode::kNotFound);
}

TEST(TokenizerEncode, InvalidUtf8RefusedWithOffsetOrReplaced) {
  const Tokenizer tok = load("bytelevel_gpt2");
  auto refused = tok.encode(
      "ab\xFF"
      "c");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("byte 2"), std::string::npos);
  auto replaced = tok.encode(
      "ab\xFF"
      "c",
      {.invalid_utf8 = InvalidUtf8::kReplace});
  ASSERT_TRUE(replaced.ok());
  EXPECT_EQ(*replaced, *tok.encode("ab\xEF\xBF\xBD"
                                   "c"));
}

TEST(TokenizerSpecial, BosEosAndSpecialLookup) {
  const Tokenizer tok = load("deepseek_v3_style");
  ASSERT_TRUE(tok.bos_id().has_value());
  ASSERT_TRUE(tok.eos_id().has_value());
  EXPECT_EQ(*tok.bos_id(), *tok.token_to_id("<｜begin▁of▁sentence｜>"));
  EXPECT_EQ(*tok.eos_id(), *tok.token_to_id("<｜end▁of▁sentence｜>"));
  EXPECT_TRUE(tok.is_special(*tok.eos_id()));
  EXPECT_EQ(*tok.id_to_token(*tok.eos_id()), "<｜end▁of▁sentence｜>");
  EXPECT_EQ(tok.added_tokens().size(), 3u);
  auto ids = tok.encode("hi<｜end▁of▁sentence｜>");
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(ids->front(), *tok.bos_id());
  EXPECT_EQ(ids->back(), *tok.eos_id());
  EXPECT_EQ(*tok.decode(*ids, {.skip_special_tokens = true}), "hi");
  EXPECT_EQ(*tok.decode(*ids), "<｜begin▁of▁sentence｜>hi<｜end▁of▁sentence｜>");
  auto plain = tok.encode("hi", {.add_special_tokens = false});
  EXPECT_NE(plain->front(), *tok.bos_id());
  // No tokenizer_config.json: BOS from the template, no EOS.
  const Tokenizer meta = load("metaspace_bpe");
  EXPECT_EQ(meta.bos_id(), meta.token_to_id("<s>"));
  const Tokenizer gpt2 = load("bytelevel_gpt2");
  EXPECT_FALSE(gpt2.bos_id().has_value());
  EXPECT_FALSE(gpt2.eos_id().has_value());
}

TEST(TokenizerDecode, UnknownIdIsOutOfRange) {
  const Tokenizer tok = load("bytelevel_gpt2");
  const int32_t ids[] = {tok.vocab_size()};
  EXPECT_EQ(tok.decode(ids).status().code(), StatusCode::kOutOfRange);
  const int32_t neg[] = {-1};
  EXPECT_EQ(tok.decode(neg).status().code(), StatusCode::kOutOfRange);
}

TEST(TokenizerDecode, MetaspaceDecoderDropsTheFirstReplacement) {
  json s = load_spec("metaspace_bpe");
  s["decoder"] = {
      {"type", "Metaspace"}, {"replacement", "▁"}, {"prepend_scheme", "first"}, {"split", true}};
  auto tok = Tokenizer::from_json(s.dump());
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  auto ids = tok->encode("Hello world", {.add_special_tokens = false});
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(*tok->decode(*ids), "Hello world");
}

TEST(StreamDecoder, NeverReleasesHalfACharacter) {
  const Tokenizer tok = load("bytelevel_gpt2");
  const std::string text = "a😀b中👨‍👩‍👧c";
  auto ids = tok.encode(text);
  ASSERT_TRUE(ids.ok());
  ASSERT_GT(ids->size(), 6u);  // the emoji are several byte tokens each
  StreamDecoder stream(tok);
  std::string out;
  int empty_steps = 0;
  for (const int32_t id : *ids) {
    auto piece = stream.push(id);
    ASSERT_TRUE(piece.ok());
    EXPECT_EQ(utf8::first_invalid(*piece), std::string::npos);
    EXPECT_EQ(piece->find(utf8::kReplacement), std::string::npos) << "released a partial char";
    empty_steps += piece->empty();
    out += *piece;
  }
  out += *stream.flush();
  EXPECT_EQ(out, text);
  EXPECT_GT(empty_steps, 0);
  // An id sequence cut inside a character: flush releases U+FFFD, as decode would.
  StreamDecoder cut(tok);
  std::string partial;
  for (size_t i = 0; i + 1 < 3; ++i) partial += *cut.push((*tok.encode("😀"))[i]);
  EXPECT_EQ(partial, "");
  EXPECT_EQ(*cut.flush(), std::string(utf8::kReplacement));
}

TEST(TokenizerEncode, ConcurrentEncodesAgree) {
  // One shared Tokenizer (word cache, per-thread regex state) used from several threads.
  const Tokenizer tok = load("deepseek_v3_style");
  std::vector<std::string> texts;
  for (int i = 0; i < 64; ++i) {
    texts.push_back("doc " + std::to_string(i) + ": the quick brown fox 中文 😀 " +
                    std::string(static_cast<size_t>(i % 7) * 3, ' ') + std::to_string(i * 7919));
  }
  std::vector<std::vector<int32_t>> want;
  for (const auto& t : texts) want.push_back(*tok.encode(t));
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int w = 0; w < 4; ++w) {
    threads.emplace_back([&, w] {
      const Tokenizer copy = tok;
      for (int rep = 0; rep < 20; ++rep) {
        for (size_t i = 0; i < texts.size(); ++i) {
          if (*copy.encode(texts[(i + w) % texts.size()]) != want[(i + w) % texts.size()]) {
            ++mismatches[w];
          }
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int w = 0; w < 4; ++w) EXPECT_EQ(mismatches[w], 0) << "thread " << w;
}

TEST(Utf8, LossyFollowsMaximalSubparts) {
  // Python: b"...".decode("utf-8", errors="replace").
  const std::string r(utf8::kReplacement);
  EXPECT_EQ(utf8::lossy("\xED\xA0\x80"), r + r + r);
  EXPECT_EQ(utf8::lossy("\xF0\x9F\x98"), r);
  EXPECT_EQ(utf8::lossy("\xC0\xAF"), r + r);
  EXPECT_EQ(utf8::lossy("\xF4\x90\x80\x80"), r + r + r + r);
  EXPECT_EQ(utf8::lossy("a\xE4\xB8z"), "a" + r + "z");
  EXPECT_EQ(utf8::lossy("ok é"), "ok é");
}

TEST(Regex, OnigurumaClassesTranslated) {
  EXPECT_EQ(*translate_oniguruma(R"(\s+(?!\S))"), R"(\p{White_Space}+(?!\P{White_Space}))");
  EXPECT_EQ(*translate_oniguruma(R"([^\s\p{L}])"), R"([^\p{White_Space}\p{L}])");
  EXPECT_EQ(*translate_oniguruma(R"(\w+)"), R"([\p{L}\p{M}\p{N}\p{Pc}]+)");
  EXPECT_EQ(*translate_oniguruma(R"(\\s)"), R"(\\s)");
  EXPECT_EQ(*translate_oniguruma(R"(\u3040)"), R"(\x{3040})");
  EXPECT_FALSE(translate_oniguruma("[a-z&&[^aeiou]]").ok());
  EXPECT_FALSE(translate_oniguruma("[[:alpha:]]").ok());
  // \s is White_Space as in Oniguruma: U+0085 is, U+180E is not (PCRE2's own \s takes it).
  auto re = Regex::compile(R"(\s)", Regex::Syntax::kOniguruma);
  ASSERT_TRUE(re.ok());
  std::vector<Span> m;
  ASSERT_TRUE((*re)->find_all("\xE1\xA0\x8E \xC2\x85", m).ok());
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].begin, 3u);
}

}  // namespace
}  // namespace mlaspec::tokenizer

#else
TEST(TokenizerLoad, SkippedWithoutPcre2AndIcu) {
  GTEST_SKIP() << "mlaspec was built without PCRE2 or ICU: the tokenizer is a stub";
}
#endif
