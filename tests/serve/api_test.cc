// Request parsing and validation (no model): every refusal names its field and carries the
// OpenAI error shape; accepted bodies fill every field.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "mlaspec/serve/api.h"

namespace mlaspec::serve {
namespace {

ApiLimits limits() {
  ApiLimits l;
  l.model_names = {"tiny", "models/target"};
  l.context = 1024;
  l.vocab_size = 768;
  return l;
}

ApiError refused(Endpoint e, const std::string& body) {
  ParseOutcome p = parse_request(e, body, limits());
  EXPECT_FALSE(p.ok()) << body;
  return p.error;
}

TEST(ServeApi, CompletionFieldsAreRead) {
  ParseOutcome p = parse_request(Endpoint::kCompletions,
                                 R"({"model":"tiny","prompt":"hi","max_tokens":5,
                                     "temperature":0.5,"top_p":0.9,"top_k":-1,"min_p":0.1,
                                     "seed":7,"stop":["\n","##"],"stream":true,
                                     "stream_options":{"include_usage":true},"logprobs":null,
                                     "n":1,"user":"x","frequency_penalty":0})",
                                 limits());
  ASSERT_TRUE(p.ok()) << p.error.message;
  const ApiRequest& r = *p.request;
  EXPECT_EQ(r.prompt, "hi");
  EXPECT_EQ(*r.max_tokens, 5);
  EXPECT_FLOAT_EQ(r.sampling.temperature, 0.5f);
  EXPECT_FLOAT_EQ(r.sampling.top_p, 0.9f);
  EXPECT_EQ(r.sampling.top_k, 0);
  EXPECT_FLOAT_EQ(r.sampling.min_p, 0.1f);
  EXPECT_EQ(r.sampling.seed, 7u);
  EXPECT_EQ(r.stop, (std::vector<std::string>{"\n", "##"}));
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
}

TEST(ServeApi, PromptAsTokenIdsAndSingletonLists) {
  ParseOutcome ids = parse_request(Endpoint::kCompletions, R"({"prompt":[1,3,77]})", limits());
  ASSERT_TRUE(ids.ok());
  EXPECT_TRUE(ids.request->prompt_is_ids);
  EXPECT_EQ(ids.request->prompt_ids, (std::vector<int32_t>{1, 3, 77}));
  ParseOutcome nested = parse_request(Endpoint::kCompletions, R"({"prompt":[[1,2]]})", limits());
  ASSERT_TRUE(nested.ok());
  EXPECT_EQ(nested.request->prompt_ids, (std::vector<int32_t>{1, 2}));
  ParseOutcome one = parse_request(Endpoint::kCompletions, R"({"prompt":["ab"]})", limits());
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one.request->prompt, "ab");
}

TEST(ServeApi, ChatMessagesWithTextParts) {
  ParseOutcome p = parse_request(Endpoint::kChat,
                                 R"({"messages":[{"role":"system","content":"be brief"},
                      {"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}],
          "max_completion_tokens":9,"logprobs":false})",
                                 limits());
  ASSERT_TRUE(p.ok()) << p.error.message;
  ASSERT_EQ(p.request->messages.size(), 2u);
  EXPECT_EQ(p.request->messages[1].content, "ab");
  EXPECT_EQ(*p.request->max_tokens, 9);
}

