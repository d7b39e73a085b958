// From text to text against transformers: the golden checkpoint's prompts, encoded by mlaspec's
// tokenizer, generated greedily by the engine (no drafter, n-gram, an always-right oracle, in
// one batch) and decoded, equal transformers' generate(do_sample=False) ids and text.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "engine_test_util.h"
#include "mlaspec/tokenizer/tokenizer.h"

namespace mlaspec::spec {
namespace {

TEST(GenerateGolden, EngineAndTokenizerEqualTransformersGenerate) {
  const std::string name = "v3_generate_bytelevel";
  std::ifstream in(testing::model_dir(name) / "goldens.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json golden = nlohmann::json::parse(in);
  Result<tokenizer::Tokenizer> tok = tokenizer::Tokenizer::from_path(testing::model_dir(name));
  ASSERT_TRUE(tok.ok()) << tok.status().message();
  const int32_t new_tokens = golden["max_new_tokens"].get<int32_t>();
  std::vector<std::vector<int32_t>> prompts, want;
  std::vector<std::string> texts;
  for (const auto& p : golden["prompts"]) {
    Result<std::vector<int32_t>> ids = tok->encode(p["text"].get<std::string>());
    ASSERT_TRUE(ids.ok());
    EXPECT_EQ(*ids, p["prompt_ids"].get<std::vector<int32_t>>());
    prompts.push_back(*ids);
    want.push_back(p["ids"].get<std::vector<int32_t>>());
    texts.push_back(p["output_text"].get<std::string>());
  }
  ASSERT_GE(prompts.size(), 4u);
  for (const std::string drafter : {"none", "ngram", "oracle"}) {
    SCOPED_TRACE(drafter);
    std::unique_ptr<Drafter> d;
    if (drafter == "ngram") d = std::make_unique<NgramDrafter>(*NgramDrafter::create());
    if (drafter == "oracle") {
      d = std::make_unique<testing::OracleDrafter>(testing::answers(prompts, want), false, 3008);
    }
    Engine engine = testing::make_engine(name, std::move(d));
    const auto got = testing::run_engine(engine, prompts, {}, new_tokens);
    for (size_t i = 0; i < prompts.size(); ++i) {
      EXPECT_EQ(got.outputs[i], want[i]) << "prompt " << i;
      Result<std::string> text = tok->decode(got.outputs[i]);
      ASSERT_TRUE(text.ok());
      EXPECT_EQ(*text, texts[i]);
      tokenizer::StreamDecoder stream(*tok);
      std::string streamed;
      for (const int32_t t : got.outputs[i]) streamed += *stream.push(t);
      streamed += *stream.flush();
      EXPECT_EQ(streamed, texts[i]);
    }
  }
}

}  // namespace
}  // namespace mlaspec::spec
