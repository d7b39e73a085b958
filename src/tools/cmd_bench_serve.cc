// `mlaspec bench-serve`: a load generator for `mlaspec serve` (or any OpenAI-compatible server):
// N prompts (from a JSONL file, or random token ids of a length range) sent as streaming
// completions by at most C concurrent clients, back to back or at Poisson arrivals of a request
// rate, with fixed or ranged max_tokens; reports throughput, TTFT, TPOT and ITL percentiles and
// the accept length the server reports in usage.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "mlaspec/core/status.h"
#include "mlaspec/tokenizer/tokenizer.h"
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
  double request_rate = std::numeric_limits<double>::infinity();
  uint64_t seed = 1;
  std::string input_len;   // "LO:HI" or "N": random prompts of that many tokens
  std::string output_len;  // "LO:HI" or "N": each request's max_tokens
  std::string tokenizer;   // for --input-len
};

// What request i sends, and when.
struct Planned {
  std::string prompt;
  int max_tokens = 0;
  double arrival = 0.0;  // s after the start
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
  double start = 0.0;             // s after the bench's start, when it was sent
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

// "LO:HI" or "N" (LO = HI = N), 1 <= LO <= HI <= 2^24; `option` names it in errors.
std::pair<int, int> parse_range(const std::string& text, const char* option) {
  const size_t colon = text.find(':');
  const std::string lo_s = text.substr(0, colon);
  const std::string hi_s = colon == std::string::npos ? lo_s : text.substr(colon + 1);
  const auto number = [&](const std::string& v) -> int64_t {
    if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos) {
      return -1;
    }
    return std::stoll(v);
  };
  const int64_t lo = number(lo_s), hi = number(hi_s);
  constexpr int64_t kMax = int64_t{1} << 24;
  if (lo < 1 || hi < lo || hi > kMax) {
    throw InputError(
        invalid_argument(std::string(option) + " '" + text +
                         "' is not LO:HI or N with 1 <= LO <= HI <= " + std::to_string(kMax)));
  }
  return {static_cast<int>(lo), static_cast<int>(hi)};
}

// Random prompts: lengths uniform in [lo, hi], ids uniform over the tokenizer's non-special
// tokens, decoded to text (the server re-encodes it, so its count can differ by a few tokens, as
// with sglang's random dataset; usage reports the real one).
std::vector<std::string> random_prompts(const BenchServeCli& cli, std::mt19937_64& rng) {
  if (cli.tokenizer.empty()) {
    throw InputError(invalid_argument(
        "--input-len needs --tokenizer (a tokenizer.json or a model directory) to make prompts "
        "of that many tokens"));
  }
  Result<tokenizer::Tokenizer> tok = tokenizer::Tokenizer::from_path(cli.tokenizer);
  if (!tok.ok()) throw InputError(tok.status().with_context("--tokenizer " + cli.tokenizer));
  std::vector<int32_t> ids;
  for (int32_t id = 0; id < tok->vocab_size(); ++id) {
    if (!tok->is_special(id) && tok->id_to_token(id).has_value()) ids.push_back(id);
  }
  if (ids.empty()) {
    throw InputError(invalid_argument("--tokenizer " + cli.tokenizer + " has no ordinary tokens"));
  }
  const auto [lo, hi] = parse_range(cli.input_len, "--input-len");
  std::uniform_int_distribution<int> len(lo, hi);
  std::uniform_int_distribution<size_t> pick(0, ids.size() - 1);
  std::vector<std::string> out;
  for (int i = 0; i < cli.num_prompts; ++i) {
    std::vector<int32_t> p(static_cast<size_t>(len(rng)));
    for (int32_t& id : p) id = ids[pick(rng)];
    Result<std::string> text = tok->decode(p, {.skip_special_tokens = true});
    if (!text.ok()) throw Error(text.status());
    out.push_back(std::move(*text));
  }
  return out;
}

std::vector<Planned> make_plan(const BenchServeCli& cli) {
  if (!(cli.request_rate > 0.0)) {
    throw InputError(invalid_argument("--request-rate " + std::to_string(cli.request_rate) +
                                      " must be > 0 requests per second (or inf)"));
  }
  // Every option is checked before any file is read.
  std::optional<std::uniform_int_distribution<int>> out_len;
  if (!cli.output_len.empty()) {
    const auto [lo, hi] = parse_range(cli.output_len, "--output-len");
    out_len.emplace(lo, hi);
  }
  if (!cli.input_len.empty()) (void)parse_range(cli.input_len, "--input-len");
  std::mt19937_64 rng(cli.seed);
  const std::vector<std::string> prompts =
      cli.input_len.empty() ? read_prompts(cli) : random_prompts(cli, rng);
  std::vector<Planned> plan(static_cast<size_t>(cli.num_prompts));
  std::exponential_distribution<double> gap(std::isinf(cli.request_rate) ? 1.0 : cli.request_rate);
  double t = 0.0;
  for (size_t i = 0; i < plan.size(); ++i) {
    plan[i].prompt = prompts[i % prompts.size()];
    plan[i].max_tokens = out_len ? (*out_len)(rng) : cli.max_tokens;
    if (!std::isinf(cli.request_rate)) {
      if (i > 0) t += gap(rng);
      plan[i].arrival = t;
    }
  }
  return plan;
}

