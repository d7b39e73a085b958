// `mlaspec bench-serve`: a load generator for `mlaspec serve` (or any OpenAI-compatible server):
// N prompts from a JSONL file sent as streaming completions by C concurrent clients, reporting
// throughput, TTFT, TPOT and ITL percentiles and the accept length the server reports in usage.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "mlaspec/core/status.h"
#include "tools/commands.h"
#include "tools/output_file.h"

#if MLASPEC_SERVE_HTTP
#include <httplib.h>
#endif

namespace mlaspec::tools {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

struct BenchServeCli {
  std::string host = "127.0.0.1";
  int port = 8000;
  std::string prompts = "models/eval/heldout.jsonl";
  std::string field = "prompt";
  std::string model;
  int concurrency = 1;
  int num_prompts = 64;
  int max_tokens = 128;
  bool ignore_eos = false;
  std::string json_out;
};

// One request's measurements.
struct Sample {
  bool ok = false;
  std::string error;
  double ttft = 0.0;        // s, to the first chunk with text
  double e2e = 0.0;         // s
  std::vector<double> itl;  // s, between chunks with text
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;  // from usage
  double accept_length = 0.0;     // from usage (mlaspec's field); 0 if absent
};

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const double rank = p / 100.0 * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (rank - static_cast<double>(lo));
}

double mean(const std::vector<double>& v) {
  if (v.empty()) return std::nan("");
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

std::vector<std::string> read_prompts(const BenchServeCli& cli) {
  std::ifstream in(cli.prompts);
  if (!in) throw InputError(not_found("--prompts " + cli.prompts + " cannot be opened"));
  std::vector<std::string> out;
  std::string line;
  int64_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains(cli.field) || !j[cli.field].is_string()) {
      throw InputError(invalid_argument("--prompts " + cli.prompts + " line " + std::to_string(n) +
                                        ": not a JSON object with a string \"" + cli.field + "\""));
    }
    out.push_back(j[cli.field].get<std::string>());
  }
  if (out.empty()) throw InputError(invalid_argument("--prompts " + cli.prompts + " is empty"));
  return out;
}

#if MLASPEC_SERVE_HTTP
Sample run_one(const BenchServeCli& cli, const std::string& prompt) {
  Sample s;
  json body = {{"prompt", prompt},
               {"max_tokens", cli.max_tokens},
               {"temperature", 0},
               {"stream", true},
               {"stream_options", {{"include_usage", true}}}};
  if (!cli.model.empty()) body["model"] = cli.model;
  if (cli.ignore_eos) body["ignore_eos"] = true;
  httplib::Client client(cli.host, cli.port);
  client.set_read_timeout(600, 0);
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/completions";
  req.body = body.dump();
  req.set_header("Content-Type", "application/json");
  const Clock::time_point t0 = Clock::now();
  Clock::time_point last;
  bool first = true;
  std::string buffer;
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    buffer.append(data, n);
    size_t end;
    while ((end = buffer.find("\n\n")) != std::string::npos) {
      const std::string ev = buffer.substr(0, end);
      buffer.erase(0, end + 2);
      if (ev.rfind("data: ", 0) != 0 || ev == "data: [DONE]") continue;
      const json j = json::parse(ev.substr(6), nullptr, false);
      if (j.is_discarded()) continue;
      if (j.contains("error")) s.error = j["error"].value("message", "error");
      if (j.contains("usage") && j["usage"].is_object()) {
        s.prompt_tokens = j["usage"].value("prompt_tokens", int64_t{0});
        s.completion_tokens = j["usage"].value("completion_tokens", int64_t{0});
        s.accept_length = j["usage"].value("accept_length", 0.0);
      }
      bool has_text = false;
      for (const json& c : j.value("choices", json::array())) {
        has_text |= !c.value("text", std::string()).empty();
      }
      if (!has_text) continue;
      const Clock::time_point now = Clock::now();
      if (first) {
        s.ttft = std::chrono::duration<double>(now - t0).count();
        first = false;
      } else {
        s.itl.push_back(std::chrono::duration<double>(now - last).count());
      }
      last = now;
    }
    return true;
  };
  httplib::Result res = client.send(req);
  s.e2e = std::chrono::duration<double>(Clock::now() - t0).count();
  if (!res) {
    s.error = "no response (" + httplib::to_string(res.error()) + ")";
  } else if (res->status != 200) {
    s.error = "HTTP " + std::to_string(res->status) + ": " + res->body;
  }
  if (s.error.empty() && first) s.error = "no text in the stream";
  s.ok = s.error.empty();
  return s;
}
#endif

