// The HTTP server end to end on the shipped tiny pair (models/target + models/drafter, CPU), on an
// ephemeral loopback port, through httplib::Client: greedy text over HTTP equals the engine's
// alone, streaming equals non-streaming, 32 concurrent streams all get their own text, bad
// requests get their 4xx while a good stream goes on, a client that goes away frees its pages.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "mlaspec/kvcache/pool.h"
#include "mlaspec/model/model.h"
#include "mlaspec/serve/load.h"
#include "mlaspec/serve/server.h"
#include "mlaspec/tokenizer/tokenizer.h"

#if MLASPEC_SERVE_HTTP
#include <httplib.h>
#endif

namespace mlaspec::serve {
namespace {

using json = nlohmann::json;

#if MLASPEC_SERVE_HTTP

std::string models() {
  return std::string(MLASPEC_TEST_DATA_DIR) + "/../../models";
}

ServeOptions options(int max_running = 4, int max_queue = 64) {
  ServeOptions o;
  o.model_dir = models() + "/target";
  o.draft = "dflash";
  o.draft_model_dir = models() + "/drafter";
  o.port = 0;
  o.served_model_name = "tiny";
  o.scheduler.max_running = max_running;
  o.scheduler.max_queue = max_queue;
  o.scheduler.request_timeout_seconds = 60;
  return o;
}

std::vector<std::string> heldout_prompts(size_t n) {
  std::ifstream in(models() + "/eval/heldout.jsonl");
  std::vector<std::string> out;
  std::string line;
  while (out.size() < n && std::getline(in, line)) out.push_back(json::parse(line)["prompt"]);
  return out;
}

// The text the engine produces for `prompt` alone (greedy, EOS ends it, specials skipped): what
// `mlaspec generate` prints.
class Reference {
 public:
  // The server's engine options (the prefill chunk size matters: prefill keeps the BLAS GEMMs).
  explicit Reference(const ServeOptions& o = options(1)) {
    loaded_ = std::make_unique<LoadedEngine>(load_engine(o).value());
  }
  std::string text(const std::string& prompt, int max_tokens, bool ignore_eos = false) {
    return loaded_->tokenizer
        .decode(ids(prompt, max_tokens, ignore_eos), {.skip_special_tokens = true})
        .value();
  }
  // The generated token ids (the EOS included).
  std::vector<int32_t> ids(const std::string& prompt, int max_tokens, bool ignore_eos = false) {
    spec::Engine& e = loaded_->engine;
    std::vector<int32_t> ids = loaded_->tokenizer.encode(prompt).value();
    spec::GenerationRequest r;
    r.prompt = ids;
    r.max_new_tokens = max_tokens;
    if (loaded_->tokenizer.eos_id() && !ignore_eos) {
      r.stop_token_ids.push_back(*loaded_->tokenizer.eos_id());
    }
    spec::RequestId id = e.add_request(r).value();
    (void)e.prefill(id).value();
    while (e.num_running() > 0) (void)e.step().value();
    std::vector<int32_t> out(e.output(id).begin(), e.output(id).end());
    EXPECT_TRUE(e.release(id).ok());
    return out;
  }
  const tokenizer::Tokenizer& tokenizer() const { return loaded_->tokenizer; }

 private:
  std::unique_ptr<LoadedEngine> loaded_;
};

std::unique_ptr<Server> start(const ServeOptions& o) {
  Result<std::unique_ptr<Server>> s = Server::create(o);
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  if (!s.ok()) return nullptr;
  (*s)->start();
  return std::move(*s);
}

struct StreamResult {
  int status = 0;
  std::string text;
  std::vector<json> events;
  bool done = false;  // saw data: [DONE]
  std::string raw;
};

// Parses server-sent events: `data: ...` lines separated by blank lines; comments ignored.
void parse_sse(StreamResult& r) {
  size_t pos = 0;
  while (true) {
    const size_t end = r.raw.find("\n\n", pos);
    if (end == std::string::npos) break;
    const std::string ev = r.raw.substr(pos, end - pos);
    pos = end + 2;
    if (ev.rfind("data: ", 0) != 0) continue;
    const std::string data = ev.substr(6);
    if (data == "[DONE]") {
      r.done = true;
      continue;
    }
    json j = json::parse(data);
    for (const json& c : j.value("choices", json::array())) {
      if (c.contains("text")) r.text += c["text"].get<std::string>();
      if (c.contains("delta") && c["delta"].contains("content"))
        r.text += c["delta"]["content"].get<std::string>();
    }
    r.events.push_back(std::move(j));
  }
}

// A streaming POST; `stop_after` > 0 closes the connection after that many bytes arrived.
// `times` gets when each SSE data event arrived (its first byte); `on_data` runs at the first.
StreamResult post_stream(int port, const std::string& path, const json& body, size_t stop_after = 0,
                         std::vector<std::chrono::steady_clock::time_point>* times = nullptr,
                         const std::function<void()>& on_data = {}) {
  httplib::Client cli("127.0.0.1", port);
  cli.set_read_timeout(60, 0);
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.body = body.dump();
  req.set_header("Content-Type", "application/json");
  StreamResult r;
  size_t events = 0;
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    const size_t before = r.raw.size();
    r.raw.append(data, n);
    for (size_t at = r.raw.find("data: {", before >= 6 ? before - 6 : 0); at != std::string::npos;
         at = r.raw.find("data: {", at + 1)) {
      if (times) times->push_back(std::chrono::steady_clock::now());
      if (++events == 1 && on_data) on_data();
    }
    return stop_after == 0 || r.raw.size() < stop_after;
  };
  httplib::Result res = cli.send(req);
  if (res) r.status = res->status;
  parse_sse(r);
  return r;
}

httplib::Result post(int port, const std::string& path, const std::string& body) {
  httplib::Client cli("127.0.0.1", port);
  cli.set_read_timeout(60, 0);
  return cli.Post(path.c_str(), body, "application/json");
}

const std::string kPrompt =
    "<|bos|><|user|>Maya buys 9 oranges for 16 dollars each. She pays with 500 dollars. How much "
    "change does she get?<|assistant|>";

TEST(ServeHttp, GreedyCompletionEqualsTheEngineAlone) {
  std::unique_ptr<Server> s = start(options());
  ASSERT_TRUE(s);
  Reference ref;
  const std::string expected = ref.text(kPrompt, 64);
  ASSERT_FALSE(expected.empty());
  httplib::Result res =
      post(s->port(), "/v1/completions",
           json{{"model", "tiny"}, {"prompt", kPrompt}, {"max_tokens", 64}}.dump());
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const json j = json::parse(res->body);
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["model"], "tiny");
  EXPECT_EQ(j["choices"][0]["text"], expected);
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");  // the model ends with its EOS
  EXPECT_EQ(j["usage"]["prompt_tokens"], 31);
  EXPECT_GT(j["usage"]["completion_tokens"].get<int>(), 10);
  EXPECT_EQ(j["usage"]["total_tokens"].get<int>(), 31 + j["usage"]["completion_tokens"].get<int>());
  EXPECT_GT(j["usage"]["accept_length"].get<double>(), 2.0);  // the trained drafter is good

