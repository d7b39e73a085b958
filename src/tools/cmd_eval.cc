// `mlaspec eval`: held-out problems through the engine, with and without a drafter, at several
// batch sizes: accuracy, accept length, per-position acceptance and decode tokens/s as one table.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "mlaspec/core/log.h"
#include "mlaspec/core/status.h"
#include "mlaspec/spec/eval.h"
#include "mlaspec/tokenizer/tokenizer.h"
#include "tools/commands.h"

namespace mlaspec::tools {
namespace {

// Requests in flight at most: the engine's max_requests for an eval (its pool holds this many
// requests of the longest prompt + --max-tokens).
constexpr int kMaxBatch = 64;

struct EvalCli {
  std::string model = "models/target";
  std::string draft = "dflash";
  std::string draft_model = "models/drafter";
  std::string verify_width = "fixed";
  std::string data = "models/eval/heldout.jsonl";
  std::string kv = "bf16";
  std::string device = "cpu";
  std::string batch = "1,8,16";
  int n = 24;
  int num_draft = 7;
  int max_tokens = 128;
  bool json = false;
  bool fp8_math = false;
  bool num_draft_given = false;    // --num-draft on the command line (not its default)
  bool draft_model_given = false;  // --draft-model likewise
};

[[noreturn]] void bad_input(Status status) {
  throw InputError(std::move(status));
}

std::vector<int> parse_batches(const std::string& text) {
  std::vector<int> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size())
      bad_input(invalid_argument("--batch: '" + item + "' is not an integer"));
    if (v < 1) bad_input(invalid_argument("--batch " + item + " is < 1"));
    if (v > kMaxBatch) {
      bad_input(out_of_range("--batch " + item + " exceeds the engine's max_requests " +
                             std::to_string(kMaxBatch)));
    }
    if (std::find(out.begin(), out.end(), static_cast<int>(v)) == out.end())
      out.push_back(static_cast<int>(v));
  }
  if (out.empty()) bad_input(invalid_argument("--batch: no batch size given"));
  return out;
}

// "100 99 97 ..": conditional acceptance per draft position, in percent; "-" never reached.
std::string per_position(const spec::SpecStats& st) {
  std::string s;
  for (size_t k = 0; k < st.reached.size(); ++k) {
    const double a = st.position_acceptance(k);
    s += (k ? " " : "") + (std::isnan(a) ? std::string("-") : std::to_string(std::lround(a * 100)));
  }
  return s.empty() ? "-" : s;
}

struct Row {
  std::string draft;
  spec::EvalRun run;
  double speedup = 1.0;
};