void run_bench_serve(const BenchServeCli& cli) {
#if !MLASPEC_SERVE_HTTP
  (void)cli;
  throw InputError(
      unsupported("mlaspec was built without cpp-httplib: install libcpp-httplib-dev "
                  "(scripts/install-deps.sh) and configure again"));
#else
  std::vector<std::string> prompts = read_prompts(cli);
  std::optional<OutputFile> out;
  if (!cli.json_out.empty()) {
    Result<OutputFile> f = OutputFile::open(cli.json_out, "--json");
    if (!f.ok()) throw InputError(f.status());
    out.emplace(std::move(*f));
  }
  {
    httplib::Client probe(cli.host, cli.port);
    if (!probe.Get("/v1/models")) {
      throw InputError(not_found("no server answers at http://" + cli.host + ":" +
                                 std::to_string(cli.port) + " (start one with mlaspec serve)"));
    }
  }
  std::vector<Sample> samples(static_cast<size_t>(cli.num_prompts));
  std::atomic<int> next{0};
  std::atomic<int> done{0};
  const Clock::time_point t0 = Clock::now();
  std::vector<std::thread> workers;
  for (int w = 0; w < cli.concurrency; ++w) {
    workers.emplace_back([&] {
      while (true) {
        const int i = next.fetch_add(1);
        if (i >= cli.num_prompts) return;
        samples[static_cast<size_t>(i)] =
            run_one(cli, prompts[static_cast<size_t>(i) % prompts.size()]);
        const int d = ++done;
        if (d % std::max(1, cli.num_prompts / 10) == 0 || d == cli.num_prompts) {
          std::fprintf(stderr, "\rbench-serve: %d / %d requests", d, cli.num_prompts);
        }
      }
    });
  }
  for (std::thread& t : workers) t.join();
  std::fprintf(stderr, "\n");
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();

  std::vector<double> ttft, tpot, itl, e2e, tau;
  int64_t ok = 0, out_tokens = 0, in_tokens = 0;
  std::string first_error;
  for (const Sample& s : samples) {
    if (!s.ok) {
      if (first_error.empty()) first_error = s.error;
      continue;
    }
    ++ok;
    out_tokens += s.completion_tokens;
    in_tokens += s.prompt_tokens;
    ttft.push_back(s.ttft);
    e2e.push_back(s.e2e);
    itl.insert(itl.end(), s.itl.begin(), s.itl.end());
    if (s.completion_tokens > 1) {
      tpot.push_back((s.e2e - s.ttft) / static_cast<double>(s.completion_tokens - 1));
    }
    if (s.accept_length > 0) tau.push_back(s.accept_length);
  }
  const int64_t failed = cli.num_prompts - ok;
  auto ms = [](double s) { return s * 1000.0; };
  std::printf("bench-serve: http://%s:%d, %d prompts from %s, concurrency %d, max_tokens %d\n",
              cli.host.c_str(), cli.port, cli.num_prompts, cli.prompts.c_str(), cli.concurrency,
              cli.max_tokens);
  std::printf("requests        %lld ok, %lld failed%s%s\n", static_cast<long long>(ok),
              static_cast<long long>(failed), first_error.empty() ? "" : " (first: ",
              first_error.empty() ? "" : (first_error + ")").c_str());
  std::printf("duration        %.2f s\n", wall);
  std::printf("throughput      %.2f req/s, %.1f output tok/s, %.1f total tok/s\n", ok / wall,
              static_cast<double>(out_tokens) / wall,
              static_cast<double>(out_tokens + in_tokens) / wall);
  std::printf("TTFT  ms        mean %.1f  p50 %.1f  p99 %.1f\n", ms(mean(ttft)),
              ms(percentile(ttft, 50)), ms(percentile(ttft, 99)));
  std::printf("TPOT  ms        mean %.2f  p50 %.2f  p99 %.2f\n", ms(mean(tpot)),
              ms(percentile(tpot, 50)), ms(percentile(tpot, 99)));
  std::printf(
      "ITL   ms        mean %.2f  p50 %.2f  p99 %.2f  (between chunks; a chunk is one "
      "verify step's tokens)\n",
      ms(mean(itl)), ms(percentile(itl, 50)), ms(percentile(itl, 99)));
  std::printf("E2E   ms        mean %.1f  p50 %.1f  p99 %.1f\n", ms(mean(e2e)),
              ms(percentile(e2e, 50)), ms(percentile(e2e, 99)));
  if (!tau.empty()) std::printf("accept length   mean %.2f tokens per verify step\n", mean(tau));
  if (out) {
    auto stats = [&](const std::vector<double>& v) {
      return json{{"mean", mean(v)}, {"p50", percentile(v, 50)}, {"p99", percentile(v, 99)}};
    };
    json j = {{"url", "http://" + cli.host + ":" + std::to_string(cli.port)},
              {"num_prompts", cli.num_prompts},
              {"concurrency", cli.concurrency},
              {"max_tokens", cli.max_tokens},
              {"completed", ok},
              {"failed", failed},
              {"duration_s", wall},
              {"request_throughput", ok / wall},
              {"output_throughput", static_cast<double>(out_tokens) / wall},
              {"input_tokens", in_tokens},
              {"output_tokens", out_tokens},
              {"ttft_s", stats(ttft)},
              {"tpot_s", stats(tpot)},
              {"itl_s", stats(itl)},
              {"e2e_s", stats(e2e)},
              {"accept_length", tau.empty() ? json(nullptr) : json(mean(tau))}};
    throw_if_error(
        out->write_and_close(j.dump(2, ' ', false, json::error_handler_t::replace) + "\n"));
  }
  if (failed > 0) {
    throw Error(internal_error(std::to_string(failed) + " of " + std::to_string(cli.num_prompts) +
                               " requests failed (first: " + first_error + ")"));
  }
#endif
}

}  // namespace

