// The shipped pair (models/: the trained MLA target and its DFlash drafter) through the engine on
// held-out problems: the small CPU evaluation CI runs. Greedy output with the drafter must equal
// greedy output without it token for token (so the accuracy is the same), the answers must be
// right at the rate the training run measured with transformers, and the drafter's accept length
// must reach the shipped bar. A regression in any layer under the engine (tokenizer, model
// forward, DFlash network, acceptor, commit) shows up here on a real, trained model.
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mlaspec/model/dflash.h"
#include "mlaspec/model/model.h"
#include "mlaspec/spec/dflash_drafter.h"
#include "mlaspec/spec/dspark_drafter.h"
#include "mlaspec/spec/engine.h"
#include "mlaspec/tokenizer/tokenizer.h"

namespace mlaspec::spec {
namespace {

const std::string kModels = std::string(MLASPEC_SOURCE_DIR) + "/models";
constexpr int kProblems = 24;      // held-out problems run here (of 500)
constexpr int kBatch = 8;          // requests per engine step
constexpr int kMaxNewTokens = 96;  // the longest solution of the split is under 80 tokens

struct Problem {
  std::string prompt;  // the chat template's rendering (transformers' apply_chat_template)
  int64_t answer = 0;
};

std::vector<Problem> heldout(int n) {
  std::ifstream in(kModels + "/eval/heldout.jsonl");
  std::vector<Problem> out;
  std::string line;
  while (static_cast<int>(out.size()) < n && std::getline(in, line)) {
    const nlohmann::json j = nlohmann::json::parse(line);
    out.push_back({j.at("prompt").get<std::string>(), j.at("answer").get<int64_t>()});
  }
  return out;
}

// The `#### N` answer of a solution, as python/train/tasks.py extracts it; nullopt when absent.
std::optional<int64_t> final_answer(const std::string& text) {
  const size_t at = text.rfind("####");
  if (at == std::string::npos) return std::nullopt;
  size_t i = at + 4;
  while (i < text.size() && text[i] == ' ') ++i;
  size_t j = i;
  if (j < text.size() && text[j] == '-') ++j;
  while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
  if (j == i || (j == i + 1 && text[i] == '-')) return std::nullopt;
  return std::stoll(text.substr(i, j - i));
}

struct RunResult {
  std::vector<std::vector<int32_t>> outputs;
  SpecStats stats;
};

enum class Draft { kNone, kDFlash, kDSparkFixed, kDSparkAdaptive };

RunResult run(const tokenizer::Tokenizer& tok, const std::vector<Problem>& problems, Draft draft) {
  const bool dflash = draft == Draft::kDFlash;
  Result<model::Model> target = model::Model::load(kModels + "/target");
  EXPECT_TRUE(target.ok()) << target.status().to_string();
  EngineConfig config;
  config.max_requests = kBatch;
  config.max_tokens_per_request = 256;
  std::unique_ptr<Drafter> drafter;
  if (dflash) {
    Result<model::DFlashNetwork> net = model::DFlashNetwork::load(kModels + "/drafter", *target);
    EXPECT_TRUE(net.ok()) << net.status().to_string();
    config.num_draft = net->num_draft();
    DFlashDrafterConfig dconfig;
    dconfig.max_requests = kBatch;
    dconfig.max_tokens_per_request = config.max_tokens_per_request;
    Result<std::unique_ptr<DFlashDrafter>> d = DFlashDrafter::create(std::move(*net), dconfig);
    EXPECT_TRUE(d.ok()) << d.status().to_string();
    drafter = std::move(*d);
  } else if (draft == Draft::kNone) {
    config.num_draft = 0;
  } else {
    Result<model::DSparkNetwork> net = model::DSparkNetwork::load(kModels + "/dspark", *target);
    EXPECT_TRUE(net.ok()) << net.status().to_string();
    config.num_draft = net->gamma();
    DSparkDrafterConfig dconfig;
    dconfig.backbone.max_requests = kBatch;
    dconfig.backbone.max_tokens_per_request = config.max_tokens_per_request;
    dconfig.width.mode = draft == Draft::kDSparkAdaptive ? VerifyWidthPolicy::Mode::kAdaptive
                                                         : VerifyWidthPolicy::Mode::kFixed;
    Result<std::unique_ptr<DSparkDrafter>> d = DSparkDrafter::create(std::move(*net), dconfig);
    EXPECT_TRUE(d.ok()) << d.status().to_string();
    drafter = std::move(*d);
  }
  Result<Engine> engine = Engine::create(std::move(*target), std::move(drafter), config);
  EXPECT_TRUE(engine.ok()) << engine.status().to_string();

  RunResult result;
  result.outputs.resize(problems.size());
  for (size_t first = 0; first < problems.size(); first += kBatch) {
    std::vector<std::pair<size_t, RequestId>> ids;
    for (size_t p = first; p < std::min(problems.size(), first + kBatch); ++p) {
      // The prompt already holds the chat template's BOS: no special tokens added again.
      Result<std::vector<int32_t>> prompt =
          tok.encode(problems[p].prompt, {.add_special_tokens = false});
      EXPECT_TRUE(prompt.ok()) << prompt.status().to_string();
      GenerationRequest request;
      request.prompt = *prompt;
      request.max_new_tokens = kMaxNewTokens;
      request.stop_token_ids.push_back(*tok.eos_id());
      Result<RequestId> id = engine->add_request(std::move(request));
      EXPECT_TRUE(id.ok()) << id.status().to_string();
      EXPECT_TRUE(engine->prefill(*id).ok());
      ids.emplace_back(p, *id);
    }
    while (engine->num_running() > 0) {
      Result<StepOutput> step = engine->step();
      EXPECT_TRUE(step.ok()) << step.status().to_string();
      for (const RequestEvent& ev : step->events)
        EXPECT_TRUE(ev.error.ok()) << ev.error.to_string();
    }
    for (const auto& [p, id] : ids) {
      EXPECT_EQ(engine->state(id), RequestState::kFinished);
      const auto out = engine->output(id);
      result.outputs[p].assign(out.begin(), out.end());
      EXPECT_TRUE(engine->release(id).ok());
    }
  }
  result.stats = engine->stats();
  return result;
}

TEST(ShippedModels, DFlashIsLosslessAccurateAndAcceptsLongBlocks) {
  Result<tokenizer::Tokenizer> tok = tokenizer::Tokenizer::from_path(kModels + "/target");
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  ASSERT_TRUE(tok->eos_id().has_value());
  const std::vector<Problem> problems = heldout(kProblems);
  ASSERT_EQ(static_cast<int>(problems.size()), kProblems);

  const RunResult plain = run(*tok, problems, Draft::kNone);
  const RunResult spec = run(*tok, problems, Draft::kDFlash);

  int correct = 0;
  for (size_t p = 0; p < problems.size(); ++p) {
    // Lossless greedy: the same tokens with and without the drafter.
    EXPECT_EQ(spec.outputs[p], plain.outputs[p]) << "problem " << p;
    Result<std::string> text = tok->decode(plain.outputs[p], {.skip_special_tokens = true});
    ASSERT_TRUE(text.ok());
    correct += final_answer(*text) == problems[p].answer;
  }
  const double accuracy = static_cast<double>(correct) / kProblems;
  const double tau = spec.stats.accept_length();
  std::printf(
      "shipped pair on %d held-out problems: accuracy %.3f (with and without DFlash), "
      "tau %.2f, %s\n",
      kProblems, accuracy, tau, format_summary(spec.stats, "dflash").c_str());
  // The training run measured 0.938 on all 500 with transformers (bf16); mlaspec's CPU forward
  // (f32, bf16 at the attention op) measured 0.833 on these 24. The bar leaves room for another
  // BLAS's rounding flipping a close call or two; a broken layer drops far below it.
  EXPECT_GE(accuracy, 0.70);
  // The shipped bar (sglang's is 2.0): at least 3 tokens per verify step of 8.
  EXPECT_GE(tau, 3.0);
}

// models/dspark: the shipped DFlash backbone with heads trained by python/dspark/train_heads.py.
// Greedy output equals plain greedy with fixed and adaptive verify widths; the fixed width keeps
// the shipped bar.
TEST(ShippedModels, DSparkIsLosslessWithFixedAndAdaptiveWidths) {
  Result<tokenizer::Tokenizer> tok = tokenizer::Tokenizer::from_path(kModels + "/target");
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  const std::vector<Problem> problems = heldout(kProblems);
  const RunResult plain = run(*tok, problems, Draft::kNone);
  for (const Draft d : {Draft::kDSparkFixed, Draft::kDSparkAdaptive}) {
    const bool adaptive = d == Draft::kDSparkAdaptive;
    SCOPED_TRACE(adaptive ? "adaptive" : "fixed");
    const RunResult spec = run(*tok, problems, d);
    for (size_t p = 0; p < problems.size(); ++p) {
      EXPECT_EQ(spec.outputs[p], plain.outputs[p]) << "problem " << p;
    }
    std::printf("shipped dspark (%s) on %d held-out problems: tau %.2f, %s\n",
                adaptive ? "adaptive" : "fixed", kProblems, spec.stats.accept_length(),
                format_summary(spec.stats, "dspark").c_str());
    if (!adaptive) {
      EXPECT_GE(spec.stats.accept_length(), 3.0);
    }
  }
}

}  // namespace
}  // namespace mlaspec::spec