void run_eval_command(const EvalCli& cli) {
  namespace fs = std::filesystem;
  // Inputs first: every refusal here is exit code 2, before anything loads.
  if (cli.n < 1) bad_input(invalid_argument("-n " + std::to_string(cli.n) + " is < 1"));
  if (cli.max_tokens < 1)
    bad_input(invalid_argument("--max-tokens " + std::to_string(cli.max_tokens) + " is < 1"));
  if (Status s =
          check_drafter_options(cli.draft, cli.draft_model_given, cli.verify_width, cli.num_draft);
      !s.ok()) {
    bad_input(s);
  }
  const std::vector<int> batches = parse_batches(cli.batch);
  if (!fs::is_directory(cli.model))
    bad_input(not_found("--model " + cli.model + " is not a directory"));
  if (!fs::exists(fs::path(cli.model) / "tokenizer.json"))
    bad_input(not_found("--model " + cli.model + " has no tokenizer.json"));
  if ((cli.draft == "dflash" || cli.draft == "dspark") && !fs::is_directory(cli.draft_model)) {
    bad_input(not_found("--draft-model " + cli.draft_model + " is not a directory (--draft " +
                        cli.draft + " needs the drafter; or use --draft ngram|none)"));
  }
  if (!fs::is_regular_file(cli.data)) bad_input(not_found("--data " + cli.data + " is not a file"));
  Result<std::vector<spec::EvalProblem>> problems = spec::load_eval_problems(cli.data, cli.n);
  if (!problems.ok()) bad_input(problems.status().with_context("--data"));
  Result<tokenizer::Tokenizer> tok = tokenizer::Tokenizer::from_path(cli.model);
  if (!tok.ok()) bad_input(tok.status().with_context("tokenizer"));
  if (!tok->eos_id()) bad_input(invalid_argument("the tokenizer of " + cli.model + " has no EOS"));
  int64_t longest_prompt = 0;
  for (const spec::EvalProblem& p : *problems) {
    Result<std::vector<int32_t>> ids = tok->encode(p.prompt, {.add_special_tokens = false});
    if (!ids.ok()) bad_input(ids.status().with_context("problem " + std::to_string(p.id)));
    longest_prompt = std::max<int64_t>(longest_prompt, static_cast<int64_t>(ids->size()));
  }

  spec::EngineSpec espec{.target = cli.model,
                         .draft = "none",
                         // Read by dflash / dspark only (the default names the shipped one).
                         .draft_model = cli.draft == "dflash" || cli.draft == "dspark"
                                            ? fs::path(cli.draft_model)
                                            : fs::path(),
                         .kv_dtype = kv_dtypes_option(cli.kv).at(0),
                         .fp8_math_attention = cli.fp8_math,
                         .device = cli.device == "cuda" ? Device::kCUDA : Device::kCPU,
                         .num_draft = cli.num_draft,
                         .num_draft_asked = cli.num_draft_given,
                         .max_requests = *std::max_element(batches.begin(), batches.end()),
                         .max_tokens_per_request = longest_prompt + cli.max_tokens};
  std::vector<std::string> drafts = {"none"};
  if (cli.draft != "none") drafts.push_back(cli.draft);
  std::vector<spec::Engine> engines;
  for (const std::string& d : drafts) {
    espec.draft = d;
    espec.verify_width = verify_width_mode(cli.verify_width);
    Result<spec::Engine> e = spec::make_engine(espec);
    if (!e.ok()) bad_input(e.status());
    log_debug("eval: " + e->describe());
    engines.push_back(std::move(*e));
  }

  std::vector<Row> rows;
  for (const int batch : batches) {
    double none_tps = 0.0;
    for (size_t e = 0; e < engines.size(); ++e) {
      const std::string label = drafts[e] + " batch " + std::to_string(batch);
      spec::EvalOptions options{.batch = batch,
                                .max_new_tokens = static_cast<int32_t>(cli.max_tokens),
                                .progress = [&](int done, int total) {
                                  std::fprintf(stderr, "\reval %s: %d / %d problems", label.c_str(),
                                               done, total);
                                }};
      Result<spec::EvalRun> run = spec::run_eval(engines[e], *tok, *problems, options);
      std::fprintf(stderr, "\n");
      throw_if_error(run.status().with_context(label));
      Row row{drafts[e], std::move(*run)};
      // engines[0] is plain decoding: the drafter's row divides by it at the same batch.
      if (e == 0) none_tps = row.run.decode_tokens_per_second();
      row.speedup = none_tps > 0 ? row.run.decode_tokens_per_second() / none_tps : 0.0;
      rows.push_back(std::move(row));
    }
  }

  // Lossless greedy: every run's output for a problem equals the first run's.
  std::vector<int64_t> differ;
  for (size_t p = 0; p < problems->size(); ++p) {
    for (const Row& r : rows) {
      if (r.run.outputs[p] != rows[0].run.outputs[p]) {
        differ.push_back((*problems)[p].id);
        break;
      }
    }
  }
  const bool identical = differ.empty();
  std::string differ_text;
  for (const int64_t id : differ)
    differ_text += (differ_text.empty() ? "" : ", ") + std::to_string(id);

  if (cli.json) {
    nlohmann::json jrows = nlohmann::json::array();
    for (const Row& r : rows) {
      const spec::SpecStats& st = r.run.stats;
      nlohmann::json pp = nlohmann::json::array();
      for (size_t k = 0; k < st.reached.size(); ++k) {
        const double a = st.position_acceptance(k);
        pp.push_back(std::isnan(a) ? nlohmann::json(nullptr) : nlohmann::json(a));
      }
      jrows.push_back({{"draft", r.draft},
                       {"batch", r.run.batch},
                       {"problems", r.run.outputs.size()},
                       {"correct", r.run.correct},
                       {"accuracy", r.run.accuracy()},
                       {"accept_length", st.accept_length()},
                       {"acceptance_rate", st.acceptance_rate()},
                       {"per_position_acceptance", pp},
                       {"verify_steps", st.verify_steps},
                       {"engine_steps", r.run.engine_steps},
                       {"drafted", st.drafted},
                       {"accepted", st.accepted},
                       {"tokens_per_verify_token", st.tokens_per_verify_token()},
                       {"decode_tokens", r.run.decode_tokens},
                       {"decode_seconds", r.run.decode_seconds},
                       {"decode_tokens_per_second", r.run.decode_tokens_per_second()},
                       {"decode_thread_cpu_seconds", r.run.decode_thread_cpu_seconds},
                       {"draft_seconds", r.run.draft_seconds},
                       {"verify_seconds", r.run.verify_seconds},
                       {"accept_commit_seconds", r.run.accept_commit_seconds},
                       {"prefill_seconds", r.run.prefill_seconds},
                       {"wall_seconds", r.run.wall_seconds},
                       {"speedup", r.speedup}});
    }
    const nlohmann::json j = {{"model", cli.model},
                              {"draft", cli.draft},
                              {"draft_model", espec.draft_model.string()},
                              {"data", cli.data},
                              {"kv", cli.kv},
                              {"fp8_math_attention", cli.fp8_math},
                              {"device", cli.device},
                              {"problems", problems->size()},
                              {"max_tokens", cli.max_tokens},
                              {"num_draft", engines.back().config().num_draft},
                              {"rows", jrows},
                              {"identical", identical},
                              {"differing_problems", differ}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("eval: %zu problems of %s, %s, kv %s%s, %s, greedy, max %d new tokens\n",
                problems->size(), cli.data.c_str(), cli.model.c_str(), cli.kv.c_str(),
                cli.fp8_math ? " (attention in fp8 math)" : "", cli.device.c_str(), cli.max_tokens);
    std::printf(
        "| draft | batch | accuracy | tau | tokens / verify token | accept %% per position | "
        "ms/step draft, verify, accept+commit, whole step | tok/s | speedup |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|\n");
    for (const Row& r : rows) {
      const spec::SpecStats& st = r.run.stats;
      // Engine steps (one forward for the whole batch), not the per-request verify steps.
      const double steps = static_cast<double>(std::max<int64_t>(1, r.run.engine_steps));
      std::printf(
          "| %s | %d | %.3f (%d/%zu) | %.2f | %.3f | %s | %.2f, %.2f, %.2f, %.2f | %.1f | %.2fx "
          "|\n",
          r.draft.c_str(), r.run.batch, r.run.accuracy(), r.run.correct, r.run.outputs.size(),
          st.accept_length(), st.tokens_per_verify_token(), per_position(st).c_str(),
          1e3 * r.run.draft_seconds / steps, 1e3 * r.run.verify_seconds / steps,
          1e3 * r.run.accept_commit_seconds / steps, 1e3 * r.run.decode_seconds / steps,
          r.run.decode_tokens_per_second(), r.speedup);
    }
    std::printf("greedy outputs identical with and without speculation (every run): %s\n",
                identical ? "yes" : ("NO, problems " + differ_text).c_str());
  }
  std::fflush(stdout);
  if (!identical) {
    throw Error(internal_error("greedy outputs differ between runs on problems " + differ_text +
                               " (deterministic mode must make them identical)"));
  }
}

}  // namespace

