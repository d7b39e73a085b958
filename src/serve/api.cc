#include "mlaspec/serve/api.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>

#include "mlaspec/spec/logprobs.h"

namespace mlaspec::serve {
namespace {

using json = nlohmann::json;

// Limits on what one request may carry, far above any real use, so a body cannot make the server
// allocate without bound before the tokenizer or the engine see it.
constexpr size_t kMaxMessages = 4096;
constexpr size_t kMaxStopBytes = 256;

const char* type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::string:
      return "a string";
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    case json::value_t::number_float:
      return "a number with a fraction";
    default:
      return "a number";
  }
}

ApiError wrong_type(const std::string& param, const char* expected, const json& got) {
  return bad_request(param + " must be " + expected + ", not " + type_name(got), param,
                     "invalid_type");
}

// An integer that fits in int64_t (JSON numbers without a fraction or exponent).
bool as_int(const json& v, int64_t* out) {
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
    *out = static_cast<int64_t>(u);
    return true;
  }
  if (v.is_number_integer()) {
    *out = v.get<int64_t>();
    return true;
  }
  return false;
}

class Parser {
 public:
  Parser(Endpoint endpoint, const ApiLimits& limits) : endpoint_(endpoint), limits_(limits) {}

  ParseOutcome run(std::string_view body) {
    json doc;
    try {
      doc = json::parse(body.begin(), body.end());
    } catch (const json::exception& e) {
      // nlohmann names the byte and the reason (also for invalid UTF-8 inside strings).
      return fail(
          bad_request(std::string("the body is not valid JSON: ") + e.what(), {}, "invalid_json"));
    }
    if (!doc.is_object()) {
      return fail(bad_request(std::string("the body must be a JSON object, not ") + type_name(doc),
                              {}, "invalid_type"));
    }
    ApiRequest r;
    r.endpoint = endpoint_;
    if (!field_model(doc, r)) return fail();
    if (endpoint_ == Endpoint::kCompletions ? !field_prompt(doc, r) : !field_messages(doc, r))
      return fail();
    if (!field_max_tokens(doc, r) || !field_sampling(doc, r) || !field_stop(doc, r) ||
        !field_stream(doc, r) || !field_logprobs(doc, r) || !field_unsupported(doc))
      return fail();
    ParseOutcome out;
    out.request = std::move(r);
    return out;
  }

 private:
  ParseOutcome fail(ApiError e) {
    error_ = std::move(e);
    return fail();
  }
  ParseOutcome fail() {
    ParseOutcome out;
    out.error = error_;
    return out;
  }
  bool set(ApiError e) {
    error_ = std::move(e);
    return false;
  }
  // The field's value, or nullptr when absent or null (OpenAI clients send null for defaults).
  static const json* get(const json& doc, const char* key) {
    auto it = doc.find(key);
    if (it == doc.end() || it->is_null()) return nullptr;
    return &*it;
  }

  bool field_model(const json& doc, ApiRequest& r) {
    const json* v = get(doc, "model");
    if (!v) return true;
    if (!v->is_string()) return set(wrong_type("model", "a string", *v));
    r.model = v->get<std::string>();
    const auto& names = limits_.model_names;
    if (!names.empty() && std::find(names.begin(), names.end(), r.model) == names.end()) {
      ApiError e = bad_request(
          "the model `" + r.model + "` does not exist (this server serves `" + names.front() + "`)",
          "model", "model_not_found");
      e.http_status = 404;
      return set(std::move(e));
    }
    return true;
  }

  bool ids_from(const json& arr, ApiRequest& r) {
    r.prompt_is_ids = true;
    if (arr.empty()) return set(bad_request("prompt is an empty list of token ids", "prompt"));
    for (const json& t : arr) {
      int64_t id = 0;
      if (!as_int(t, &id)) return set(wrong_type("prompt", "text or a list of token ids", t));
      if (id < 0 || (limits_.vocab_size > 0 && id >= limits_.vocab_size)) {
        return set(bad_request("prompt token id " + std::to_string(id) +
                                   " is outside the vocabulary [0, " +
                                   std::to_string(limits_.vocab_size) + ")",
                               "prompt", "invalid_token"));
      }
      r.prompt_ids.push_back(static_cast<int32_t>(id));
    }
    return true;
  }