TEST(ServeApi, RefusalsNameTheField) {
  struct Case {
    Endpoint endpoint;
    const char* body;
    int status;
    const char* param;
    const char* message;
  };
  const Case cases[] = {
      {Endpoint::kCompletions, "{not json", 400, "", "not valid JSON"},
      {Endpoint::kCompletions, "[1,2]", 400, "", "must be a JSON object"},
      {Endpoint::kCompletions, "{}", 400, "prompt", "prompt is required"},
      {Endpoint::kCompletions, R"({"prompt":""})", 400, "prompt", "prompt is empty"},
      {Endpoint::kCompletions, R"({"prompt":7})", 400, "prompt", "not a number"},
      {Endpoint::kCompletions, R"({"prompt":["a","b"]})", 400, "prompt", "one prompt per request"},
      {Endpoint::kCompletions, R"({"prompt":[1,768]})", 400, "prompt", "outside the vocabulary"},
      {Endpoint::kCompletions, R"({"prompt":"x","model":"gpt-4"})", 404, "model", "does not exist"},
      {Endpoint::kCompletions, R"({"prompt":"x","model":3})", 400, "model", "must be a string"},
      {Endpoint::kCompletions, R"({"prompt":"x","max_tokens":-3})", 400, "max_tokens", "below 1"},
      {Endpoint::kCompletions, R"({"prompt":"x","max_tokens":0})", 400, "max_tokens", "below 1"},
      {Endpoint::kCompletions, R"({"prompt":"x","max_tokens":1e9})", 400, "max_tokens",
       "must be an integer"},
      {Endpoint::kCompletions, R"({"prompt":"x","max_tokens":99999999999999999999})", 400,
       "max_tokens", "must be an integer"},
      {Endpoint::kCompletions, R"({"prompt":"x","max_tokens":5000})", 400, "max_tokens",
       "exceeds the model's context of 1024"},
      {Endpoint::kCompletions, R"({"prompt":"x","max_tokens":"5"})", 400, "max_tokens",
       "not a string"},
      {Endpoint::kCompletions, R"({"prompt":"x","temperature":3})", 400, "temperature",
       "outside [0, 2]"},
      {Endpoint::kCompletions, R"({"prompt":"x","top_p":0})", 400, "", "top_p"},
      {Endpoint::kCompletions, R"({"prompt":"x","top_k":-2})", 400, "top_k", "below -1"},
      {Endpoint::kCompletions, R"({"prompt":"x","stop":[""]})", 400, "stop", "empty stop"},
      {Endpoint::kCompletions, R"({"prompt":"x","stop":5})", 400, "stop", "a string or an array"},
      {Endpoint::kCompletions, R"({"prompt":"x","stream":"yes"})", 400, "stream", "a boolean"},
      {Endpoint::kCompletions, R"({"prompt":"x","stream_options":{"include_usage":true}})", 400,
       "stream_options", "only allowed with stream"},
      {Endpoint::kCompletions, R"({"prompt":"x","logprobs":21})", 400, "logprobs",
       "logprobs 21 is outside [0, 20]"},
      {Endpoint::kCompletions, R"({"prompt":"x","logprobs":-1})", 400, "logprobs",
       "logprobs -1 is outside [0, 20]"},
      {Endpoint::kCompletions, R"({"prompt":"x","logprobs":"2"})", 400, "logprobs",
       "must be an integer"},
      {Endpoint::kCompletions, R"({"prompt":"x","top_logprobs":2})", 400, "top_logprobs",
       "completions take logprobs: N"},
      {Endpoint::kChat, R"({"messages":[{"role":"user","content":"x"}],"logprobs":2})", 400,
       "logprobs", "must be a boolean"},
      {Endpoint::kChat, R"({"messages":[{"role":"user","content":"x"}],"top_logprobs":2})", 400,
       "top_logprobs", "needs logprobs: true"},
      {Endpoint::kChat,
       R"({"messages":[{"role":"user","content":"x"}],"logprobs":true,"top_logprobs":50})", 400,
       "top_logprobs", "top_logprobs 50 is outside [0, 20]"},
      {Endpoint::kCompletions, R"({"prompt":"x","n":2})", 400, "n", "must be 1"},
      {Endpoint::kCompletions, R"({"prompt":"x","presence_penalty":0.5})", 400, "presence_penalty",
       "not supported"},
      {Endpoint::kChat, R"({"messages":[]})", 400, "messages", "messages is empty"},
      {Endpoint::kChat, R"({"messages":[{"role":"wizard","content":"x"}]})", 400,
       "messages[0].role", "is not one of"},
      {Endpoint::kChat, R"({"messages":[{"role":"user"}]})", 400, "messages[0].content",
       "is required"},
      {Endpoint::kChat, R"({"messages":[{"role":"user","content":[{"type":"image_url"}]}]})", 400,
       "messages[0].content", "only parts"},
  };
  for (const Case& c : cases) {
    const ApiError e = refused(c.endpoint, c.body);
    EXPECT_EQ(e.http_status, c.status) << c.body;
    EXPECT_EQ(e.param, c.param) << c.body;
    EXPECT_NE(e.message.find(c.message), std::string::npos) << c.body << " -> " << e.message;
    // The OpenAI shape.
    const nlohmann::json j = nlohmann::json::parse(e.to_json());
    EXPECT_TRUE(j["error"].contains("message") && j["error"].contains("type") &&
                j["error"].contains("param") && j["error"].contains("code"));
  }
}

