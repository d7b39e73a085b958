// `mlaspec generate`: from a model directory and a prompt to text, streamed as it is produced,
// with the n-gram drafter (or none) and a stats line at the end.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "mlaspec/core/log.h"
#include "mlaspec/core/status.h"
#include "mlaspec/model/model.h"
#include "mlaspec/spec/engine.h"
#include "mlaspec/spec/make_drafter.h"
#include "mlaspec/spec/stop_strings.h"
#include "mlaspec/tokenizer/tokenizer.h"
#include "tools/chat_prompt.h"
#include "tools/commands.h"

namespace mlaspec::tools {
namespace {

struct GenerateCli {
  std::string model;
  std::string draft = "ngram";
  std::string draft_model;
  std::string verify_width = "fixed";
  std::string prompt;
  std::string prompt_file;
  int64_t max_tokens = 128;
  float temperature = 0.0f;
  int32_t top_k = 0;
  float top_p = 1.0f;
  float min_p = 0.0f;
  uint64_t seed = 0;
  std::vector<std::string> stop;
  std::string kv = "bf16";
  int num_draft = 7;
  bool json = false;
  bool num_draft_given = false;  // --num-draft on the command line (not its default)
  bool chat = false;
  bool fp8_math = false;
  std::string device = "cpu";
};

[[noreturn]] void bad_input(Status status) {
  throw InputError(std::move(status));
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) bad_input(not_found("--prompt-file " + path + " cannot be opened"));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Prints what the stop-string filter releases, as it releases it.
void print_released(spec::StopStringFilter& filter, bool print) {
  const std::string out = filter.take();
  if (!print || out.empty()) return;
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
}

void run_generate(const GenerateCli& cli) {
  namespace fs = std::filesystem;
  // Inputs first: every refusal here is exit code 2.
  if (!fs::is_directory(cli.model)) {
    bad_input(not_found("--model " + cli.model + " is not a directory"));
  }
  if (!fs::exists(fs::path(cli.model) / "tokenizer.json")) {
    bad_input(not_found("--model " + cli.model + " has no tokenizer.json"));
  }
  const std::string text = cli.prompt_file.empty() ? cli.prompt : read_file(cli.prompt_file);
  if (text.empty()) bad_input(invalid_argument("the prompt is empty"));
  if (cli.max_tokens < 1) {
    bad_input(invalid_argument("--max-tokens " + std::to_string(cli.max_tokens) + " is < 1"));
  }
  model::SamplingParams sampling{.temperature = cli.temperature,
                                 .top_k = cli.top_k,
                                 .top_p = cli.top_p,
                                 .min_p = cli.min_p,
                                 .seed = cli.seed};
  if (Status s = model::validate(sampling); !s.ok()) bad_input(s);
  for (const std::string& s : cli.stop) {
    if (s.empty()) bad_input(invalid_argument("--stop: an empty stop string"));
  }
  if ((cli.draft == "dflash" || cli.draft == "dspark") && cli.draft_model.empty())
    bad_input(invalid_argument("--draft " + cli.draft + " needs --draft-model DIR"));
  if (Status s = check_drafter_options(cli.draft, !cli.draft_model.empty(), cli.verify_width,
                                       cli.num_draft);
      !s.ok()) {
    bad_input(s);
  }
  // --chat: the text is one user message in the model's chat format; the template writes BOS,
  // so the tokenizer's post-processor must not add another.
  const std::string prompt_text = cli.chat ? chat_prompt(cli.model, text) : text;
  Result<tokenizer::Tokenizer> tok = tokenizer::Tokenizer::from_path(cli.model);
  if (!tok.ok()) bad_input(tok.status().with_context("tokenizer"));
  model::LoadOptions load_options;
  load_options.device = cli.device == "cuda" ? Device::kCUDA : Device::kCPU;
  Result<model::Model> model = model::Model::load(cli.model, load_options);
  if (!model.ok()) bad_input(model.status().with_context("model " + cli.model));
  const model::ModelConfig& mc = model->config();
  if (tok->vocab_size() > mc.vocab_size) {
    bad_input(invalid_argument("the tokenizer's vocabulary (" + std::to_string(tok->vocab_size()) +
                               " ids) is larger than the model's (" +
                               std::to_string(mc.vocab_size) + ")"));
  }
  if (cli.max_tokens > mc.max_position_embeddings) {
    bad_input(out_of_range(
        "--max-tokens " + std::to_string(cli.max_tokens) + " exceeds the model's context of " +
        std::to_string(mc.max_position_embeddings) + " tokens (max_position_embeddings)"));
  }
  Result<std::vector<int32_t>> prompt = tok->encode(prompt_text, {.add_special_tokens = !cli.chat});
  if (!prompt.ok()) bad_input(prompt.status().with_context("prompt"));
  const int64_t prompt_len = static_cast<int64_t>(prompt->size());
  if (prompt_len + cli.max_tokens > mc.max_position_embeddings) {
    bad_input(out_of_range(
        "prompt " + std::to_string(prompt_len) + " + --max-tokens " +
        std::to_string(cli.max_tokens) + " tokens exceeds the model's context of " +
        std::to_string(mc.max_position_embeddings) + " tokens (max_position_embeddings)"));
  }

  // Policies, decided once.
  spec::EngineConfig config;
  config.kv_dtype = kv_dtypes_option(cli.kv).at(0);
  config.fp8_math_attention = cli.fp8_math;
  config.max_requests = 1;
  config.max_tokens_per_request = prompt_len + cli.max_tokens;
  Result<spec::MadeDrafter> made =
      spec::make_drafter({.kind = cli.draft,
                          .model_dir = cli.draft_model,
                          .verify_width = verify_width_mode(cli.verify_width),
                          .num_draft = cli.num_draft,
                          .num_draft_asked = cli.num_draft_given,
                          .max_requests = config.max_requests,
                          .max_tokens_per_request = config.max_tokens_per_request,
                          .target_kv_dtype = config.kv_dtype},
                         *model);
  if (!made.ok()) bad_input(made.status());
  config.num_draft = made->num_draft;
  std::unique_ptr<spec::Drafter> drafter = std::move(made->drafter);
  Result<spec::Engine> engine = spec::Engine::create(std::move(*model), std::move(drafter), config);
  if (!engine.ok()) bad_input(engine.status());
  log_debug("generate: " + engine->describe());

  spec::GenerationRequest request{.prompt = *prompt,
                                  .sampling = sampling,
                                  .max_new_tokens = static_cast<int32_t>(cli.max_tokens),
                                  .stop_token_ids = {}};
  if (tok->eos_id()) request.stop_token_ids.push_back(*tok->eos_id());
  Result<spec::RequestId> id = engine->add_request(std::move(request));
  if (!id.ok()) bad_input(id.status());

  tokenizer::StreamDecoder decoder(*tok, {.skip_special_tokens = true});
  spec::StopStringFilter stream(cli.stop);
  const bool print = !cli.json;
  std::vector<int32_t> ids;
  bool stopped_by_string = false;
  // Feeds emitted tokens to the text stream; false once a stop string has appeared.
  auto take = [&](const std::vector<int32_t>& tokens) {
    for (const int32_t t : tokens) {
      if (stopped_by_string) return;
      ids.push_back(t);
      Result<std::string> piece = decoder.push(t);
      throw_if_error(piece.status());
      const bool stop = stream.add(*piece);
      print_released(stream, print);
      if (stop) {
        stopped_by_string = true;
        throw_if_error(engine->finish(*id));
      }
    }
  };

  const bool show_progress = prompt_len > engine->config().prefill_chunk_tokens;
  Result<spec::RequestEvent> first = engine->prefill(*id, [&](int64_t done, int64_t total) {
    if (show_progress)
      std::fprintf(stderr, "\rprefill %lld / %lld tokens", (long long)done, (long long)total);
  });
  if (show_progress) std::fprintf(stderr, "\n");
  throw_if_error(first.status());
  throw_if_error(first->error);
  take(first->tokens);
  const auto t_decode = std::chrono::steady_clock::now();
  int64_t decode_tokens = 0;
  while (engine->num_running() > 0) {
    Result<spec::StepOutput> out = engine->step();
    throw_if_error(out.status());
    for (const spec::RequestEvent& ev : out->events) {
      throw_if_error(ev.error);
      decode_tokens += static_cast<int64_t>(ev.tokens.size());
      take(ev.tokens);
    }
  }
  const double decode_s = since(t_decode);
  if (!stopped_by_string) {
    Result<std::string> rest = decoder.flush();
    throw_if_error(rest.status());
    stream.add(*rest);
    stream.finish();
    print_released(stream, print);
  }

  const std::string reason = stopped_by_string ? "stop"
                             : ids.size() == static_cast<size_t>(cli.max_tokens) &&
                                     (!tok->eos_id() || ids.back() != *tok->eos_id())
                                 ? "length"
                                 : "stop";
  const double prefill_s = engine->prefill_seconds();
  const double prefill_tps = prefill_s > 0 ? static_cast<double>(prompt_len) / prefill_s : 0.0;
  const double decode_tps = decode_s > 0 ? static_cast<double>(decode_tokens) / decode_s : 0.0;
  const spec::SpecStats& st = engine->stats();
  const std::string drafter_name =
      engine->drafter() ? std::string(engine->drafter()->name()) : "none";
  if (cli.json) {
    nlohmann::json per_position = nlohmann::json::array();
    for (size_t k = 0; k < st.reached.size(); ++k) {
      const double a = st.position_acceptance(k);
      per_position.push_back(std::isnan(a) ? nlohmann::json(nullptr) : nlohmann::json(a));
    }
    nlohmann::json j = {
        {"model", cli.model},
        {"prompt_tokens", prompt_len},
        {"ids", ids},
        {"text", stream.text()},
        {"finish_reason", reason},
        {"generated_tokens", ids.size()},
        {"prefill_seconds", prefill_s},
        {"prefill_tokens_per_second", prefill_tps},
        {"decode_seconds", decode_s},
        {"decode_tokens_per_second", decode_tps},
        {"kv", cli.kv},
        {"draft", drafter_name},
        {"num_draft", engine->config().num_draft},
        {"spec",
         {{"verify_steps", st.verify_steps},
          {"drafted", st.drafted},
          {"accepted", st.accepted},
          {"accept_length", st.accept_length()},
          {"acceptance_rate", st.acceptance_rate()},
          {"per_position_acceptance", per_position},
          {"draft_seconds", st.draft_seconds},
          {"verify_seconds", st.verify_seconds},
          {"accept_commit_seconds", st.accept_commit_seconds}}},
    };
    std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return;
  }
  std::printf("\n");
  std::fflush(stdout);
  std::fprintf(stderr,
               "prompt %lld tokens, prefill %.1f tok/s; generated %zu tokens (%s), decode %.1f "
               "tok/s\n",
               static_cast<long long>(prompt_len), prefill_tps, ids.size(), reason.c_str(),
               decode_tps);
  if (engine->drafter())
    std::fprintf(stderr, "%s\n", spec::format_summary(st, drafter_name).c_str());
}

}  // namespace

void add_generate_command(CLI::App& app) {
  auto cli = std::make_shared<GenerateCli>();
  CLI::App* cmd = app.add_subcommand(
      "generate",
      "Generate text from a model directory (config.json, safetensors, tokenizer.json) on the "
      "CPU: tokens stream to stdout, prefill progress and a stats line go to stderr. Greedy "
      "output with a drafter equals greedy output without one, token for token.");
  cmd->add_option("--model", cli->model, "Model directory (Hugging Face layout)")->required();
  cmd->add_option("--draft", cli->draft,
                  "Drafter: ngram (prompt lookup), dflash (a DFlash block drafter: --draft-model), "
                  "dspark (DFlash + Markov and confidence heads: --draft-model) or none (plain "
                  "decoding)")
      ->check(CLI::IsMember({"ngram", "dflash", "dspark", "none"}))
      ->capture_default_str();
  cmd->add_option("--draft-model", cli->draft_model,
                  "With --draft dflash / dspark: the drafter's directory (config.json, "
                  "safetensors)");
  add_verify_width_option(*cmd, &cli->verify_width);
  auto* prompt = cmd->add_option("--prompt", cli->prompt, "Prompt text");
  auto* file = cmd->add_option("--prompt-file", cli->prompt_file, "Read the prompt from a file");
  prompt->excludes(file);
  cmd->add_option("--max-tokens", cli->max_tokens, "Tokens to generate at most")
      ->capture_default_str();
  cmd->add_option("--temperature", cli->temperature, "0 = greedy")->capture_default_str();
  cmd->add_option("--top-k", cli->top_k, "0 = off")->capture_default_str();
  cmd->add_option("--top-p", cli->top_p, "1 = off")->capture_default_str();
  cmd->add_option("--min-p", cli->min_p, "0 = off")->capture_default_str();
  cmd->add_option("--seed", cli->seed, "Seed of the sampling draws")->capture_default_str();
  cmd->add_option("--stop", cli->stop,
                  "Stop string (repeatable): generation ends where it appears; it is not printed");
  cmd->add_option("--kv", cli->kv,
                  "Target KV cache dtype: bf16, fp8 (one scale per layer) or fp8tile (one scale "
                  "per 128 latent values, rope in bf16; CPU only)")
      ->check(CLI::IsMember({"bf16", "fp8", "fp8tile"}))
      ->capture_default_str();
  cmd->add_flag("--fp8-math", cli->fp8_math,
                "Target attention in fp8 math: Q and P rounded to e4m3 (not exact; its error "
                "bound: docs/attention.md). Needs --kv fp8");
  CLI::Option* num_draft = add_num_draft_option(*cmd, &cli->num_draft);
  cmd->add_option(
         "--device", cli->device,
         "Where the target model runs: cpu, or cuda (bf16 on the GPU; a dflash / dspark drafter "
         "runs there too, ngram on the CPU)")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  cmd->add_flag("--json", cli->json,
                "Print one JSON object (ids, text, timings, acceptance) instead of streaming");
  cmd->add_flag("--chat", cli->chat,
                "Apply the model's chat format: the prompt becomes one user message rendered "
                "with tokenizer_config.json's chat_template (add_generation_prompt), encoded "
                "without the tokenizer's own BOS (the template writes it); a model without a "
                "chat template is an error");
  cmd->callback([cli, prompt, file, num_draft] {
    cli->num_draft_given = num_draft->count() > 0;
    if (prompt->count() == 0 && file->count() == 0) {
      throw InputError(invalid_argument("give the prompt with --prompt or --prompt-file"));
    }
    run_generate(*cli);
  });
}

}  // namespace mlaspec::tools
