// The HTTP front end: cpp-httplib handler threads parse and tokenize, hand the request to the
// Scheduler and relay its channel to the client, as one JSON body or as server-sent events.
#include "mlaspec/serve/server.h"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include <sys/socket.h>

#include "connection.h"
#include "mlaspec/core/log.h"
#include "mlaspec/serve/api.h"
#include "mlaspec/serve/chat.h"
#include "mlaspec/serve/load.h"

namespace mlaspec::serve {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// Bodies above this are refused (413) before parsing.
constexpr size_t kMaxBodyBytes = size_t{16} << 20;
// A stream with nothing to send for this long gets an SSE comment, so a client that went away
// while its request waited is noticed (the write fails) and the request cancelled.
constexpr auto kKeepAlive = std::chrono::seconds(1);
constexpr int kListenBacklog = 1024;

std::string dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

json usage_json(const Update& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"completion_tokens", u.completion_tokens},
          {"total_tokens", u.prompt_tokens + u.completion_tokens},
          {"accept_length", u.accept_length},
          {"verify_steps", u.verify_steps}};
}

std::string outcome_of(const Update& u) {
  if (u.finish_reason == "stop" || u.finish_reason == "length") return "ok";
  if (u.finish_reason == "cancelled" || u.finish_reason == "timeout") return u.finish_reason;
  return u.error.http_status >= 500 ? "failed" : "error";
}

// What a streaming response needs between calls of its content provider.
struct StreamState {
  std::shared_ptr<Channel> channel;
  Endpoint endpoint = Endpoint::kCompletions;
  std::string id;
  std::string model;
  int64_t created = 0;
  bool include_usage = false;
  bool logprobs = false;    // the request asked for logprobs
  int64_t text_offset = 0;  // completions' logprobs.text_offset of the next token
  bool started = false;
  bool finished = false;
  Clock::time_point t0;
  Clock::time_point last_write;
  std::optional<double> ttft;
  Update last;
};

}  // namespace

bool server_available() {
  return true;
}

struct Server::Impl {
  ServeOptions options;
  std::string model_name;
  std::vector<std::string> model_names;
  std::unique_ptr<Metrics> metrics = std::make_unique<Metrics>();
  std::unique_ptr<Scheduler> scheduler;
  std::optional<ChatFormatter> chat;
  Status chat_status;  // why chat is off (only where the build has no chat templates)
  std::optional<tokenizer::Tokenizer> tok;
  // Each token's text for logprobs, decoded once at start (a response names k + 1 per token).
  std::vector<std::string> token_texts;
  ApiLimits limits;
  httplib::Server http;
  int port = 0;
  int listen_fd = -1;
  std::atomic<uint64_t> next_id{0};
  std::thread thread;

  void install_routes();
  void handle(Endpoint endpoint, const httplib::Request& req, httplib::Response& res);
  void reply_error(httplib::Response& res, const ApiError& e, const std::string& what,
                   Clock::time_point t0);
  void finish_log(const std::string& id, Endpoint endpoint, int status, const Update& u,
                  std::optional<double> ttft, Clock::time_point t0);
  json chunk(StreamState& st, const Update* u, const std::optional<std::string>& finish) const;
  std::string token_text(int32_t id) const;
  json logprobs_json(Endpoint endpoint, const std::vector<spec::TokenLogprobs>& lps,
                     int64_t* text_offset) const;
  bool stream_step(StreamState& st, httplib::DataSink& sink);
};

void Server::Impl::reply_error(httplib::Response& res, const ApiError& e, const std::string& what,
                               Clock::time_point t0) {
  res.status = e.http_status;
  res.set_content(e.to_json(), "application/json");
  metrics->count_request(e.http_status == 429 || e.http_status == 503 ? "rejected"
                         : e.http_status >= 500                       ? "failed"
                                                                      : "error");
  log_info("serve: " + what + " " + std::to_string(e.http_status) + " (" + e.message + ") " +
           std::to_string(static_cast<int>(since(t0) * 1000)) + " ms");
}

