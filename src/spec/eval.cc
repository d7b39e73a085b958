#include "mlaspec/spec/eval.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <utility>

#include "mlaspec/model/model.h"
#include "mlaspec/spec/make_drafter.h"

namespace mlaspec::spec {
namespace {

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace

Result<std::vector<EvalProblem>> load_eval_problems(const std::filesystem::path& file, int n) {
  if (n < 1)
    return invalid_argument("the number of problems is " + std::to_string(n) + ", need >= 1");
  std::ifstream in(file);
  if (!in) return not_found(file.string() + ": cannot open");
  std::vector<EvalProblem> out;
  std::string line;
  int line_no = 0;
  while (static_cast<int>(out.size()) < n && std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = file.string() + ":" + std::to_string(line_no);
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) return invalid_argument(where + ": not a JSON object");
    if (!j.contains("prompt") || !j["prompt"].is_string() || j["prompt"].get<std::string>().empty())
      return invalid_argument(where + ": no non-empty string field \"prompt\"");
    if (!j.contains("answer") || !j["answer"].is_number_integer())
      return invalid_argument(where + ": no integer field \"answer\"");
    EvalProblem p;
    p.id = j.contains("id") && j["id"].is_number_integer() ? j["id"].get<int64_t>()
                                                           : static_cast<int64_t>(out.size());
    p.prompt = j["prompt"].get<std::string>();
    p.answer = j["answer"].get<int64_t>();
    out.push_back(std::move(p));
  }
  if (static_cast<int>(out.size()) < n) {
    return out_of_range(std::to_string(n) + " problems asked for, but " + file.string() +
                        " holds " + std::to_string(out.size()));
  }
  return out;
}

std::optional<int64_t> final_answer(std::string_view text) {
  const size_t at = text.rfind("####");
  if (at == std::string_view::npos) return std::nullopt;
  size_t i = at + 4;
  while (i < text.size() && text[i] == ' ') ++i;
  size_t j = i;
  if (j < text.size() && text[j] == '-') ++j;
  const size_t digits = j;
  // 18 digits always fit an int64.
  while (j < text.size() && j - digits < 18 && std::isdigit(static_cast<unsigned char>(text[j])))
    ++j;
  if (j == digits) return std::nullopt;
  return std::stoll(std::string(text.substr(i, j - i)));
}

Result<Engine> make_engine(const EngineSpec& spec) {
  model::LoadOptions load_options;
  load_options.device = spec.device;
  Result<model::Model> target = model::Model::load(spec.target, load_options);
  if (!target.ok()) return target.status().with_context("model " + spec.target.string());
  Result<MadeDrafter> d = make_drafter({.kind = spec.draft,
                                        .model_dir = spec.draft_model,
                                        .verify_width = spec.verify_width,
                                        .num_draft = spec.num_draft,
                                        .num_draft_asked = spec.num_draft_asked,
                                        .max_requests = spec.max_requests,
                                        .max_tokens_per_request = spec.max_tokens_per_request,
                                        .target_kv_dtype = spec.kv_dtype},
                                       *target);
  if (!d.ok()) return d.status();
  EngineConfig config;
  config.kv_dtype = spec.kv_dtype;
  config.fp8_math_attention = spec.fp8_math_attention;
  config.max_requests = spec.max_requests;
  config.max_tokens_per_request = spec.max_tokens_per_request;
  config.num_draft = d->num_draft;
  return Engine::create(std::move(*target), std::move(d->drafter), config);
}

Result<EvalRun> run_eval(Engine& engine, const tokenizer::Tokenizer& tokenizer,
                         std::span<const EvalProblem> problems, const EvalOptions& options) {
  const int max_batch = engine.config().max_requests;
  if (options.batch < 1 || options.batch > max_batch) {
    return out_of_range("batch " + std::to_string(options.batch) + " is outside 1 .. " +
                        std::to_string(max_batch) + " (the engine's max_requests)");
  }
  if (options.max_new_tokens < 1) {
    return invalid_argument("max_new_tokens " + std::to_string(options.max_new_tokens) + " is < 1");
  }
  if (!tokenizer.eos_id()) return invalid_argument("the tokenizer has no EOS token");
  const int total = static_cast<int>(problems.size());
  EvalRun run;
  run.batch = options.batch;
  run.outputs.resize(problems.size());
  run.answers.resize(problems.size());

  std::map<RequestId, int> in_flight;  // request -> problem index
  int done = 0;
  // Collects a finished request's tokens and stats and forgets it.
  auto finish = [&](RequestId id) -> Status {
    const int p = in_flight.at(id);
    if (engine.state(id) == RequestState::kFailed) {
      return engine.request_error(id).with_context("problem " + std::to_string(problems[p].id));
    }
    const auto out = engine.output(id);
    run.outputs[p].assign(out.begin(), out.end());
    run.stats.merge(engine.request_stats(id));
    Result<std::string> text = tokenizer.decode(out, {.skip_special_tokens = true});
    if (!text.ok()) return text.status().with_context("problem " + std::to_string(problems[p].id));
    run.answers[p] = final_answer(*text);
    run.correct += run.answers[p] == problems[p].answer;
    MLASPEC_RETURN_IF_ERROR(engine.release(id));
    in_flight.erase(id);
    ++done;
    if (options.progress) options.progress(done, total);
    return Status::Ok();
  };

  const SpecStats engine_before = engine.stats();
  const auto t_run = std::chrono::steady_clock::now();
  int next = 0;
  while (next < total || !in_flight.empty()) {
    // Admission: fill the batch before the next step.
    while (next < total && static_cast<int>(in_flight.size()) < options.batch) {
      const EvalProblem& problem = problems[next];
      const std::string name = "problem " + std::to_string(problem.id);
      // The prompt carries the chat template's BOS: no special tokens added again.
      Result<std::vector<int32_t>> prompt =
          tokenizer.encode(problem.prompt, {.add_special_tokens = false});
      if (!prompt.ok()) return prompt.status().with_context(name);
      GenerationRequest request;
      request.prompt = std::move(*prompt);
      request.max_new_tokens = options.max_new_tokens;
      request.stop_token_ids.push_back(*tokenizer.eos_id());
      Result<RequestId> id = engine.add_request(std::move(request));
      if (!id.ok()) return id.status().with_context(name);
      in_flight[*id] = next++;
      const auto t0 = std::chrono::steady_clock::now();
      Result<RequestEvent> first = engine.prefill(*id);
      run.prefill_seconds += since(t0);
      if (!first.ok()) return first.status().with_context(name);
      if (engine.state(*id) != RequestState::kRunning) MLASPEC_RETURN_IF_ERROR(finish(*id));
    }
    if (engine.num_running() == 0) continue;
    const auto t0 = std::chrono::steady_clock::now();
    const double cpu0 = thread_cpu_seconds();
    Result<StepOutput> step = engine.step();
    run.decode_thread_cpu_seconds += thread_cpu_seconds() - cpu0;
    run.decode_seconds += since(t0);
    ++run.engine_steps;
    if (!step.ok()) return step.status();
    for (const RequestEvent& ev : step->events) {
      run.decode_tokens += static_cast<int64_t>(ev.tokens.size());
      if (!ev.error.ok() || ev.finished) MLASPEC_RETURN_IF_ERROR(finish(ev.id));
    }
  }
  run.wall_seconds = since(t_run);
  run.draft_seconds = engine.stats().draft_seconds - engine_before.draft_seconds;
  run.verify_seconds = engine.stats().verify_seconds - engine_before.verify_seconds;
  run.accept_commit_seconds =
      engine.stats().accept_commit_seconds - engine_before.accept_commit_seconds;
  return run;
}

}  // namespace mlaspec::spec