  // Streaming gives the same text, then the usage chunk, then [DONE].
  StreamResult st = post_stream(s->port(), "/v1/completions",
                                {{"prompt", kPrompt},
                                 {"max_tokens", 64},
                                 {"stream", true},
                                 {"stream_options", {{"include_usage", true}}}});
  EXPECT_EQ(st.status, 200);
  EXPECT_TRUE(st.done);
  EXPECT_EQ(st.text, expected);
  ASSERT_GE(st.events.size(), 3u);
  EXPECT_EQ(st.events[st.events.size() - 2]["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(st.events.back()["usage"]["completion_tokens"], j["usage"]["completion_tokens"]);

  // max_tokens cuts with finish_reason length; a stop string cuts before itself.
  httplib::Result len =
      post(s->port(), "/v1/completions", json{{"prompt", kPrompt}, {"max_tokens", 5}}.dump());
  ASSERT_TRUE(len);
  EXPECT_EQ(json::parse(len->body)["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(json::parse(len->body)["usage"]["completion_tokens"], 5);
  httplib::Result stop =
      post(s->port(), "/v1/completions",
           json{{"prompt", kPrompt}, {"max_tokens", 64}, {"stop", "144"}}.dump());
  ASSERT_TRUE(stop);
  const json sj = json::parse(stop->body);
  EXPECT_EQ(sj["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(sj["choices"][0]["text"], expected.substr(0, expected.find("144")));
}

// log_softmax of the target's logits for each generated token, from one forward of the model
// layer over the prompt and the generated tokens (neither the engine nor the server): row i is the
// distribution generated token i was drawn from.
std::vector<std::vector<double>> reference_logprobs(const std::vector<int32_t>& prompt,
                                                    const std::vector<int32_t>& generated) {
  model::Model m = model::Model::load(models() + "/target").value();
  std::vector<int32_t> seq = prompt;
  seq.insert(seq.end(), generated.begin(), generated.end() - 1);
  const int page_size = 64;
  const int pages = static_cast<int>((seq.size() + page_size - 1) / page_size);
  kv::KvPool pool = kv::KvPool::create(m.kv_pool_spec(pages, page_size, DType::kBF16)).value();
  std::vector<int32_t> table(static_cast<size_t>(pages)), pos(seq.size());
  std::iota(table.begin(), table.end(), 0);
  std::iota(pos.begin(), pos.end(), 0);
  model::ForwardRequest r{seq, pos, table, model::LogitsMode::kAll};
  model::ForwardOptions opt;
  opt.deterministic = true;
  const std::vector<float> logits = m.forward({&r, 1}, pool, opt).value().requests[0].logits;
  const size_t vocab = static_cast<size_t>(m.config().vocab_size);
  std::vector<std::vector<double>> out;
  for (size_t i = 0; i < generated.size(); ++i) {
    const float* row = logits.data() + (prompt.size() - 1 + i) * vocab;
    double max = -std::numeric_limits<double>::infinity(), sum = 0.0;
    for (size_t t = 0; t < vocab; ++t) max = std::max(max, static_cast<double>(row[t]));
    for (size_t t = 0; t < vocab; ++t) sum += std::exp(row[t] - max);
    std::vector<double> lp(vocab);
    for (size_t t = 0; t < vocab; ++t) lp[t] = row[t] - max - std::log(sum);
    out.push_back(std::move(lp));
  }
  return out;
}

// The k largest of a row, most likely first (ties: lower id).
std::vector<int32_t> top_ids(const std::vector<double>& row, size_t k) {
  std::vector<int32_t> ids(row.size());
  std::iota(ids.begin(), ids.end(), 0);
  std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) { return row[a] > row[b]; });
  ids.resize(k);
  return ids;
}

TEST(ServeHttp, LogprobsAreTheTargetsLogSoftmax) {
  constexpr int kTokens = 24, kTop = 5;
  // Prefill runs in chunks and steps in row-invariant forwards, the reference in one forward:
  // the same math, rounded differently (bf16 KV, GEMM blocking).
  constexpr double kTol = 1e-3;
  Reference ref;
  const std::vector<int32_t> prompt = ref.tokenizer().encode(kPrompt).value();
  const std::vector<int32_t> generated = ref.ids(kPrompt, kTokens);
  ASSERT_EQ(generated.size(), static_cast<size_t>(kTokens));
  const std::vector<std::vector<double>> want = reference_logprobs(prompt, generated);
  auto token_text = [&](int32_t id) {
    return ref.tokenizer().decode({&id, 1}, {.skip_special_tokens = false}).value();
  };

  ServeOptions plain = options();
  plain.draft = "none";
  std::vector<json> completions, chats;  // with the drafter, then without
  for (const ServeOptions& o : {options(), plain}) {
    std::unique_ptr<Server> s = start(o);
    ASSERT_TRUE(s);
    httplib::Result res =
        post(s->port(), "/v1/completions",
             json{{"prompt", kPrompt}, {"max_tokens", kTokens}, {"logprobs", kTop}}.dump());
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200) << res->body;
    completions.push_back(json::parse(res->body)["choices"][0]["logprobs"]);
    const json chat = {{"messages",
                        {{{"role", "user"},
                          {"content",
                           "Maya buys 9 oranges for 16 dollars each. She pays with 500 dollars. "
                           "How much change does she get?"}}}},
                       {"max_tokens", kTokens},
                       {"logprobs", true},
                       {"top_logprobs", kTop},
                       {"stream", true}};
    StreamResult st = post_stream(s->port(), "/v1/chat/completions", chat);
    ASSERT_TRUE(st.done);
    json content = json::array();
    for (const json& ev : st.events) {
      for (const json& c : ev.value("choices", json::array())) {
        if (c["logprobs"].is_null()) continue;
        for (const json& e : c["logprobs"]["content"]) content.push_back(e);
      }
    }
    chats.push_back(content);
  }

  // Non-streaming completions: OpenAI's legacy shape, equal to the reference.
  const json& lp = completions[0];
  ASSERT_EQ(lp["tokens"].size(), generated.size()) << lp.dump();
  ASSERT_EQ(lp["token_logprobs"].size(), generated.size());
  int64_t offset = 0;
  for (size_t i = 0; i < generated.size(); ++i) {
    SCOPED_TRACE("token " + std::to_string(i));
    EXPECT_EQ(lp["tokens"][i], token_text(generated[i]));
    EXPECT_NEAR(lp["token_logprobs"][i].get<double>(), want[i][generated[i]], kTol);
    // Greedy: the emitted token is the most likely one.
    EXPECT_EQ(top_ids(want[i], 1)[0], generated[i]);
    const json& top = lp["top_logprobs"][i];
    EXPECT_LE(top.size(), static_cast<size_t>(kTop + 1));
    for (const int32_t t : top_ids(want[i], kTop)) {
      ASSERT_TRUE(top.contains(token_text(t))) << top.dump();
      EXPECT_NEAR(top[token_text(t)].get<double>(), want[i][t], kTol);
    }
    EXPECT_EQ(lp["text_offset"][i], offset);
    offset += static_cast<int64_t>(token_text(generated[i]).size());
  }

  // Streaming chat: one entry per token across the chunks, top_logprobs sorted, the chosen
  // token's logprob the first of them (greedy).
  const json& content = chats[0];
  ASSERT_EQ(content.size(), generated.size()) << content.dump();
  for (size_t i = 0; i < generated.size(); ++i) {
    SCOPED_TRACE("chat token " + std::to_string(i));
    const json& e = content[i];
    EXPECT_EQ(e["token"], token_text(generated[i]));
    EXPECT_NEAR(e["logprob"].get<double>(), want[i][generated[i]], kTol);
    const std::string tok = e["token"];
    EXPECT_EQ(e["bytes"].size(), tok.size());
    const json& top = e["top_logprobs"];
    ASSERT_EQ(top.size(), static_cast<size_t>(kTop));
    const std::vector<int32_t> ids = top_ids(want[i], kTop);
    for (size_t j = 0; j < top.size(); ++j) {
      EXPECT_EQ(top[j]["token"], token_text(ids[j]));
      EXPECT_NEAR(top[j]["logprob"].get<double>(), want[i][ids[j]], kTol);
      if (j > 0) {
        EXPECT_GE(top[j - 1]["logprob"].get<double>(), top[j]["logprob"].get<double>());
      }
    }
    EXPECT_EQ(top[0]["logprob"], e["logprob"]);
  }

  // Deterministic mode: the drafter changes how many tokens a step emits, not the values.
  EXPECT_EQ(completions[0], completions[1]);
  EXPECT_EQ(chats[0], chats[1]);
}

// Chunked prefill: a long prompt is prefilled one 64-token chunk per loop iteration while a
// running stream keeps receiving tokens between its chunks; both texts equal the engine's alone.
TEST(ServeHttp, LongPromptPrefillsBetweenStepsOfARunningStream) {
  ServeOptions o = options();
  o.draft = "none";  // one token per step: the running stream lasts
  o.prefill_chunk_tokens = 64;
  o.scheduler.prefill_tokens_per_iteration = 64;
  std::string question;
  for (const std::string& p : heldout_prompts(20)) {
    question += p.substr(p.find("<|user|>") + 8, p.find("<|assistant|>") - p.find("<|user|>") - 8);
    question += " ";
  }
  const std::string long_prompt = "<|bos|><|user|>" + question + "<|assistant|>";
  ServeOptions ref_options = o;
  ref_options.scheduler.max_running = 1;
  Reference ref(ref_options);
  const int64_t long_tokens =
      static_cast<int64_t>(ref.tokenizer().encode(long_prompt).value().size());
  ASSERT_GT(long_tokens, 500);
  ASSERT_LT(long_tokens, 1000);
  const int64_t chunks = (long_tokens + 63) / 64;
  const std::string want_a = ref.text(kPrompt, 150, /*ignore_eos=*/true);
  const std::string want_b = ref.text(long_prompt, 16);

  std::unique_ptr<Server> s = start(o);
  ASSERT_TRUE(s);
  std::mutex mu;
  std::condition_variable cv;
  bool a_running = false;
  StreamResult a;
  std::vector<std::chrono::steady_clock::time_point> a_times, b_times;
  std::thread first([&] {
    a = post_stream(
        s->port(), "/v1/completions",
        {{"prompt", kPrompt}, {"max_tokens", 150}, {"ignore_eos", true}, {"stream", true}}, 0,
        &a_times, [&] {
          std::lock_guard<std::mutex> lock(mu);
          a_running = true;
          cv.notify_all();
        });
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(60), [&] { return a_running; }));
  }
  const auto sent = std::chrono::steady_clock::now();
  StreamResult b =
      post_stream(s->port(), "/v1/completions",
                  {{"prompt", long_prompt}, {"max_tokens", 16}, {"stream", true}}, 0, &b_times);
  first.join();
  ASSERT_TRUE(a.done && b.done);
  EXPECT_EQ(a.text, want_a);
  EXPECT_EQ(b.text, want_b);
  ASSERT_FALSE(b_times.empty());
  // B's first token comes after its last chunk; A steps after every chunk but the last (one step
  // per iteration; whole-prompt prefill would give A at most the steps before B was admitted).
  const auto between = std::count_if(a_times.begin(), a_times.end(),
                                     [&](auto t) { return t > sent && t < b_times.front(); });
  EXPECT_GE(between, chunks - 2) << chunks << " chunks";
  EXPECT_NE(
      s->metrics().render().find("mlaspec_prefill_chunks_total " + std::to_string(1 + chunks)),
      std::string::npos)
      << s->metrics().render();
}

// A pool of 5 pages (64 tokens each) for 4 requests of 2 pages each: admitted against their
// prompts, they outgrow the pool and the newest are preempted and recomputed. Every request
// completes with its text alone; the pool is empty at the end.
TEST(ServeHttp, PreemptedRequestsCompleteWithTheirTextAlone) {
  ServeOptions o = options(/*max_running=*/4);
  o.kv_pages = 5;
  constexpr int kTokens = 70;
  const std::vector<std::string> prompts = heldout_prompts(4);
  Reference ref;
  std::vector<std::string> want;
  for (const std::string& p : prompts) want.push_back(ref.text(p, kTokens, /*ignore_eos=*/true));
  std::unique_ptr<Server> s = start(o);
  ASSERT_TRUE(s);
  std::vector<std::string> got(prompts.size());
  std::vector<int> status(prompts.size());
  std::vector<std::thread> clients;
  for (size_t i = 0; i < prompts.size(); ++i) {
    clients.emplace_back([&, i] {
      const json body = {{"prompt", prompts[i]}, {"max_tokens", kTokens}, {"ignore_eos", true}};
      if (i % 2 == 0) {  // streaming and not
        json streamed = body;
        streamed["stream"] = true;
        StreamResult r = post_stream(s->port(), "/v1/completions", streamed);
        status[i] = r.done ? r.status : 0;
        got[i] = r.text;
      } else {
        httplib::Result res = post(s->port(), "/v1/completions", body.dump());
        status[i] = res ? res->status : 0;
        if (res && res->status == 200) {
          const json j = json::parse(res->body);
          got[i] = j["choices"][0]["text"];
          EXPECT_EQ(j["usage"]["completion_tokens"], kTokens);
        }
      }
    });
  }
  for (std::thread& t : clients) t.join();
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(status[i], 200) << i;
    EXPECT_EQ(got[i], want[i]) << "request " << i;
  }
  // A request's outcome is counted when the server finishes answering it, which can be just
  // after its client has read the last byte: wait (bounded) for the fourth.
  std::string m = s->metrics().render();
  for (int i = 0;
       i < 100 && m.find("mlaspec_requests_total{outcome=\"ok\"} 4") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    m = s->metrics().render();
  }
  const size_t at = m.find("\nmlaspec_preemptions_total ");
  ASSERT_NE(at, std::string::npos);
  const int preemptions = std::stoi(m.substr(at + 27));
  EXPECT_GT(preemptions, 0) << m;
  std::printf("preemptions: %d\n", preemptions);
  const EngineGauges g = s->metrics().gauges();
  EXPECT_EQ(g.kv_pages_used, 0);
  EXPECT_EQ(g.kv_pages_reserved, 0);
  EXPECT_EQ(g.running, 0);
  EXPECT_NE(m.find("mlaspec_requests_total{outcome=\"ok\"} 4"), std::string::npos) << m;
}

TEST(ServeHttp, ChatIsFormattedWithTheModelsTemplate) {
  std::unique_ptr<Server> s = start(options());
  ASSERT_TRUE(s);
  const std::string question =
      "Maya buys 9 oranges for 16 dollars each. She pays with 500 dollars. How much change does "
      "she get?";
  Reference ref;
  // The model's chat_template: <|bos|><|user|>QUESTION<|assistant|>.
  const std::string expected = ref.text(kPrompt, 48);
  const json body = {{"model", "tiny"},
                     {"messages", {{{"role", "user"}, {"content", question}}}},
                     {"max_tokens", 48}};
  httplib::Result res = post(s->port(), "/v1/chat/completions", body.dump());
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const json j = json::parse(res->body);
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(j["choices"][0]["message"]["content"], expected);
  EXPECT_EQ(j["usage"]["prompt_tokens"], 31);
  json stream_body = body;
  stream_body["stream"] = true;
  StreamResult st = post_stream(s->port(), "/v1/chat/completions", stream_body);
  EXPECT_TRUE(st.done);
  EXPECT_EQ(st.text, expected);
  ASSERT_FALSE(st.events.empty());
  EXPECT_EQ(st.events.front()["object"], "chat.completion.chunk");
  EXPECT_EQ(st.events.front()["choices"][0]["delta"]["role"], "assistant");
}

TEST(ServeHttp, ModelsHealthMetrics) {
  std::unique_ptr<Server> s = start(options());
  ASSERT_TRUE(s);
  httplib::Client cli("127.0.0.1", s->port());
  httplib::Result models_res = cli.Get("/v1/models");
  ASSERT_TRUE(models_res);
  EXPECT_EQ(json::parse(models_res->body)["data"][0]["id"], "tiny");
  httplib::Result health = cli.Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  ASSERT_TRUE(
      post(s->port(), "/v1/completions", json{{"prompt", kPrompt}, {"max_tokens", 16}}.dump()));
  httplib::Result m = cli.Get("/metrics");
  ASSERT_TRUE(m);
  for (const char* needle :
       {"mlaspec_requests_total{outcome=\"ok\"} 1", "mlaspec_generation_tokens_total 16",
        "mlaspec_time_to_first_token_seconds_count 1", "mlaspec_inter_token_latency_seconds_bucket",
        "mlaspec_accept_length_bucket{le=\"8\"}",
        "mlaspec_spec_position_acceptance{position=\"0\"}", "mlaspec_kv_pages_used 0",
        "mlaspec_kv_pages_total", "mlaspec_attention_calls_total{backend=\"cpu_reference\"} ",
        "mlaspec_attention_rows_total{backend=\"cpu_reference\"} "}) {
    EXPECT_NE(m->body.find(needle), std::string::npos) << needle << "\n" << m->body;
  }
  // Every step's verify width is recorded beside its accept length; DFlash sends at most
  // num_draft (7) drafts, and at least one step sent all 7.
  auto metric = [&](const std::string& name) {
    const size_t i = m->body.find(name + " ");
    EXPECT_NE(i, std::string::npos) << name << "\n" << m->body;
    return i == std::string::npos ? -1.0 : std::stod(m->body.substr(i + name.size() + 1));
  };
  const double steps = metric("mlaspec_accept_length_count");
  EXPECT_GT(steps, 0);
  EXPECT_EQ(metric("mlaspec_verify_width_count"), steps);
  EXPECT_EQ(metric("mlaspec_verify_width_bucket{le=\"7\"}"), steps);
  EXPECT_LT(metric("mlaspec_verify_width_bucket{le=\"6\"}"), steps);
  // The CPU server's attention all ran on the reference: at least one call per layer per token.
  const std::string calls = "mlaspec_attention_calls_total{backend=\"cpu_reference\"} ";
  const size_t at = m->body.find(calls);
  ASSERT_NE(at, std::string::npos);
  EXPECT_GE(std::stoll(m->body.substr(at + calls.size())), 16) << m->body;
  httplib::Result unknown = cli.Get("/v2/nothing");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
  EXPECT_EQ(json::parse(unknown->body)["error"]["code"], "not_found");
}

// A DSpark checkpoint for the shipped target in `dir`: the shipped DFlash backbone's weights
// (models/drafter, copied) with no Markov head and a random confidence head c_k = sigmoid(w . h_k
// + bias), w ~ N(0, 1 / hidden) (f32, in a shard of its own, both shards listed by
// model.safetensors.index.json).
void write_shipped_dspark(const std::filesystem::path& dir, uint32_t seed, float bias) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  const fs::path drafter = fs::path(models()) / "drafter";
  fs::copy_file(drafter / "model.safetensors", dir / "backbone.safetensors",
                fs::copy_options::overwrite_existing);
  std::ifstream cfg_in(drafter / "config.json");
  json cfg = json::parse(cfg_in);
  cfg["model_type"] = "dspark";
  cfg["markov_rank"] = 0;
  cfg["confidence_head"] = true;
  std::ofstream(dir / "config.json") << cfg.dump(2);
  // The backbone shard's tensor names, from its header (8-byte little-endian length, then JSON).
  std::ifstream bb(dir / "backbone.safetensors", std::ios::binary);
  uint64_t n = 0;
  bb.read(reinterpret_cast<char*>(&n), 8);
  std::string header(n, ' ');
  bb.read(header.data(), static_cast<std::streamsize>(n));
  const json tensors = json::parse(header);
  json index;
  for (auto it = tensors.begin(); it != tensors.end(); ++it) {
    if (it.key() != "__metadata__") index["weight_map"][it.key()] = "backbone.safetensors";
  }
  index["weight_map"]["confidence.weight"] = "heads.safetensors";
  index["weight_map"]["confidence.bias"] = "heads.safetensors";
  std::ofstream(dir / "model.safetensors.index.json") << index.dump(2);
  const int hidden = cfg["hidden_size"].get<int>();
  std::vector<float> w(static_cast<size_t>(hidden) + 1);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f / std::sqrt(static_cast<float>(hidden)));
  for (int i = 0; i < hidden; ++i) w[static_cast<size_t>(i)] = normal(rng);
  w[static_cast<size_t>(hidden)] = bias;
  json h;
  h["confidence.weight"] = {
      {"dtype", "F32"}, {"shape", {1, hidden}}, {"data_offsets", {0, 4 * hidden}}};
  h["confidence.bias"] = {
      {"dtype", "F32"}, {"shape", {1}}, {"data_offsets", {4 * hidden, 4 * hidden + 4}}};
  std::string hs = h.dump();
  hs.resize((hs.size() + 7) / 8 * 8, ' ');
  const uint64_t hn = hs.size();
  std::ofstream out(dir / "heads.safetensors", std::ios::binary);
  out.write(reinterpret_cast<const char*>(&hn), 8);
  out.write(hs.data(), static_cast<std::streamsize>(hs.size()));
  out.write(reinterpret_cast<const char*>(w.data()), static_cast<std::streamsize>(4 * w.size()));
}

