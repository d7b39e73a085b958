// Server: `mlaspec serve` as a library: loads a model directory (target, tokenizer, chat
// template) and an optional drafter into a spec::Engine, starts the Scheduler's loop and serves
// the OpenAI API over HTTP (cpp-httplib) on a loopback or given address (docs/serve.md).
//
//   auto server = Server::create({.model_dir = "models/target", .port = 0}).value();
//   server->start();                       // listens on a thread; port() is the bound port
//   ... httplib::Client cli("127.0.0.1", server->port()); ...
//   server->stop();
//
// Built without cpp-httplib (libcpp-httplib-dev), create() fails with unsupported naming it.
#pragma once

#include <memory>
#include <string>

#include "mlaspec/core/dtype.h"
#include "mlaspec/core/status.h"
#include "mlaspec/core/tensor.h"
#include "mlaspec/serve/metrics.h"
#include "mlaspec/serve/scheduler.h"
#include "mlaspec/spec/verify_width.h"

namespace mlaspec::serve {

// Whether this build has the HTTP server (cpp-httplib found at configure time).
bool server_available();

struct ServeOptions {
  std::string model_dir;         // config.json, safetensors, tokenizer.json, tokenizer_config.json
  std::string draft = "dflash";  // dflash, dspark, ngram or none
  std::string draft_model_dir;   // with dflash / dspark
  int num_draft = 7;             // dflash / dspark: at most the checkpoint's block size - 1
  bool num_draft_asked = false;  // spec::DrafterSpec::num_draft_asked
  // dspark: every draft verified (kFixed) or widths chosen per request and step from the
  // confidences and the batch (kAdaptive; spec/verify_width.h).
  spec::VerifyWidthPolicy::Mode verify_width = spec::VerifyWidthPolicy::Mode::kFixed;
  DType kv_dtype = DType::kBF16;
  // Where the target runs: kCPU, or kCUDA (the CUDA model runtime; drafters stay on the CPU).
  Device device = Device::kCPU;
  int kv_pages = 0;              // target pool pages; 0 = max_running requests of the full context
  int prefill_chunk_tokens = 0;  // prompt tokens per prefill forward; 0 = the device's default
                                 // (spec::EngineConfig)
  bool deterministic = true;
  std::string host = "127.0.0.1";
  int port = 8000;  // 0: any free port (port() tells which)
  // The name clients give as "model" (also accepted: the model directory as given). Empty: the
  // model directory as given.
  std::string served_model_name;
  SchedulerConfig scheduler;
  int http_threads = 0;  // 0: max_running + max_queue + 8
};

class Server {
 public:
  // Loads everything and binds the address; any failure (files, a chat template it cannot
  // render, the port taken) is an error here, before a request is taken.
  static Result<std::unique_ptr<Server>> create(const ServeOptions& options);
  ~Server();

  int port() const;
  const std::string& model_name() const;
  // One line: model, drafter, engine policies, address.
  std::string describe() const;
  // Serves on the calling thread until stop() (from another thread or a signal handler's
  // helper thread).
  Status run();
  // Serves on a thread of its own.
  void start();
  void stop();

  const Metrics& metrics() const;
  Scheduler& scheduler();

  struct Impl;

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace mlaspec::serve