  // A string, a list of one string, a list of token ids, or a list of one list of token ids.
  bool field_prompt(const json& doc, ApiRequest& r) {
    const json* v = get(doc, "prompt");
    if (!v) return set(bad_request("prompt is required", "prompt", "missing_field"));
    const json* p = v;
    if (v->is_array() && v->size() == 1 && ((*v)[0].is_string() || (*v)[0].is_array())) {
      p = &(*v)[0];
    } else if (v->is_array() && !v->empty() && ((*v)[0].is_string() || (*v)[0].is_array())) {
      return set(bad_request("a batch of " + std::to_string(v->size()) +
                                 " prompts: this server takes one prompt per request",
                             "prompt", "unsupported"));
    }
    if (p->is_string()) {
      r.prompt = p->get<std::string>();
      if (r.prompt.empty()) return set(bad_request("prompt is empty", "prompt"));
      return true;
    }
    if (p->is_array()) return ids_from(*p, r);
    return set(wrong_type("prompt", "text or a list of token ids", *p));
  }

  bool field_messages(const json& doc, ApiRequest& r) {
    const json* v = get(doc, "messages");
    if (!v) return set(bad_request("messages is required", "messages", "missing_field"));
    if (!v->is_array()) return set(wrong_type("messages", "an array", *v));
    if (v->empty()) return set(bad_request("messages is empty", "messages"));
    if (v->size() > kMaxMessages) {
      return set(bad_request("messages has " + std::to_string(v->size()) + " entries, at most " +
                                 std::to_string(kMaxMessages),
                             "messages"));
    }
    for (size_t i = 0; i < v->size(); ++i) {
      const json& m = (*v)[i];
      const std::string at = "messages[" + std::to_string(i) + "]";
      if (!m.is_object()) return set(wrong_type(at, "an object", m));
      const json* role = get(m, "role");
      if (!role || !role->is_string()) {
        return set(bad_request(at + ".role must be a string", at + ".role", "invalid_type"));
      }
      Message msg{role->get<std::string>(), {}};
      if (msg.role != "system" && msg.role != "user" && msg.role != "assistant" &&
          msg.role != "developer") {
        return set(bad_request(
            at + ".role `" + msg.role + "` is not one of system, developer, user, assistant",
            at + ".role"));
      }
      const json* content = get(m, "content");
      if (!content) {
        return set(bad_request(at + ".content is required", at + ".content", "missing_field"));
      }
      if (content->is_string()) {
        msg.content = content->get<std::string>();
      } else if (content->is_array()) {
        // Content parts: only text parts, joined.
        for (const json& part : *content) {
          const json* type = part.is_object() ? get(part, "type") : nullptr;
          const json* text = part.is_object() ? get(part, "text") : nullptr;
          if (!type || !type->is_string() || type->get<std::string>() != "text" || !text ||
              !text->is_string()) {
            return set(bad_request(at + ".content: only parts {\"type\": \"text\", \"text\": ...} "
                                        "are supported",
                                   at + ".content", "unsupported"));
          }
          msg.content += text->get<std::string>();
        }
      } else {
        return set(wrong_type(at + ".content", "a string or an array of text parts", *content));
      }
      r.messages.push_back(std::move(msg));
    }
    return true;
  }

  bool field_max_tokens(const json& doc, ApiRequest& r) {
    for (const char* key : {"max_tokens", "max_completion_tokens"}) {
      const json* v = get(doc, key);
      if (!v) continue;
      if (endpoint_ == Endpoint::kCompletions && std::string_view(key) != "max_tokens") continue;
      int64_t n = 0;
      if (!as_int(*v, &n)) return set(wrong_type(key, "an integer", *v));
      if (n < 1) {
        return set(bad_request(std::string(key) + " " + std::to_string(n) + " is below 1", key));
      }
      if (limits_.context > 0 && n > limits_.context) {
        return set(bad_request(std::string(key) + " " + std::to_string(n) +
                                   " exceeds the model's context of " +
                                   std::to_string(limits_.context) + " tokens",
                               key, "context_length_exceeded"));
      }
      r.max_tokens = n;
    }
    return true;
  }

  bool number(const json& doc, const char* key, double lo, double hi, float* out) {
    const json* v = get(doc, key);
    if (!v) return true;
    if (!v->is_number()) return set(wrong_type(key, "a number", *v));
    const double x = v->get<double>();
    if (!std::isfinite(x) || x < lo || x > hi) {
      char range[64];
      std::snprintf(range, sizeof(range), " is outside [%g, %g]", lo, hi);
      return set(bad_request(std::string(key) + " " + v->dump() + range, key));
    }
    *out = static_cast<float>(x);
    return true;
  }