// The per-bucket (not cumulative) counts of a Prometheus histogram in `body`, by bound.
std::map<std::string, double> histogram_counts(const std::string& body, const std::string& name) {
  std::map<std::string, double> out;
  double before = 0;
  size_t pos = 0;
  const std::string key = name + "_bucket{le=\"";
  while ((pos = body.find(key, pos)) != std::string::npos) {
    const size_t q = body.find('"', pos + key.size());
    const std::string le = body.substr(pos + key.size(), q - pos - key.size());
    const double cumulative = std::stod(body.substr(body.find(' ', q) + 1));
    out[le] = cumulative - before;
    before = cumulative;
    pos = q;
  }
  return out;
}

// A histogram's `_sum / _count` in a /metrics body.
double histogram_mean(const std::string& body, const std::string& name) {
  auto value = [&](const std::string& key) {
    const size_t i = body.find(key + " ");
    EXPECT_NE(i, std::string::npos) << key;
    return i == std::string::npos ? 0.0 : std::stod(body.substr(i + key.size() + 1));
  };
  const double count = value(name + "_count");
  return count > 0 ? value(name + "_sum") / count : 0.0;
}

// serve --draft dspark on the shipped target, fixed and adaptive widths: the texts equal plain
// greedy's, and the mlaspec_verify_width histogram shows the widths (one per step, beside its
// accept length): adaptive sends fewer drafts per step on average than fixed, and more than one
// width.
TEST(ServeHttp, DSparkWidthsShowInMetricsAndKeepGreedyText) {
  const uint32_t seed = std::random_device{}();
  std::printf("[ info ] dspark confidence head seed %u\n", seed);
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("mlaspec-serve-dspark-" + std::to_string(seed));
  // Confidences around sigmoid(0) = 0.5: the adaptive rule stops a block once the product of
  // its confidences no longer pays for a verify row (a few drafts in), where fixed sends all 7.
  write_shipped_dspark(dir, seed, 0.0f);
  ServeOptions plain_options = options(1);
  plain_options.draft = "none";
  Reference plain(plain_options);
  const std::vector<std::string> prompts = heldout_prompts(4);
  double mean_width[2] = {0, 0};
  for (const auto mode :
       {spec::VerifyWidthPolicy::Mode::kFixed, spec::VerifyWidthPolicy::Mode::kAdaptive}) {
    const bool adaptive = mode == spec::VerifyWidthPolicy::Mode::kAdaptive;
    SCOPED_TRACE(adaptive ? "adaptive" : "fixed");
    ServeOptions o = options(4);
    o.draft = "dspark";
    o.draft_model_dir = dir.string();
    o.verify_width = mode;
    std::unique_ptr<Server> s = start(o);
    ASSERT_TRUE(s);
    for (const std::string& prompt : prompts) {
      httplib::Result r =
          post(s->port(), "/v1/completions", json{{"prompt", prompt}, {"max_tokens", 48}}.dump());
      ASSERT_TRUE(r);
      ASSERT_EQ(r->status, 200) << r->body;
      EXPECT_EQ(json::parse(r->body)["choices"][0]["text"], plain.text(prompt, 48)) << prompt;
    }
    httplib::Client cli("127.0.0.1", s->port());
    httplib::Result m = cli.Get("/metrics");
    ASSERT_TRUE(m);
    const auto widths = histogram_counts(m->body, "mlaspec_verify_width");
    const auto gains = histogram_counts(m->body, "mlaspec_accept_length");
    double steps = 0, width_steps = 0;
    int distinct = 0;
    for (const auto& [le, c] : gains) steps += c;
    for (const auto& [le, c] : widths) {
      width_steps += c;
      distinct += c > 0 ? 1 : 0;
    }
    EXPECT_GT(steps, 0) << m->body;
    EXPECT_EQ(width_steps, steps) << m->body;
    if (adaptive) EXPECT_GE(distinct, 2) << m->body;
    mean_width[adaptive] = histogram_mean(m->body, "mlaspec_verify_width");
  }
  std::printf("[ info ] mean verify width: fixed %.2f, adaptive %.2f\n", mean_width[0],
              mean_width[1]);
  EXPECT_GT(mean_width[0], 6.0);  // 7 but near each request's token limit
  EXPECT_LT(mean_width[1], mean_width[0] - 0.5);
  std::filesystem::remove_all(dir);
}