TEST(ServeApi, LogprobsAreRead) {
  auto k = [](Endpoint e, const char* body) {
    ParseOutcome p = parse_request(e, body, limits());
    EXPECT_TRUE(p.ok()) << body << " -> " << p.error.message;
    return p.ok() ? p.request->logprobs : -2;
  };
  const char* chat = R"({"messages":[{"role":"user","content":"x"}])";
  EXPECT_EQ(k(Endpoint::kCompletions, R"({"prompt":"x"})"), -1);
  EXPECT_EQ(k(Endpoint::kCompletions, R"({"prompt":"x","logprobs":false})"), -1);
  EXPECT_EQ(k(Endpoint::kCompletions, R"({"prompt":"x","logprobs":0})"), 0);
  EXPECT_EQ(k(Endpoint::kCompletions, R"({"prompt":"x","logprobs":20})"), 20);
  EXPECT_EQ(k(Endpoint::kChat, (std::string(chat) + "}").c_str()), -1);
  EXPECT_EQ(k(Endpoint::kChat, (std::string(chat) + R"(,"logprobs":true})").c_str()), 0);
  EXPECT_EQ(
      k(Endpoint::kChat, (std::string(chat) + R"(,"logprobs":true,"top_logprobs":5})").c_str()), 5);
  EXPECT_EQ(
      k(Endpoint::kChat, (std::string(chat) + R"(,"logprobs":false,"top_logprobs":null})").c_str()),
      -1);
}

TEST(ServeApi, InvalidUtf8IsRefused) {
  const ApiError e = refused(Endpoint::kCompletions, "{\"prompt\":\"a\xff\xfe\"}");
  EXPECT_EQ(e.http_status, 400);
  EXPECT_NE(e.message.find("UTF-8"), std::string::npos) << e.message;
  // The error body itself is valid JSON (the bad bytes replaced).
  EXPECT_TRUE(nlohmann::json::accept(e.to_json()));
}

TEST(ServeApi, CompletionBudget) {
  ParseOutcome p = parse_request(Endpoint::kCompletions, R"({"prompt":"x"})", limits());
  ASSERT_TRUE(p.ok());
  int64_t budget = 0;
  EXPECT_FALSE(completion_budget(*p.request, 10, 1024, &budget));
  EXPECT_EQ(budget, 16);  // the completions default
  std::optional<ApiError> full = completion_budget(*p.request, 1024, 1024, &budget);
  ASSERT_TRUE(full);
  EXPECT_EQ(full->code, "context_length_exceeded");
  ParseOutcome big =
      parse_request(Endpoint::kCompletions, R"({"prompt":"x","max_tokens":1000})", limits());
  std::optional<ApiError> over = completion_budget(*big.request, 30, 1024, &budget);
  ASSERT_TRUE(over);
  EXPECT_EQ(over->param, "max_tokens");
  ParseOutcome chat =
      parse_request(Endpoint::kChat, R"({"messages":[{"role":"user","content":"x"}]})", limits());
  EXPECT_FALSE(completion_budget(*chat.request, 24, 1024, &budget));
  EXPECT_EQ(budget, 1000);  // chat: the rest of the context
}

}  // namespace
}  // namespace mlaspec::serve