  bool field_sampling(const json& doc, ApiRequest& r) {
    model::SamplingParams& s = r.sampling;
    if (!number(doc, "temperature", 0.0, 2.0, &s.temperature)) return false;
    if (!number(doc, "top_p", 0.0, 1.0, &s.top_p)) return false;
    if (!number(doc, "min_p", 0.0, 1.0, &s.min_p)) return false;
    if (const json* v = get(doc, "top_k")) {
      int64_t k = 0;
      if (!as_int(*v, &k)) return set(wrong_type("top_k", "an integer", *v));
      // -1 and 0 both mean off (vLLM uses -1).
      if (k < -1 || k > std::numeric_limits<int32_t>::max()) {
        return set(
            bad_request("top_k " + std::to_string(k) + " is below -1 (-1 or 0: off)", "top_k"));
      }
      s.top_k = k <= 0 ? 0 : static_cast<int32_t>(k);
    }
    if (const json* v = get(doc, "seed")) {
      int64_t seed = 0;
      if (v->is_number_unsigned()) {
        s.seed = v->get<uint64_t>();
      } else if (as_int(*v, &seed)) {
        s.seed = static_cast<uint64_t>(seed);
      } else {
        return set(wrong_type("seed", "an integer", *v));
      }
    }
    if (Status st = model::validate(s); !st.ok()) {
      return set(bad_request(st.message(), {}, "invalid_sampling"));
    }
    return true;
  }

  bool field_stop(const json& doc, ApiRequest& r) {
    const json* v = get(doc, "stop");
    if (!v) return true;
    std::vector<const json*> items;
    if (v->is_string()) {
      items.push_back(v);
    } else if (v->is_array()) {
      for (const json& s : *v) items.push_back(&s);
    } else {
      return set(wrong_type("stop", "a string or an array of strings", *v));
    }
    if (items.size() > limits_.max_stop) {
      return set(bad_request("stop has " + std::to_string(items.size()) + " strings, at most " +
                                 std::to_string(limits_.max_stop),
                             "stop"));
    }
    for (const json* s : items) {
      if (!s->is_string()) return set(wrong_type("stop", "a string or an array of strings", *s));
      std::string text = s->get<std::string>();
      if (text.empty()) return set(bad_request("stop: an empty stop string", "stop"));
      if (text.size() > kMaxStopBytes) {
        return set(bad_request("stop: a stop string of " + std::to_string(text.size()) +
                                   " bytes, at most " + std::to_string(kMaxStopBytes),
                               "stop"));
      }
      r.stop.push_back(std::move(text));
    }
    return true;
  }

  bool field_stream(const json& doc, ApiRequest& r) {
    if (const json* v = get(doc, "stream")) {
      if (!v->is_boolean()) return set(wrong_type("stream", "a boolean", *v));
      r.stream = v->get<bool>();
    }
    if (const json* v = get(doc, "stream_options")) {
      if (!v->is_object()) return set(wrong_type("stream_options", "an object", *v));
      if (!r.stream) {
        return set(
            bad_request("stream_options is only allowed with stream: true", "stream_options"));
      }
      if (const json* u = get(*v, "include_usage")) {
        if (!u->is_boolean()) {
          return set(wrong_type("stream_options.include_usage", "a boolean", *u));
        }
        r.include_usage = u->get<bool>();
      }
    }
    if (const json* v = get(doc, "ignore_eos")) {
      if (!v->is_boolean()) return set(wrong_type("ignore_eos", "a boolean", *v));
      r.ignore_eos = v->get<bool>();
    }
    return true;
  }

  // An integer count of alternatives in [0, kMaxTopLogprobs].
  bool top_count(const json& v, const char* key, int32_t* out) {
    int64_t k = 0;
    if (!as_int(v, &k)) return set(wrong_type(key, "an integer", v));
    if (k < 0 || k > spec::kMaxTopLogprobs) {
      return set(bad_request(std::string(key) + " " + std::to_string(k) + " is outside [0, " +
                                 std::to_string(spec::kMaxTopLogprobs) + "]",
                             key));
    }
    *out = static_cast<int32_t>(k);
    return true;
  }