void Server::Impl::finish_log(const std::string& id, Endpoint endpoint, int status, const Update& u,
                              std::optional<double> ttft, Clock::time_point t0) {
  metrics->count_request(outcome_of(u));
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                "serve: %s %s %d prompt %lld completion %lld (%s) ttft %.1f ms total %.1f ms "
                "tau %.2f",
                id.c_str(), endpoint_path(endpoint), status,
                static_cast<long long>(u.prompt_tokens),
                static_cast<long long>(u.completion_tokens), u.finish_reason.c_str(),
                ttft ? *ttft * 1000 : 0.0, since(t0) * 1000, u.accept_length);
  log_info(buf);
}

std::string Server::Impl::token_text(int32_t id) const {
  if (id >= 0 && static_cast<size_t>(id) < token_texts.size()) return token_texts[id];
  Result<std::string> t = tok->decode({&id, 1}, {.skip_special_tokens = false});
  return t.ok() ? *t : std::string();
}

// OpenAI's shapes: completions {tokens, token_logprobs, top_logprobs (a map of up to k + 1
// entries: the top k and the chosen token), text_offset}; chat {content: [{token, logprob, bytes,
// top_logprobs: [k entries]}], refusal}. A -inf log-probability (a masked logit) is written as
// -9999, as vLLM does: JSON has no infinity.
json Server::Impl::logprobs_json(Endpoint endpoint, const std::vector<spec::TokenLogprobs>& lps,
                                 int64_t* text_offset) const {
  auto value = [](float lp) { return std::isfinite(lp) ? static_cast<double>(lp) : -9999.0; };
  auto bytes = [](const std::string& s) {
    json b = json::array();
    for (const char c : s) b.push_back(static_cast<unsigned char>(c));
    return b;
  };
  if (endpoint == Endpoint::kChat) {
    json content = json::array();
    for (const spec::TokenLogprobs& lp : lps) {
      const std::string text = token_text(lp.chosen.token);
      json top = json::array();
      for (const spec::TokenLogprob& t : lp.top) {
        const std::string alt = token_text(t.token);
        top.push_back({{"token", alt}, {"logprob", value(t.logprob)}, {"bytes", bytes(alt)}});
      }
      content.push_back({{"token", text},
                         {"logprob", value(lp.chosen.logprob)},
                         {"bytes", bytes(text)},
                         {"top_logprobs", std::move(top)}});
    }
    return {{"content", std::move(content)}, {"refusal", nullptr}};
  }
  json tokens = json::array(), token_logprobs = json::array(), top_logprobs = json::array(),
       offsets = json::array();
  for (const spec::TokenLogprobs& lp : lps) {
    const std::string text = token_text(lp.chosen.token);
    tokens.push_back(text);
    token_logprobs.push_back(value(lp.chosen.logprob));
    json top = json::object();
    for (const spec::TokenLogprob& t : lp.top) top[token_text(t.token)] = value(t.logprob);
    top[text] = value(lp.chosen.logprob);
    top_logprobs.push_back(std::move(top));
    offsets.push_back(*text_offset);
    *text_offset += static_cast<int64_t>(text.size());
  }
  return {{"tokens", std::move(tokens)},
          {"token_logprobs", std::move(token_logprobs)},
          {"top_logprobs", std::move(top_logprobs)},
          {"text_offset", std::move(offsets)}};
}

// A stream chunk carrying `u`'s text and logprobs (null: none, e.g. the finish chunk).
json Server::Impl::chunk(StreamState& st, const Update* u,
                         const std::optional<std::string>& finish) const {
  const std::string text = u ? u->text : std::string();
  json choice = {
      {"index", 0},
      {"logprobs",
       u && st.logprobs ? logprobs_json(st.endpoint, u->logprobs, &st.text_offset) : json(nullptr)},
      {"finish_reason", finish ? json(*finish) : json(nullptr)}};
  if (st.endpoint == Endpoint::kChat) {
    json delta = json::object();
    if (!st.started) delta["role"] = "assistant";
    if (!text.empty() || !st.started) delta["content"] = text;
    choice["delta"] = delta;
  } else {
    choice["text"] = text;
  }
  json j = {
      {"id", st.id},
      {"object", st.endpoint == Endpoint::kChat ? "chat.completion.chunk" : "text_completion"},
      {"created", st.created},
      {"model", st.model},
      {"choices", json::array({choice})}};
  if (st.include_usage) j["usage"] = nullptr;
  return j;
}

