// Fuzz target: an HTTP request body (the first byte picks the endpoint) through parse_request and
// completion_budget. Any input gives a request or an OpenAI error; an accepted request honours
// every limit it was checked against, and every error body is valid JSON.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "mlaspec/serve/api.h"
#include "mlaspec/spec/logprobs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mlaspec::serve;
  if (size == 0) return 0;
  const Endpoint endpoint = (data[0] & 1) ? Endpoint::kChat : Endpoint::kCompletions;
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  ApiLimits limits;
  limits.model_names = {"tiny"};
  limits.context = 1024;
  limits.vocab_size = 768;
  const ParseOutcome p = parse_request(endpoint, body, limits);
  if (!p.ok()) {
    if (p.error.http_status < 400 || p.error.http_status > 499) __builtin_trap();
    if (!nlohmann::json::accept(p.error.to_json())) __builtin_trap();
    return 0;
  }
  const ApiRequest& r = *p.request;
  if (r.max_tokens && (*r.max_tokens < 1 || *r.max_tokens > limits.context)) __builtin_trap();
  if (!mlaspec::model::validate(r.sampling).ok()) __builtin_trap();
  if (r.logprobs < -1 || r.logprobs > mlaspec::spec::kMaxTopLogprobs) __builtin_trap();
  for (const std::string& s : r.stop) {
    if (s.empty()) __builtin_trap();
  }
  for (int32_t id : r.prompt_ids) {
    if (id < 0 || id >= limits.vocab_size) __builtin_trap();
  }
  if (endpoint == Endpoint::kChat ? r.messages.empty()
                                  : (r.prompt_is_ids ? r.prompt_ids.empty() : r.prompt.empty())) {
    __builtin_trap();
  }
  for (int64_t prompt_tokens : {int64_t{1}, int64_t{500}, int64_t{1023}, int64_t{1024}}) {
    int64_t budget = 0;
    const auto e = completion_budget(r, prompt_tokens, limits.context, &budget);
    if (!e && (budget < 1 || prompt_tokens + budget > limits.context)) __builtin_trap();
  }
  return 0;
}
