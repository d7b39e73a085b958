// Evaluation on held-out problems: the `#### N` answer task the shipped models are trained on,
// run through the engine with continuous batching (docs/spec.md, "Evaluation").
//
//   std::vector<EvalProblem> problems = load_eval_problems("models/eval/heldout.jsonl",
//   24).value(); Engine engine = make_engine({.target = "models/target", .draft = "dflash",
//                                .draft_model = "models/drafter", .max_requests = 16,
//                                .max_tokens_per_request = 256}).value();
//   EvalRun run = run_eval(engine, tokenizer, problems, {.batch = 8}).value();
//   run.correct, run.stats.accept_length(), run.decode_tokens_per_second()
//
// Generation is greedy: with deterministic mode (the engine's default) a problem's output is the
// same token for token with or without a drafter and at any batch size, so the accuracy is too.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mlaspec/core/dtype.h"
#include "mlaspec/core/status.h"
#include "mlaspec/spec/engine.h"
#include "mlaspec/spec/stats.h"
#include "mlaspec/spec/verify_width.h"
#include "mlaspec/tokenizer/tokenizer.h"

namespace mlaspec::spec {

// One line of the held-out file: `prompt` is the chat template's rendering of the question (it
// starts with the BOS token, so it is encoded without adding special tokens); `answer` the exact
// final number.
struct EvalProblem {
  int64_t id = 0;
  std::string prompt;
  int64_t answer = 0;
};

// The first `n` problems of a JSON-lines file (fields id, prompt, answer). Errors name the file
// and the line; n larger than the file is an error naming both counts.
Result<std::vector<EvalProblem>> load_eval_problems(const std::filesystem::path& file, int n);

// The number after the last `####` of a solution (an optional '-', then digits), as the training
// code's checker reads it; nullopt when there is none.
std::optional<int64_t> final_answer(std::string_view text);

// An engine for a model directory and a drafter, as `generate` and `eval` build one.
struct EngineSpec {
  std::filesystem::path target;
  std::string draft = "none";         // "none", "ngram", "dflash" or "dspark"
  std::filesystem::path draft_model;  // dflash / dspark: the drafter's directory
  // dspark: fixed or confidence-chosen verify widths (spec/verify_width.h).
  VerifyWidthPolicy::Mode verify_width = VerifyWidthPolicy::Mode::kFixed;
  DType kv_dtype = DType::kBF16;
  bool fp8_math_attention = false;  // EngineConfig::fp8_math_attention (needs kv fp8)
  Device device = Device::kCPU;     // the target's (model::LoadOptions::device) and a dflash /
                                    // dspark drafter's (spec::make_drafter)
  int num_draft = 7;  // dflash / dspark: at most the drafter's block (DrafterSpec::num_draft_asked)
  bool num_draft_asked = false;
  int max_requests = 16;
  int64_t max_tokens_per_request = 0;  // 0 = the model's max_position_embeddings
};
// Errors from loading are InvalidArgument / NotFound naming the directory.
Result<Engine> make_engine(const EngineSpec& spec);

struct EvalOptions {
  int batch = 1;  // requests in flight at once; 1 .. engine max_requests
  int32_t max_new_tokens = 128;
  // After each finished problem: (problems done, problems in all).
  std::function<void(int done, int total)> progress;
};

// What one pass over the problems measured.
struct EvalRun {
  int batch = 0;
  std::vector<std::vector<int32_t>> outputs;    // per problem, in the problems' order
  std::vector<std::optional<int64_t>> answers;  // the final answer read from each output
  int correct = 0;
  SpecStats stats;              // the requests' step counts, merged
  int64_t decode_tokens = 0;    // tokens emitted by steps (after each prefill's first token)
  double decode_seconds = 0.0;  // wall time inside Engine::step
  // CPU time of the calling thread inside Engine::step: with one worker thread
  // (MLASPEC_THREADS=1) the steps' whole cost, steadier than wall time on a shared machine.
  double decode_thread_cpu_seconds = 0.0;
  // The engine's phase times over the steps of this run (wall).
  double draft_seconds = 0.0;
  double verify_seconds = 0.0;
  double accept_commit_seconds = 0.0;  // acceptance and the commits (target KV, drafter tokens)
  int64_t engine_steps = 0;            // Engine::step calls (one forward each, for the whole batch)
  double prefill_seconds = 0.0;
  double wall_seconds = 0.0;

  double accuracy() const {
    return outputs.empty() ? 0.0 : static_cast<double>(correct) / outputs.size();
  }
  double decode_tokens_per_second() const {
    return decode_seconds > 0 ? static_cast<double>(decode_tokens) / decode_seconds : 0.0;
  }
};

// Runs every problem through `engine` greedily (EOS ends a request), keeping `batch` requests in
// flight: when one finishes the next problem is admitted and prefilled before the next step
// (continuous batching). Any request's error is the run's error, naming the problem.
Result<EvalRun> run_eval(Engine& engine, const tokenizer::Tokenizer& tokenizer,
                         std::span<const EvalProblem> problems, const EvalOptions& options);

}  // namespace mlaspec::spec