void add_bench_serve_command(CLI::App& app) {
  auto cli = std::make_shared<BenchServeCli>();
  CLI::App* cmd = app.add_subcommand(
      "bench-serve",
      "Load generator for `mlaspec serve`: --num-prompts streaming greedy completions from a JSONL "
      "file by --concurrency clients; reports throughput, TTFT, TPOT, ITL and E2E mean/p50/p99 "
      "and the accept length the server reports.");
  cmd->add_option("--host", cli->host, "Server address")->capture_default_str();
  cmd->add_option("--port", cli->port, "Server port")
      ->check(CLI::Range(1, 65535))
      ->capture_default_str();
  cmd->add_option("--prompts", cli->prompts, "JSONL file, one object per line")
      ->capture_default_str();
  cmd->add_option("--prompt-field", cli->field, "The field of each line holding the prompt text")
      ->capture_default_str();
  cmd->add_option("--model", cli->model, "The model name to send (default: none, the server's)");
  cmd->add_option("--concurrency", cli->concurrency, "Requests in flight at once")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  cmd->add_option("--num-prompts", cli->num_prompts, "Requests in all (prompts reused in order)")
      ->check(CLI::Range(1, 1 << 24))
      ->capture_default_str();
  cmd->add_option("--max-tokens", cli->max_tokens, "max_tokens of each request")
      ->check(CLI::Range(1, 1 << 24))
      ->capture_default_str();
  cmd->add_flag("--ignore-eos", cli->ignore_eos,
                "Ask the server to generate max-tokens tokens (vLLM's ignore_eos)");
  cmd->add_option("--json", cli->json_out, "Also write the results as JSON to this file");
  cmd->callback([cli] { run_bench_serve(*cli); });
}

}  // namespace mlaspec::tools