  // Completions: `logprobs` is the number of alternatives (false / null: none). Chat: `logprobs`
  // is a boolean and `top_logprobs` the number of alternatives, which needs logprobs true.
  bool field_logprobs(const json& doc, ApiRequest& r) {
    const json* lp = get(doc, "logprobs");
    const json* top = get(doc, "top_logprobs");
    if (endpoint_ == Endpoint::kCompletions) {
      if (top) {
        return set(bad_request("top_logprobs is a chat field; completions take logprobs: N",
                               "top_logprobs", "unsupported"));
      }
      if (!lp || (lp->is_boolean() && !lp->get<bool>())) return true;
      return top_count(*lp, "logprobs", &r.logprobs);
    }
    if (lp && !lp->is_boolean()) return set(wrong_type("logprobs", "a boolean", *lp));
    const bool wanted = lp && lp->get<bool>();
    if (top && !wanted) {
      return set(bad_request("top_logprobs needs logprobs: true", "top_logprobs"));
    }
    if (!wanted) return true;
    r.logprobs = 0;
    return !top || top_count(*top, "top_logprobs", &r.logprobs);
  }

  // Fields the server does not implement: refused when they ask for something, so a client never
  // gets silently different behaviour. Their defaults (null, 1, 0, false) are accepted.
  bool field_unsupported(const json& doc) {
    for (const char* key : {"n", "best_of"}) {
      if (const json* v = get(doc, key)) {
        int64_t n = 0;
        if (!as_int(*v, &n) || n != 1) {
          return set(bad_request(std::string(key) + " must be 1: one choice per request", key,
                                 "unsupported"));
        }
      }
    }
    for (const char* key : {"presence_penalty", "frequency_penalty", "repetition_penalty"}) {
      if (const json* v = get(doc, key)) {
        if (!v->is_number() ||
            v->get<double>() != (std::string_view(key) == "repetition_penalty" ? 1.0 : 0.0)) {
          return set(bad_request(std::string(key) + " is not supported", key, "unsupported"));
        }
      }
    }
    if (const json* v = get(doc, "echo")) {
      if (!v->is_boolean() || v->get<bool>()) {
        return set(bad_request("echo is not supported", "echo", "unsupported"));
      }
    }
    if (const json* v = get(doc, "logit_bias")) {
      if (!v->is_object() || !v->empty()) {
        return set(bad_request("logit_bias is not supported", "logit_bias", "unsupported"));
      }
    }
    if (endpoint_ == Endpoint::kChat) {
      for (const char* key : {"tools", "functions", "response_format"}) {
        const json* v = get(doc, key);
        if (v && !(v->is_array() && v->empty()) &&
            !(std::string_view(key) == "response_format" && v->is_object() &&
              v->value("type", "") == "text")) {
          return set(bad_request(std::string(key) + " is not supported", key, "unsupported"));
        }
      }
    }
    return true;
  }

  Endpoint endpoint_;
  const ApiLimits& limits_;
  ApiError error_;
};

}  // namespace

std::string ApiError::to_json() const {
  json e = {{"message", message},
            {"type", type},
            {"param", param.empty() ? json(nullptr) : json(param)},
            {"code", code.empty() ? json(nullptr) : json(code)}};
  return json{{"error", e}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

ApiError bad_request(std::string message, std::string param, std::string code) {
  ApiError e;
  e.message = std::move(message);
  e.param = std::move(param);
  e.code = std::move(code);
  return e;
}

const char* endpoint_path(Endpoint endpoint) {
  return endpoint == Endpoint::kChat ? "/v1/chat/completions" : "/v1/completions";
}

ParseOutcome parse_request(Endpoint endpoint, std::string_view body, const ApiLimits& limits) {
  return Parser(endpoint, limits).run(body);
}

std::optional<ApiError> completion_budget(const ApiRequest& request, int64_t prompt_tokens,
                                          int64_t context, int64_t* budget) {
  const char* param = request.endpoint == Endpoint::kChat ? "messages" : "prompt";
  if (prompt_tokens < 1) return bad_request("the prompt has no tokens", param);
  if (prompt_tokens >= context) {
    return bad_request("the prompt has " + std::to_string(prompt_tokens) +
                           " tokens: the model's context of " + std::to_string(context) +
                           " tokens leaves no room for a completion",
                       param, "context_length_exceeded");
  }
  const int64_t room = context - prompt_tokens;
  if (!request.max_tokens) {
    *budget = request.endpoint == Endpoint::kChat ? room : std::min<int64_t>(16, room);
    return std::nullopt;
  }
  if (*request.max_tokens > room) {
    return bad_request("the prompt's " + std::to_string(prompt_tokens) + " tokens + max_tokens " +
                           std::to_string(*request.max_tokens) + " exceed the model's context of " +
                           std::to_string(context) + " tokens",
                       "max_tokens", "context_length_exceeded");
  }
  *budget = *request.max_tokens;
  return std::nullopt;
}

}  // namespace mlaspec::serve