#if MLASPEC_SERVE_HTTP
Sample run_one(const BenchServeCli& cli, const Planned& p) {
  Sample s;
  json body = {{"prompt", p.prompt},
               {"max_tokens", p.max_tokens},
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
  const std::vector<Planned> plan = make_plan(cli);
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
        const Planned& p = plan[static_cast<size_t>(i)];
        // Poisson arrivals: wait for this request's time (a request whose time has passed
        // because every client was busy goes at once: --concurrency caps what is in flight).
        std::this_thread::sleep_until(t0 + std::chrono::duration_cast<Clock::duration>(
                                               std::chrono::duration<double>(p.arrival)));
        const double start = std::chrono::duration<double>(Clock::now() - t0).count();
        Sample& s = samples[static_cast<size_t>(i)];
        s = run_one(cli, p);
        s.start = start;
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
  const std::string source =
      cli.input_len.empty() ? cli.prompts : "random ids of " + cli.input_len + " tokens";
  const std::string budget =
      cli.output_len.empty() ? std::to_string(cli.max_tokens) : cli.output_len;
  const double span = plan.back().arrival;
  std::printf("bench-serve: http://%s:%d, %d prompts from %s, concurrency %d, max_tokens %s\n",
              cli.host.c_str(), cli.port, cli.num_prompts, source.c_str(), cli.concurrency,
              budget.c_str());
  if (std::isinf(cli.request_rate)) {
    std::printf("arrivals        back to back (each client sends its next when one ends)\n");
  } else {
    std::printf("arrivals        Poisson at %.2f req/s (seed %llu), the last at %.2f s\n",
                cli.request_rate, static_cast<unsigned long long>(cli.seed), span);
  }
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
    json j = {
        {"url", "http://" + cli.host + ":" + std::to_string(cli.port)},
        {"num_prompts", cli.num_prompts},
        {"concurrency", cli.concurrency},
        // null with --output-len: each request's is in "requests"
        {"max_tokens", cli.output_len.empty() ? json(cli.max_tokens) : json(nullptr)},
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
        {"accept_length", tau.empty() ? json(nullptr) : json(mean(tau))},
        {"request_rate", std::isinf(cli.request_rate) ? json(nullptr) : json(cli.request_rate)},
        {"seed", cli.seed},
        {"arrival_span_s", span},
        {"input_len", cli.input_len.empty() ? json(nullptr) : json(cli.input_len)},
        {"output_len", cli.output_len.empty() ? json(nullptr) : json(cli.output_len)}};
    json requests = json::array();
    for (size_t i = 0; i < samples.size(); ++i) {
      const Sample& s = samples[i];
      requests.push_back({{"ok", s.ok},
                          {"max_tokens", plan[i].max_tokens},
                          {"prompt_tokens", s.prompt_tokens},
                          {"completion_tokens", s.completion_tokens},
                          {"arrival_s", plan[i].arrival},
                          {"start_s", s.start},
                          {"ttft_s", s.ttft},
                          {"e2e_s", s.e2e}});
    }
    j["requests"] = std::move(requests);
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
      "Load generator for `mlaspec serve`: --num-prompts streaming greedy completions (prompts "
      "from a JSONL file or random ids of --input-len tokens) by at most --concurrency clients, "
      "back to back or at a Poisson --request-rate; reports throughput, TTFT, TPOT, ITL and E2E "
      "mean/p50/p99 and the accept length the server reports.");
  cmd->add_option("--host", cli->host, "Server address")->capture_default_str();
  cmd->add_option("--port", cli->port, "Server port")
      ->check(CLI::Range(1, 65535))
      ->capture_default_str();
  CLI::Option* prompts =
      cmd->add_option("--prompts", cli->prompts, "JSONL file, one object per line")
          ->capture_default_str();
  CLI::Option* field = cmd->add_option("--prompt-field", cli->field,
                                       "The field of each line holding the prompt text")
                           ->capture_default_str();
  cmd->add_option("--model", cli->model, "The model name to send (default: none, the server's)");
  cmd->add_option("--concurrency", cli->concurrency, "Requests in flight at once")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  cmd->add_option("--num-prompts", cli->num_prompts, "Requests in all (prompts reused in order)")
      ->check(CLI::Range(1, 1 << 24))
      ->capture_default_str();
  CLI::Option* max_tokens =
      cmd->add_option("--max-tokens", cli->max_tokens, "max_tokens of each request")
          ->check(CLI::Range(1, 1 << 24))
          ->capture_default_str();
  // The options a replacement makes moot are refused beside it, not ignored.
  cmd->add_option("--output-len", cli->output_len,
                  "LO:HI: each request's max_tokens uniform in [LO, HI] (with --ignore-eos, its "
                  "output length); replaces --max-tokens")
      ->excludes(max_tokens);
  CLI::Option* input_len =
      cmd->add_option("--input-len", cli->input_len,
                      "LO:HI: random prompts of LO..HI tokens (uniform), random ids of "
                      "--tokenizer's ordinary tokens; replaces --prompts")
          ->excludes(prompts)
          ->excludes(field);
  cmd->add_option("--tokenizer", cli->tokenizer,
                  "tokenizer.json or a model directory, for --input-len")
      ->needs(input_len);
  cmd->add_option("--request-rate", cli->request_rate,
                  "Requests per second, Poisson arrivals (default inf: each client sends its next "
                  "request when one ends); --concurrency still caps those in flight")
      ->capture_default_str();
  cmd->add_option("--seed", cli->seed, "Seed of the arrivals, lengths and random prompts")
      ->capture_default_str();
  cmd->add_flag("--ignore-eos", cli->ignore_eos,
                "Ask the server to generate max-tokens tokens (vLLM's ignore_eos)");
  cmd->add_option("--json", cli->json_out, "Also write the results as JSON to this file");
  cmd->callback([cli] { run_bench_serve(*cli); });
}

}  // namespace mlaspec::tools