TEST(ServeHttp, ThirtyTwoConcurrentStreamsGetTheirOwnText) {
  std::unique_ptr<Server> s = start(options(/*max_running=*/16));
  ASSERT_TRUE(s);
  // 8 distinct held-out prompts, each sent by 4 of the 32 clients (their references alone are
  // the cost of the test under ASan).
  const std::vector<std::string> distinct = heldout_prompts(8);
  ASSERT_EQ(distinct.size(), 8u);
  constexpr int kTokens = 12;
  Reference ref;
  std::vector<std::string> prompts, expected;
  std::vector<std::string> texts;
  for (const std::string& p : distinct) texts.push_back(ref.text(p, kTokens));
  for (size_t i = 0; i < 32; ++i) {
    prompts.push_back(distinct[i % distinct.size()]);
    expected.push_back(texts[i % distinct.size()]);
  }
  std::vector<StreamResult> got(prompts.size());
  std::vector<std::thread> clients;
  for (size_t i = 0; i < prompts.size(); ++i) {
    clients.emplace_back([&, i] {
      got[i] = post_stream(s->port(), "/v1/completions",
                           {{"prompt", prompts[i]}, {"max_tokens", kTokens}, {"stream", true}});
    });
  }
  for (std::thread& t : clients) t.join();
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(got[i].status, 200) << i;
    EXPECT_TRUE(got[i].done) << i;
    EXPECT_EQ(got[i].text, expected[i]) << "client " << i;
  }
  EXPECT_EQ(s->metrics().gauges().kv_pages_used, 0);
}