// One call of the content provider: waits briefly for news and writes it as SSE events. False
// when the client is gone (httplib then ends the response and the releaser cancels).
bool Server::Impl::stream_step(StreamState& st, httplib::DataSink& sink) {
  auto event = [&](const std::string& data) {
    const std::string line = "data: " + data + "\n\n";
    const bool ok = sink.write(line.data(), line.size());
    st.last_write = Clock::now();
    return ok;
  };
  if (!st.started && st.endpoint == Endpoint::kChat) {
    // The role first, as OpenAI's stream does.
    if (!event(dump(chunk(st, nullptr, std::nullopt)))) return false;
  }
  st.started = true;
  Update u = st.channel->wait(std::chrono::milliseconds(100));
  st.last = u;  // for the log line if the client leaves
  if (!sink.is_writable()) return false;
  if (!u.text.empty() || !u.logprobs.empty()) {
    if (!st.ttft && !u.text.empty()) st.ttft = since(st.t0);
    if (!event(dump(chunk(st, &u, std::nullopt)))) return false;
  }
  if (!u.done) {
    if (Clock::now() - st.last_write > kKeepAlive) {
      static const char kComment[] = ": keep-alive\n\n";
      st.last_write = Clock::now();
      if (!sink.write(kComment, sizeof(kComment) - 1)) return false;
    }
    return true;
  }
  st.finished = true;
  if (u.finish_reason == "stop" || u.finish_reason == "length") {
    if (!event(dump(chunk(st, nullptr, u.finish_reason)))) return false;
    if (st.include_usage) {
      json j = {
          {"id", st.id},
          {"object", st.endpoint == Endpoint::kChat ? "chat.completion.chunk" : "text_completion"},
          {"created", st.created},
          {"model", st.model},
          {"choices", json::array()},
          {"usage", usage_json(u)}};
      if (!event(dump(j))) return false;
    }
  } else if (u.finish_reason != "cancelled") {
    if (!event(u.error.to_json())) return false;
  }
  if (!event("[DONE]")) return false;
  sink.done();
  return true;
}