void add_eval_command(CLI::App& app) {
  auto cli = std::make_shared<EvalCli>();
  CLI::App* cmd = app.add_subcommand(
      "eval",
      "Run held-out problems (the `#### N` answer task) through the engine greedily, with and "
      "without a drafter, at each batch size (continuous batching), and print accuracy, accept "
      "length, per-position acceptance and decode tokens/s as one table. Progress on stderr.");
  cmd->add_option("--model", cli->model, "Target model directory")->capture_default_str();
  cmd->add_option("--draft", cli->draft,
                  "Drafter compared with plain decoding: dflash or dspark (--draft-model), ngram, "
                  "or none (plain decoding only)")
      ->check(CLI::IsMember({"dflash", "dspark", "ngram", "none"}))
      ->capture_default_str();
  cmd->add_option("--draft-model", cli->draft_model,
                  "With --draft dflash / dspark: the drafter's directory")
      ->capture_default_str();
  add_verify_width_option(*cmd, &cli->verify_width);
  cmd->add_option("--data", cli->data,
                  "Held-out problems, JSON lines with prompt and answer (the first -n are run)")
      ->capture_default_str();
  cmd->add_option("--kv", cli->kv,
                  "Target KV cache dtype: bf16, fp8 (one scale per layer) or fp8tile (one scale "
                  "per 128 latent values, rope in bf16; CPU only)")
      ->check(CLI::IsMember({"bf16", "fp8", "fp8tile"}))
      ->capture_default_str();
  cmd->add_flag("--fp8-math", cli->fp8_math,
                "Target attention in fp8 math: Q and P rounded to e4m3 (not exact; its error "
                "bound: docs/attention.md). Needs --kv fp8");
  cmd->add_option(
         "--device", cli->device,
         "Where the target runs (cuda: the CUDA model runtime; a dflash / dspark drafter runs "
         "there too, ngram on the CPU)")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--batch", cli->batch,
                  "Batch sizes, comma-separated: requests in flight at once (1 .. 64)")
      ->capture_default_str();
  cmd->add_option("-n", cli->n, "Problems to run (the file's first N)")->capture_default_str();
  add_num_draft_option(*cmd, &cli->num_draft);
  cmd->add_option("--max-tokens", cli->max_tokens, "New tokens per problem at most")
      ->capture_default_str();
  cmd->add_flag("--json", cli->json, "Print one JSON object instead of the table");
  cmd->callback([cli, cmd] {
    cli->num_draft_given = cmd->count("--num-draft") > 0;
    cli->draft_model_given = cmd->count("--draft-model") > 0;
    run_eval_command(*cli);
  });
}

}  // namespace mlaspec::tools