TEST(ServeHttp, BadRequestsGetTheirErrorWhileAGoodStreamGoesOn) {
  std::unique_ptr<Server> s = start(options());
  ASSERT_TRUE(s);
  Reference ref;
  const std::string expected = ref.text(kPrompt, 64);
  StreamResult good;
  std::thread stream([&] {
    good = post_stream(s->port(), "/v1/completions",
                       {{"prompt", kPrompt}, {"max_tokens", 64}, {"stream", true}});
  });
  const std::string long_prompt(5000, 'x');
  struct Bad {
    const char* path;
    std::string body;
    int status;
  };
  const std::vector<Bad> bad = {
      {"/v1/completions", "{\"prompt\": ", 400},
      {"/v1/completions", R"({"prompt": 3})", 400},
      {"/v1/completions", R"({"prompt": "x", "model": "nope"})", 404},
      {"/v1/completions", R"({"prompt": "x", "max_tokens": -1})", 400},
      {"/v1/completions", R"({"prompt": "x", "max_tokens": 100000000})", 400},
      {"/v1/completions", json{{"prompt", long_prompt}}.dump(), 400},
      {"/v1/completions", "{\"prompt\": \"\xc3\x28\"}", 400},
      {"/v1/completions", R"({"prompt": "x", "logprobs": 21})", 400},
      {"/v1/chat/completions", R"({"messages": "hi"})", 400},
  };
  for (const Bad& b : bad) {
    httplib::Result res = post(s->port(), b.path, b.body);
    ASSERT_TRUE(res) << b.body;
    EXPECT_EQ(res->status, b.status) << b.body << " -> " << res->body;
    const json j = json::parse(res->body);
    EXPECT_TRUE(j["error"]["message"].is_string()) << res->body;
    EXPECT_TRUE(j["error"].contains("type") && j["error"].contains("param") &&
                j["error"].contains("code"));
  }
  stream.join();
  EXPECT_EQ(good.status, 200);
  EXPECT_TRUE(good.done);
  EXPECT_EQ(good.text, expected);
}