void Server::Impl::handle(Endpoint endpoint, const httplib::Request& req, httplib::Response& res) {
  const Clock::time_point t0 = Clock::now();
  const std::string what = std::string("POST ") + endpoint_path(endpoint);
  ParseOutcome parsed = parse_request(endpoint, req.body, limits);
  if (!parsed.ok()) return reply_error(res, parsed.error, what, t0);
  const ApiRequest& r = *parsed.request;

  std::vector<int32_t> ids;
  if (endpoint == Endpoint::kChat) {
    if (!chat) {
      return reply_error(
          res,
          bad_request("chat completions are off: " + chat_status.message(), {}, "no_chat_template"),
          what, t0);
    }
    Result<std::string> text = chat->render(r.messages);
    if (!text.ok()) {
      return reply_error(
          res, bad_request("the chat template: " + text.status().message(), "messages"), what, t0);
    }
    // The template writes the special tokens itself (transformers' apply_chat_template).
    Result<std::vector<int32_t>> enc = tok->encode(*text, {.add_special_tokens = false});
    if (!enc.ok())
      return reply_error(res, bad_request(enc.status().message(), "messages"), what, t0);
    ids = std::move(*enc);
  } else if (r.prompt_is_ids) {
    ids = r.prompt_ids;
  } else {
    Result<std::vector<int32_t>> enc = tok->encode(r.prompt);
    if (!enc.ok()) return reply_error(res, bad_request(enc.status().message(), "prompt"), what, t0);
    ids = std::move(*enc);
  }
  int64_t budget = 0;
  if (std::optional<ApiError> e =
          completion_budget(r, static_cast<int64_t>(ids.size()), limits.context, &budget)) {
    return reply_error(res, *e, what, t0);
  }
  Job job{.prompt = std::move(ids),
          .sampling = r.sampling,
          .max_tokens = static_cast<int32_t>(budget),
          .stop = r.stop,
          .ignore_eos = r.ignore_eos,
          .logprobs = r.logprobs};
  SubmitOutcome sub = scheduler->submit(std::move(job));
  if (!sub.channel) return reply_error(res, sub.error, what, t0);

  const uint64_t n = next_id.fetch_add(1);
  const std::string id = (endpoint == Endpoint::kChat ? "chatcmpl-" : "cmpl-") + std::to_string(n);
  const int64_t created = static_cast<int64_t>(std::time(nullptr));

  if (r.stream) {
    auto st = std::make_shared<StreamState>();
    st->channel = sub.channel;
    st->endpoint = endpoint;
    st->id = id;
    st->model = model_name;
    st->created = created;
    st->include_usage = r.include_usage;
    st->logprobs = r.logprobs >= 0;
    st->t0 = t0;
    st->last_write = t0;
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream",
        [this, st](size_t /*offset*/, httplib::DataSink& sink) { return stream_step(*st, sink); },
        [this, st, endpoint](bool success) {
          if (!success || !st->finished) {
            // The client went away (or the write failed): the loop frees the request's pages.
            st->channel->cancel();
            if (!st->finished) st->last.finish_reason = "cancelled";
          }
          finish_log(st->id, endpoint, 200, st->last, st->ttft, st->t0);
        });
    return;
  }

  std::string text;
  std::vector<spec::TokenLogprobs> logprobs;
  std::optional<double> ttft;
  Update u;
  // The connection's socket, looked up once the request outlasts one wait: a client that leaves
  // cancels its request (the loop frees its pages), as a failed write does for a stream.
  std::optional<int> socket;
  while (true) {
    u = sub.channel->wait(std::chrono::milliseconds(200));
    if (!u.text.empty() && !ttft) ttft = since(t0);
    text += u.text;
    logprobs.insert(logprobs.end(), u.logprobs.begin(), u.logprobs.end());
    if (u.done) break;
    if (!socket) socket = find_connection_socket(req.local_port, req.remote_addr, req.remote_port);
    if (*socket >= 0 && !sub.channel->cancelled() && peer_closed(*socket)) sub.channel->cancel();
  }
  if (u.finish_reason == "cancelled") {
    res.status = 499;  // nginx's "client closed request": nobody reads it, the log does
    finish_log(id, endpoint, res.status, u, ttft, t0);
    return;
  }
  if (u.finish_reason != "stop" && u.finish_reason != "length") {
    res.status = u.error.http_status;
    res.set_content(u.error.to_json(), "application/json");
    finish_log(id, endpoint, res.status, u, ttft, t0);
    return;
  }
  int64_t text_offset = 0;
  json choice = {{"index", 0},
                 {"logprobs", r.logprobs >= 0 ? logprobs_json(endpoint, logprobs, &text_offset)
                                              : json(nullptr)},
                 {"finish_reason", u.finish_reason}};
  if (endpoint == Endpoint::kChat) {
    choice["message"] = {{"role", "assistant"}, {"content", text}};
  } else {
    choice["text"] = text;
  }
  json body = {{"id", id},
               {"object", endpoint == Endpoint::kChat ? "chat.completion" : "text_completion"},
               {"created", created},
               {"model", model_name},
               {"choices", json::array({choice})},
               {"usage", usage_json(u)}};
  res.set_content(dump(body), "application/json");
  finish_log(id, endpoint, 200, u, ttft, t0);
}

void Server::Impl::install_routes() {
  http.new_task_queue = [n = options.http_threads] { return new httplib::ThreadPool(n); };
  http.set_payload_max_length(kMaxBodyBytes);
  http.Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) {
    handle(Endpoint::kCompletions, req, res);
  });
  http.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
    handle(Endpoint::kChat, req, res);
  });
  http.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
    json data = json::array();
    data.push_back({{"id", model_name},
                    {"object", "model"},
                    {"created", 0},
                    {"owned_by", "mlaspec"},
                    {"max_model_len", limits.context}});
    res.set_content(dump({{"object", "list"}, {"data", data}}), "application/json");
  });
  http.Get("/health", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("{\"status\":\"ok\"}", "application/json");
  });
  http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics->render(), "text/plain; version=0.0.4");
  });
  // Unknown paths, wrong methods, bodies over the limit: the OpenAI error shape too.
  http.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    ApiError e = bad_request(res.status == 404   ? "no route " + req.method + " " + req.path
                             : res.status == 413 ? "the body is larger than 16 MiB"
                                                 : "request refused",
                             {}, res.status == 404 ? "not_found" : "");
    e.http_status = res.status;
    res.set_content(e.to_json(), "application/json");
  });
  http.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "unknown exception";
        try {
          std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        ApiError e = bad_request("internal error: " + what, {}, "internal_error");
        e.http_status = 500;
        e.type = "server_error";
        res.status = 500;
        res.set_content(e.to_json(), "application/json");
      });
}

