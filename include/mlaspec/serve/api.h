// The OpenAI API as `mlaspec serve` speaks it (docs/serve.md): request bodies of
// /v1/completions and /v1/chat/completions parsed and validated into ApiRequest, and the
// OpenAI-style error body every refusal carries.
//
//   ParseOutcome p = parse_request(Endpoint::kCompletions, body, limits);
//   if (!p.ok()) reply(p.error.http_status, p.error.to_json());
//
// Parsing needs no model or tokenizer: what depends on the prompt's length (prompt + max_tokens
// within the context) is checked once the prompt is tokenized (check_length).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlaspec/core/status.h"
#include "mlaspec/model/sampling.h"

namespace mlaspec::serve {

// An OpenAI-style error: `{"error": {"message", "type", "param", "code"}}` with an HTTP status.
struct ApiError {
  int http_status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string param;  // the request field at fault; empty = null
  std::string code;   // a machine-readable code; empty = null
  std::string to_json() const;
};
ApiError bad_request(std::string message, std::string param = {}, std::string code = {});

enum class Endpoint { kCompletions, kChat };
const char* endpoint_path(Endpoint endpoint);

struct Message {
  std::string role;  // system, user, assistant
  std::string content;
};

struct ApiRequest {
  Endpoint endpoint = Endpoint::kCompletions;
  std::string model;  // as the client named it (empty: the server's model)
  // Completions: the prompt as text, or as token ids when prompt_is_ids.
  std::string prompt;
  std::vector<int32_t> prompt_ids;
  bool prompt_is_ids = false;
  std::vector<Message> messages;      // chat
  std::optional<int64_t> max_tokens;  // absent: the endpoint's default (check_length)
  model::SamplingParams sampling;
  std::vector<std::string> stop;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  bool ignore_eos = false;     // vLLM's extension: generate past the EOS token
  // -1: no logprobs. k >= 0: each token's log-probability under the target and its k most
  // likely alternatives (completions: `logprobs: k`; chat: `logprobs: true`, `top_logprobs: k`).
  int32_t logprobs = -1;
};

// What parsing checks against: the model's name(s), context and vocabulary.
struct ApiLimits {
  std::vector<std::string> model_names;  // accepted values of "model" (the first is reported)
  int64_t context = 0;                   // longest prompt + completion (tokens)
  int32_t vocab_size = 0;                // prompt ids must be below it
  size_t max_stop = 8;                   // stop strings per request
};

struct ParseOutcome {
  std::optional<ApiRequest> request;
  ApiError error;  // when request is empty
  bool ok() const { return request.has_value(); }
};

// Parses and validates one request body (UTF-8 JSON). Every refusal is an ApiError naming the
// field (`param`) and what was expected; nothing here throws.
ParseOutcome parse_request(Endpoint endpoint, std::string_view body, const ApiLimits& limits);

// The completion budget of a parsed request whose prompt has `prompt_tokens` tokens: max_tokens,
// or when absent 16 for completions and the rest of the context for chat. Returns the error (400,
// code context_length_exceeded) when the prompt and the budget do not fit in the context.
std::optional<ApiError> completion_budget(const ApiRequest& request, int64_t prompt_tokens,
                                          int64_t context, int64_t* budget);

}  // namespace mlaspec::serve
