// `mlaspec serve`: the OpenAI-compatible HTTP server (docs/serve.md) on a model directory, with
// a drafter, continuous batching and speculative decoding on the CPU runtime.
#include <CLI/CLI.hpp>

#include <csignal>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "mlaspec/core/log.h"
#include "mlaspec/core/status.h"
#include "mlaspec/serve/load.h"
#include "mlaspec/serve/server.h"
#include "tools/commands.h"

namespace mlaspec::tools {
namespace {

struct ServeCli {
  std::string model = "models/target";
  std::string draft;  // default: dflash with models/drafter when present, else ngram
  std::string draft_model;
  std::string host = "127.0.0.1";
  int port = 8000;
  int max_running = 16;
  int max_queue = 64;
  double timeout = 600.0;
  std::string kv = "bf16";
  std::string device = "cpu";
  int num_draft = 7;
  std::string verify_width = "fixed";
  int kv_pages = 0;
  int prefill_chunk = 0;
  int64_t prefill_budget = 512;
  std::string served_model_name;
  bool num_draft_given = false;  // --num-draft on the command line (not its default)
};

// SIGINT / SIGTERM stop the server cleanly: the handler only flips a flag a watcher thread reads
// (nothing else is safe in a signal handler).
volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void on_stop_signal(int) {
  g_stop_signal = 1;
}

void run_serve(const ServeCli& cli) {
  if (!serve::server_available()) {
    throw InputError(
        unsupported("mlaspec was built without cpp-httplib: install libcpp-httplib-dev "
                    "(scripts/install-deps.sh) and configure again"));
  }
  serve::ServeOptions o;
  o.model_dir = cli.model;
  o.draft = cli.draft;
  o.draft_model_dir = cli.draft_model;
  if (o.draft.empty()) {
    const serve::DrafterChoice d = serve::default_drafter(cli.model, cli.draft_model);
    o.draft = d.kind;
    o.draft_model_dir = d.model_dir;
  }
  if (Status s =
          check_drafter_options(o.draft, !cli.draft_model.empty(), cli.verify_width, cli.num_draft);
      !s.ok()) {
    throw InputError(s);
  }
  o.num_draft = cli.num_draft;
  o.num_draft_asked = cli.num_draft_given;
  o.verify_width = verify_width_mode(cli.verify_width);
  o.kv_dtype = kv_dtypes_option(cli.kv).at(0);
  o.device = cli.device == "cuda" ? Device::kCUDA : Device::kCPU;
  o.kv_pages = cli.kv_pages;
  o.prefill_chunk_tokens = cli.prefill_chunk;
  o.scheduler.prefill_tokens_per_iteration = cli.prefill_budget;
  o.host = cli.host;
  o.port = cli.port;
  o.served_model_name = cli.served_model_name;
  o.scheduler.max_running = cli.max_running;
  o.scheduler.max_queue = cli.max_queue;
  o.scheduler.request_timeout_seconds = cli.timeout;
  Result<std::unique_ptr<serve::Server>> server = serve::Server::create(o);
  if (!server.ok()) throw InputError(server.status());
  log_info("serve: " + (*server)->describe());
  // The bound port on stdout (with --port 0 the only way to learn it), for scripts and tests.
  std::printf("mlaspec serve: listening on http://%s:%d\n", cli.host.c_str(), (*server)->port());
  std::fflush(stdout);
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  serve::Server* s = server->get();
  std::thread watcher([s] {
    while (g_stop_signal == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    log_info("serve: stopping");
    s->stop();
  });
  Status run = s->run();
  g_stop_signal = 1;
  watcher.join();
  throw_if_error(run);
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto cli = std::make_shared<ServeCli>();
  CLI::App* cmd = app.add_subcommand(
      "serve",
      "Serve the OpenAI API (/v1/completions, /v1/chat/completions, /v1/models, /health, "
      "/metrics) over HTTP with continuous batching and speculative decoding (the CPU runtime, or "
      "the CUDA one with --device cuda). "
      "Prints the address it listens on; SIGINT/SIGTERM stop it.");
  cmd->add_option("--model", cli->model, "Model directory (Hugging Face layout)")
      ->capture_default_str();
  cmd->add_option("--draft", cli->draft,
                  "Drafter: dflash or dspark (--draft-model), ngram or none; default: with "
                  "--draft-model the kind its config.json names (dflash or dspark), else dflash "
                  "with the drafter/ beside the model when present (the shipped pair), else ngram")
      ->check(CLI::IsMember({"ngram", "dflash", "dspark", "none"}));
  cmd->add_option("--draft-model", cli->draft_model,
                  "With --draft dflash / dspark: the drafter's directory");
  add_verify_width_option(*cmd, &cli->verify_width);
  cmd->add_option("--host", cli->host, "Address to listen on")->capture_default_str();
  cmd->add_option("--port", cli->port, "Port (0: any free port)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_option("--max-running", cli->max_running, "Requests generating at once")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option("--max-queue", cli->max_queue,
                  "Requests waiting for admission; beyond: 429 queue_full")
      ->check(CLI::Range(0, 65536))
      ->capture_default_str();
  cmd->add_option("--timeout", cli->timeout,
                  "Seconds from arrival to the last token (0: none); beyond: 504")
      ->check(CLI::Range(0.0, 1e7))
      ->capture_default_str();
  cmd->add_option("--kv", cli->kv,
                  "Target KV cache dtype: bf16, fp8 (one scale per layer) or fp8tile (one scale "
                  "per 128 latent values, rope in bf16; CPU only)")
      ->check(CLI::IsMember({"bf16", "fp8", "fp8tile"}))
      ->capture_default_str();
  cmd->add_option("--device", cli->device,
                  "Where the target runs: cpu, or cuda (the CUDA model runtime; a dflash drafter "
                  "runs there too, ngram on the CPU)")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  CLI::Option* num_draft = add_num_draft_option(*cmd, &cli->num_draft);
  cmd->add_option("--kv-pages", cli->kv_pages,
                  "Target KV pool pages (0: max-running requests of the full context)")
      ->check(CLI::Range(0, 1 << 24))
      ->capture_default_str();
  cmd->add_option("--prefill-chunk", cli->prefill_chunk,
                  "Prompt tokens per prefill forward (0: the device's default, 256 on cpu and "
                  "1024 on cuda)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  cmd->add_option("--prefill-budget", cli->prefill_budget,
                  "Prompt tokens prefilled per scheduler iteration before the running requests "
                  "step again (at least one chunk)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30))
      ->capture_default_str();
  cmd->add_option("--served-model-name", cli->served_model_name,
                  "The model's name in the API (default: the --model path as given)");
  cmd->callback([cli, num_draft] {
    cli->num_draft_given = num_draft->count() > 0;
    run_serve(*cli);
  });
}

}  // namespace mlaspec::tools