Result<std::unique_ptr<Server>> Server::create(const ServeOptions& options) {
  // A client that goes away mid-write must be an error on that connection, not the process's end.
  std::signal(SIGPIPE, SIG_IGN);
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  if (impl->options.http_threads <= 0) {
    impl->options.http_threads = options.scheduler.max_running + options.scheduler.max_queue + 8;
  }
  Result<LoadedEngine> loaded = load_engine(options);
  if (!loaded.ok()) return loaded.status();
  // A model without a chat template serves completions only (chat requests get a 400 saying
  // so); a template that is there but cannot be parsed or rendered stops the server here.
  Result<ChatFormatter> chat = ChatFormatter::load(options.model_dir);
  if (chat.ok()) {
    impl->chat = std::move(*chat);
  } else if (chat.status().code() == StatusCode::kNotFound) {
    impl->chat_status = chat.status();
    log_warn("serve: chat completions off: " + chat.status().message());
  } else {
    return chat.status();
  }
  impl->model_name =
      options.served_model_name.empty() ? options.model_dir : options.served_model_name;
  impl->model_names = {impl->model_name, options.model_dir};
  impl->tok = loaded->tokenizer;
  for (int32_t id = 0; id < impl->tok->vocab_size(); ++id) {
    impl->token_texts.push_back(impl->token_text(id));
  }
  impl->scheduler = std::make_unique<Scheduler>(std::move(loaded->engine), loaded->tokenizer,
                                                options.scheduler, impl->metrics.get());
  impl->limits.model_names = impl->model_names;
  impl->limits.context = impl->scheduler->context();
  impl->limits.vocab_size = impl->scheduler->vocab_size();
  impl->install_routes();
  // cpp-httplib listens with a backlog of 5 (a compile-time constant of Debian's library): a
  // burst of clients connecting at once would see SYNs dropped and retried a second later. The
  // socket is kept so the backlog can be raised once it listens (Linux takes a second listen()).
  Impl* raw = impl.get();
  impl->http.set_socket_options([raw](socket_t sock) {
    int yes = 1;
    (void)::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    raw->listen_fd = sock;
  });
  if (options.port == 0) {
    impl->port = impl->http.bind_to_any_port(options.host);
  } else if (impl->http.bind_to_port(options.host, options.port)) {
    impl->port = options.port;
  } else {
    impl->port = -1;
  }
  if (impl->port > 0 && impl->listen_fd >= 0) (void)::listen(impl->listen_fd, kListenBacklog);
  if (impl->port <= 0) {
    return unsupported("cannot listen on " + options.host + ":" + std::to_string(options.port) +
                       " (address in use or not local)");
  }
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() {
  stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

int Server::port() const {
  return impl_->port;
}
const std::string& Server::model_name() const {
  return impl_->model_name;
}

std::string Server::describe() const {
  const ServeOptions& o = impl_->options;
  return "serving " + impl_->model_name + " on http://" + o.host + ":" +
         std::to_string(impl_->port) + " (draft " + o.draft + ", max-running " +
         std::to_string(impl_->scheduler->config().max_running) + ", max-queue " +
         std::to_string(o.scheduler.max_queue) + ", context " +
         std::to_string(impl_->limits.context) + ", KV pages " +
         std::to_string(impl_->scheduler->pool_pages()) + ", chat " + (impl_->chat ? "on" : "off") +
         "); engine: " + impl_->scheduler->engine_description();
}

Status Server::run() {
  if (!impl_->http.listen_after_bind())
    return internal_error("the HTTP server stopped with an error");
  return Status::Ok();
}

void Server::start() {
  impl_->thread = std::thread([this] { (void)impl_->http.listen_after_bind(); });
  // The socket is bound and listening already; this only waits for the accept loop.
  for (int i = 0; i < 1000 && !impl_->http.is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void Server::stop() {
  // The scheduler first: it ends every request still in flight, so no handler thread is left
  // waiting on its channel when the HTTP server joins them.
  impl_->scheduler->stop();
  impl_->http.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

const Metrics& Server::metrics() const {
  return *impl_->metrics;
}
Scheduler& Server::scheduler() {
  return *impl_->scheduler;
}

}  // namespace mlaspec::serve