TEST(ServeHttp, DisconnectedClientFreesItsPages) {
  std::unique_ptr<Server> s = start(options());
  ASSERT_TRUE(s);
  // ignore_eos keeps it generating for seconds; the client leaves after the first bytes.
  StreamResult r = post_stream(
      s->port(), "/v1/completions",
      {{"prompt", kPrompt}, {"max_tokens", 900}, {"ignore_eos", true}, {"stream", true}},
      /*stop_after=*/1);
  EXPECT_FALSE(r.done);
  // The server notices at its next write, cancels, and the loop frees the pages.
  bool freed = false;
  for (int i = 0; i < 400 && !freed; ++i) {
    const EngineGauges g = s->metrics().gauges();
    freed = s->metrics().render().find("mlaspec_requests_total{outcome=\"cancelled\"} 1") !=
                std::string::npos &&
            g.kv_pages_used == 0 && g.running == 0 && g.kv_pages_reserved == 0;
    if (!freed) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  EXPECT_TRUE(freed) << s->metrics().render();
}

// A non-streaming client that gives up (read timeout: its socket closes) while its request runs:
// the handler notices (cpp-httplib 0.11 does not tell it; it peeks at the socket), the request is
// cancelled rather than run to its end, and its pages return.
TEST(ServeHttp, DisconnectedNonStreamingClientIsCancelled) {
  std::unique_ptr<Server> s = start(options());
  ASSERT_TRUE(s);
  {
    httplib::Client cli("127.0.0.1", s->port());
    cli.set_read_timeout(0, 300000);  // 0.3 s; 900 tokens take seconds
    httplib::Result res =
        cli.Post("/v1/completions",
                 json{{"prompt", kPrompt}, {"max_tokens", 900}, {"ignore_eos", true}}.dump(),
                 "application/json");
    EXPECT_FALSE(res);  // timed out
  }
  bool freed = false;
  std::string m;
  for (int i = 0; i < 200 && !freed; ++i) {
    const EngineGauges g = s->metrics().gauges();
    m = s->metrics().render();
    freed = m.find("mlaspec_requests_total{outcome=\"cancelled\"} 1") != std::string::npos &&
            g.kv_pages_used == 0 && g.running == 0;
    if (!freed) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(freed) << m;
  // Cancelled, not run to its end: no completed request and far fewer than 900 tokens' steps.
  EXPECT_NE(m.find("mlaspec_requests_total{outcome=\"ok\"} 0"), std::string::npos) << m;
  // The server goes on serving.
  httplib::Result ok =
      post(s->port(), "/v1/completions", json{{"prompt", kPrompt}, {"max_tokens", 4}}.dump());
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
}

TEST(ServeHttp, FullQueueIsRefusedWithTheReason) {
  // One request runs, none may wait: a second one while the first runs is refused at once.
  std::unique_ptr<Server> s = start(options(/*max_running=*/1, /*max_queue=*/0));
  ASSERT_TRUE(s);
  const json long_request = {
      {"prompt", kPrompt}, {"max_tokens", 900}, {"ignore_eos", true}, {"stream", true}};
  // The first client holds its stream open until the second request has its answer, then leaves.
  std::atomic<bool> checked{false};
  std::thread first([&] {
    httplib::Client cli("127.0.0.1", s->port());
    httplib::Request req;
    req.method = "POST";
    req.path = "/v1/completions";
    req.body = long_request.dump();
    req.set_header("Content-Type", "application/json");
    req.content_receiver = [&](const char*, size_t, uint64_t, uint64_t) {
      while (!checked.load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      return false;
    };
    (void)cli.send(req);
  });
  bool running = false;
  for (int i = 0; i < 3000 && !running; ++i) {
    running = s->metrics().gauges().running == 1;
    if (!running) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(running);
  if (running) {
    // No ASSERT here: the first client's thread must be joined below.
    httplib::Result second = post(s->port(), "/v1/completions", long_request.dump());
    EXPECT_TRUE(second);
    if (second) {
      EXPECT_EQ(second->status, 429) << second->body;
      const json e = json::parse(second->body)["error"];
      EXPECT_EQ(e["code"], "queue_full");
      EXPECT_NE(e["message"].get<std::string>().find("--max-queue 0"), std::string::npos);
    }
  }
  checked.store(true);
  first.join();
}

TEST(ServeHttp, RequestPastItsTimeoutEndsWith504AndFreesItsPages) {
  ServeOptions o = options();
  o.scheduler.request_timeout_seconds = 0.3;
  std::unique_ptr<Server> s = start(o);
  ASSERT_TRUE(s);
  httplib::Result res =
      post(s->port(), "/v1/completions",
           json{{"prompt", kPrompt}, {"max_tokens", 900}, {"ignore_eos", true}}.dump());
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 504) << res->body;
  EXPECT_EQ(json::parse(res->body)["error"]["code"], "timeout");
  // A short request right after is served.
  httplib::Result ok =
      post(s->port(), "/v1/completions", json{{"prompt", kPrompt}, {"max_tokens", 4}}.dump());
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(s->metrics().gauges().kv_pages_used, 0);
}

TEST(ServeHttp, ServerStartFailuresAreErrors) {
  ServeOptions o = options();
  o.model_dir = "/nonexistent";
  Result<std::unique_ptr<Server>> s = Server::create(o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("is not a directory"), std::string::npos);
}

#else

TEST(ServeHttp, NotBuilt) {
  EXPECT_FALSE(server_available());
  GTEST_SKIP() << "built without cpp-httplib (libcpp-httplib-dev)";
}

#endif

}  // namespace
}  // namespace mlaspec::serve
