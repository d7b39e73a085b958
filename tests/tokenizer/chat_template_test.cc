// Chat templates against jinja2 (python/golden/chat_templates.py renders the shipped model's
// template and tests/data/chat_templates/*.jinja with Hugging Face's environment over fixed and
// seeded random conversations), plus loading, refusals by name and the render bounds.
#include "mlaspec/tokenizer/chat_template.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace mlaspec::tokenizer {
namespace {

namespace fs = std::filesystem;

fs::path data_dir() {
  return fs::path(MLASPEC_TEST_DATA_DIR);
}
fs::path shipped_model() {
  return data_dir().parent_path().parent_path() / "models" / "target";
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A scratch model directory holding one tokenizer_config.json.
fs::path config_dir(const std::string& name, const nlohmann::ordered_json& config) {
  const fs::path dir = fs::temp_directory_path() / ("mlaspec_chat_" + name);
  fs::create_directories(dir);
  std::ofstream(dir / "tokenizer_config.json") << config.dump();
  return dir;
}

Result<std::string> render_text(const std::string& source, const std::string& context = "{}") {
  Result<ChatTemplate> t = ChatTemplate::parse(source);
  if (!t.ok()) return t.status();
  return t->render_json(context);
}

TEST(ChatTemplate, MatchesJinja2Goldens) {
  const auto goldens =
      nlohmann::ordered_json::parse(read_text(data_dir() / "chat_templates" / "goldens.json"));
  int rendered = 0, errors = 0, plain = 0;
  for (const auto& t : goldens["templates"]) {
    const std::string name = t["name"];
    Result<ChatTemplate> tmpl =
        name == "shipped_target"
            ? ChatTemplate::load(shipped_model())
            : ChatTemplate::parse(read_text(data_dir() / "chat_templates" / (name + ".jinja")));
    ASSERT_TRUE(tmpl.ok()) << name << ": " << tmpl.status().to_string();
    for (const auto& c : t["cases"]) {
      const std::string label = name + " / " + c["name"].get<std::string>();
      const auto& ctx = c["context"];
      Result<std::string> out = tmpl->render_json(ctx.dump());
      if (c.contains("error")) {
        ASSERT_FALSE(out.ok()) << label << " rendered, jinja2 failed with " << c["error"]["message"]
                               << "\n"
                               << *out;
        if (c["error"]["kind"] == "raise_exception") {
          EXPECT_NE(out.status().message().find(c["error"]["message"].get<std::string>()),
                    std::string::npos)
              << label << ": " << out.status().to_string();
        }
        ++errors;
        continue;
      }
      ASSERT_TRUE(out.ok()) << label << ": " << out.status().to_string();
      EXPECT_EQ(*out, c["output"].get<std::string>()) << label;
      ++rendered;

      // The message-list API gives the same text where the conversation is plain role/content.
      bool simple = ctx["tools"].is_null();
      std::vector<ChatMessage> messages;
      for (const auto& m : ctx["messages"]) {
        simple = simple && m.size() == 2;
        messages.push_back({m["role"], m["content"]});
      }
      if (!simple) continue;
      ChatTemplate copy = *tmpl;
      copy.set_special_token("bos_token", ctx["bos_token"]);
      copy.set_special_token("eos_token", ctx["eos_token"]);
      Result<std::string> via_messages = copy.render(messages, ctx["add_generation_prompt"]);
      ASSERT_TRUE(via_messages.ok()) << label << ": " << via_messages.status().to_string();
      EXPECT_EQ(*via_messages, *out) << label << " (render)";
      ++plain;
    }
  }
  EXPECT_GE(rendered, 250);
  EXPECT_GE(errors, 20);
  EXPECT_GE(plain, 250);
  RecordProperty("rendered", rendered);
  RecordProperty("errors", errors);
}

// One-line templates exercising each filter, test, method, operator, literal form, loop variable
// and whitespace rule, against one conversation.
TEST(ChatTemplate, MatchesJinja2OnSnippets) {
  const auto goldens =
      nlohmann::ordered_json::parse(read_text(data_dir() / "chat_templates" / "goldens.json"));
  const std::string context = goldens["snippet_context"].dump();
  int checked = 0;
  for (const auto& c : goldens["snippets"]) {
    const std::string source = c["source"];
    Result<std::string> out = render_text(source, context);
    if (c.contains("error")) {
      EXPECT_FALSE(out.ok()) << source << " rendered, jinja2 failed with " << c["error"];
    } else {
      ASSERT_TRUE(out.ok()) << source << ": " << out.status().to_string();
      EXPECT_EQ(*out, c["output"].get<std::string>()) << source;
    }
    ++checked;
  }
  EXPECT_GE(checked, 50);
}

TEST(ChatTemplate, LoadsTheShippedModel) {
  Result<ChatTemplate> t = ChatTemplate::load(shipped_model());
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->bos_token(), "<|bos|>");
  EXPECT_EQ(t->eos_token(), "<|end|>");
  const std::vector<ChatMessage> chat = {{"user", "Maya buys 9 oranges."}};
  Result<std::string> text = t->render(chat, true);
  ASSERT_TRUE(text.ok()) << text.status().to_string();
  EXPECT_EQ(*text, "<|bos|><|user|>Maya buys 9 oranges.<|assistant|>");
}

TEST(ChatTemplate, LoadsListFormAndTokenObjects) {
  nlohmann::ordered_json config = {
      {"bos_token", {{"content", "<B>"}, {"lstrip", false}}},
      {"eos_token", nullptr},
      {"chat_template",
       {{{"name", "tool_use"}, {"template", "tools"}},
        {{"name", "default"}, {"template", "{{ bos_token }}{{ messages[0].content }}"}}}}};
  Result<ChatTemplate> t = ChatTemplate::load(config_dir("list", config));
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->bos_token(), "<B>");
  EXPECT_EQ(t->eos_token(), "");
  const std::vector<ChatMessage> chat = {{"user", "x"}};
  EXPECT_EQ(*t->render(chat, false), "<B>x");

  config["chat_template"] = {{{"name", "tool_use"}, {"template", "tools"}}};
  Result<ChatTemplate> no_default = ChatTemplate::load(config_dir("nodefault", config));
  ASSERT_FALSE(no_default.ok());
  EXPECT_EQ(no_default.status().code(), StatusCode::kNotFound);
  EXPECT_NE(no_default.status().message().find("no \"default\" entry (it has tool_use)"),
            std::string::npos)
      << no_default.status().to_string();

  Result<ChatTemplate> none = ChatTemplate::load(config_dir("none", {{"bos_token", "<s>"}}));
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
  EXPECT_NE(none.status().message().find("has no chat template"), std::string::npos);

  config["bos_token"] = 7;
  config["chat_template"] = "x";
  Result<ChatTemplate> bad_token = ChatTemplate::load(config_dir("badtoken", config));
  ASSERT_FALSE(bad_token.ok());
  EXPECT_NE(bad_token.status().message().find("bos_token must be a string"), std::string::npos);
}

// Every refusal names the construct and where it is.
TEST(ChatTemplate, RefusesUnsupportedConstructsByName) {
  struct Case {
    const char* source;
    StatusCode code;
    const char* message;
  };
  const Case cases[] = {
      {"{{ x | wordwrap }}", StatusCode::kUnsupported, "line 1 col 8: filter 'wordwrap'"},
      {"a\n  {% include 'other.jinja' %}", StatusCode::kUnsupported, "line 2 col 6: tag 'include'"},
      {"{% if x is prime %}{% endif %}", StatusCode::kUnsupported, "test 'prime' is not supported"},
      {"{{ 'a {}'.format(1) }}", StatusCode::kUnsupported, "method 'format' is not supported"},
      {"{{ lipsum(3) }}", StatusCode::kUnsupported, "function 'lipsum' is not supported"},
      {"{% for m in xs recursive %}{% endfor %}", StatusCode::kUnsupported, "recursive for loops"},
      {"{% if x %}never closed", StatusCode::kInvalidArgument,
       "unexpected end of template, expected 'elif' or 'else' or 'endif'"},
      {"{{ 1 + }}", StatusCode::kInvalidArgument, "line 1 col 8: unexpected '}}'"},
      {"{% endfor %}", StatusCode::kInvalidArgument, "unexpected 'endfor'"},
      {"{% break %}", StatusCode::kInvalidArgument, "'break' outside a for loop"},
      {"{{ 'open }}", StatusCode::kInvalidArgument, "unterminated string literal"},
      {"{# no end", StatusCode::kInvalidArgument, "missing end of comment tag"},
      {"{{ a ? b }}", StatusCode::kInvalidArgument, "unexpected character '?'"},
      {"{{ 99999999999999999999 }}", StatusCode::kInvalidArgument, "does not fit 64 bits"},
  };
  for (const Case& c : cases) {
    Result<ChatTemplate> t = ChatTemplate::parse(c.source);
    ASSERT_FALSE(t.ok()) << c.source;
    EXPECT_EQ(t.status().code(), c.code) << c.source << ": " << t.status().to_string();
    EXPECT_NE(t.status().message().find(c.message), std::string::npos)
        << c.source << ": " << t.status().to_string();
  }
}

TEST(ChatTemplate, RenderErrorsNameTheProblem) {
  Result<std::string> raised = render_text("{{ raise_exception('roles must alternate') }}");
  ASSERT_FALSE(raised.ok());
  EXPECT_EQ(raised.status().message(), "chat template raised an exception: roles must alternate");
  Result<std::string> undefined_attr = render_text("{{ nothing.role }}");
  ASSERT_FALSE(undefined_attr.ok());
  EXPECT_NE(undefined_attr.status().message().find("line 1 col 11: 'nothing' is undefined"),
            std::string::npos)
      << undefined_attr.status().to_string();
  Result<std::string> type_error = render_text("{{ 1 + 'a' }}");
  ASSERT_FALSE(type_error.ok());
  EXPECT_NE(
      type_error.status().message().find("unsupported operand type(s) for +: 'int' and 'str'"),
      std::string::npos);
}

TEST(ChatTemplate, JinjaSemantics) {
  struct Case {
    const char* source;
    const char* context;
    const char* want;
  };
  const Case cases[] = {
      // Undefined renders empty, is falsy and iterates empty; a missing dict key is undefined.
      {"[{{ x }}{{ d.missing }}{% if not x %}n{% endif %}{% for a in x %}!{% endfor %}]",
       R"({"d": {}})", "[n]"},
      {"{{ x | default('dflt') }} {{ '' | default('e', true) }}", "{}", "dflt e"},
      {"{{ [1, 'a', (1, 2), {'k': none}, 1.5, 1e20, true] }}", "{}",
       "[1, 'a', (1, 2), {'k': None}, 1.5, 1e+20, True]"},
      {"{{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 7 / 2 }} {{ 2 ** 10 }} {{ 4 / 2 }}", "{}",
       "3 -4 2 3.5 1024 2.0"},
      {"{{ 'abc'[::-1] }} {{ [1, 2, 3][1:] }} {{ 'héllo'[1:3] }} {{ 'héllo' | length }}", "{}",
       "cba [2, 3] él 5"},
      {"{{ x | tojson(indent=2) }}", R"({"x": {"a": [1, {}], "b": []}})",
       "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": []\n}"},
      {"{{ 'a b  c'.split() }}{{ 'a,b'.split(',') }}", "{}", "['a', 'b', 'c']['a', 'b']"},
      {"{% for i in [1, 2] %}[{{ y }}]{% set y = i %}{% endfor %}{{ y }}", R"({"y": 9})",
       "[9][9]9"},
      {"{% set ns = namespace(n=0) %}{% for i in range(4) %}{% set ns.n = ns.n + i %}{% endfor %}"
       "{{ ns.n }}",
       "{}", "6"},
      {"{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}", R"({"d": {"b": 1, "a": 2}})",
       "b=1;a=2;"},
      {"{{ 'x' if false }}|{{ 1 < 2 < 3 }}|{{ 3 > 2 > 2 }}|{{ 'b' in 'abc' }}", "{}",
       "|True|False|True"},
      {"{% macro m(a, b='B') %}{{ a }}{{ b }}{% endmacro %}{{ m('A') }}{{ m('a', b='c') }}", "{}",
       "ABac"},
      {"  {% if true %}\n  x\n  {% endif %}\n", "{}", "  x\n"},
      {"{{ 0.1 + 0.2 }} {{ 1e-05 }} {{ 10000000000000000.0 }}", "{}",
       "0.30000000000000004 1e-05 1e+16"},
  };
  for (const Case& c : cases) {
    Result<std::string> out = render_text(c.source, c.context);
    ASSERT_TRUE(out.ok()) << c.source << ": " << out.status().to_string();
    EXPECT_EQ(*out, c.want) << c.source;
  }
}

// Hostile templates end with resource_exhausted naming the bound, quickly.
// The two inputs the fuzzer found slow (join / map chains walking long strings): each render ends
// (text or resource_exhausted) within the step budget. They are regression inputs here, rendered
// once each, not replay seeds: 200 mutations of each hitting the budget took 86 s under ASan.
TEST(ChatTemplate, SlowFuzzInputsStayBounded) {
  const std::vector<ChatMessage> chat = {{"system", "Be brief."},
                                         {"user", "Hi {{ x }} 'q' \"d\" 世界 😀"},
                                         {"assistant", "<think>t</think>Hello"},
                                         {"user", ""}};
  for (const char* name : {"join_map_chain", "join_map_chain_2"}) {
    SCOPED_TRACE(name);
    const std::string source = read_text(data_dir() / "chat_templates" / "slow" / name);
    ASSERT_FALSE(source.empty());
    Result<ChatTemplate> t = ChatTemplate::parse(source);
    ASSERT_TRUE(t.ok()) << t.status().to_string();
    Result<std::string> out = t->render(chat, true);
    if (!out.ok()) {
      EXPECT_EQ(out.status().code(), StatusCode::kResourceExhausted) << out.status().to_string();
    }
  }
}

TEST(ChatTemplate, RenderIsBounded) {
  struct Case {
    const char* source;
    const char* message;
  };
  const Case cases[] = {
      {"{% for i in range(100000000) %}{% endfor %}", "range() of more than"},
      {"{{ 'abcd' * 100000000 }}", "exceeds the limit of"},
      // Comparing, printing or iterating a value costs its size: a loop cannot hide that work.
      {"{% set x = range(200000) | list %}{% for i in range(100) %}{% if x == x %}{% endif %}"
       "{% endfor %}",
       "steps"},
      {"{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", "macro calls nested deeper"},
      {"{% set ns = namespace(l=[]) %}{% for i in range(1000) %}{% set ns.l = [ns.l] %}"
       "{% endfor %}",
       "nested"},
  };
  for (const Case& c : cases) {
    Result<std::string> out = render_text(c.source);
    ASSERT_FALSE(out.ok()) << c.source;
    EXPECT_EQ(out.status().code(), StatusCode::kResourceExhausted) << out.status().to_string();
    EXPECT_NE(out.status().message().find(c.message), std::string::npos)
        << c.source << ": " << out.status().to_string();
  }
  // Recursion inside nested expressions reaches the evaluator's depth bound before the macro one.
  std::string nots;
  for (int i = 0; i < 40; ++i) nots += "not ";
  const std::string recursive = "{% macro f(n) %}{{ " + nots + "f(n) }}{% endmacro %}{{ f(0) }}";
  Result<std::string> out = render_text(recursive);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("evaluation nested deeper than 256 levels"),
            std::string::npos)
      << out.status().to_string();
  const std::string deep = "{{ " + std::string(300, '(') + "1" + std::string(300, ')') + " }}";
  Result<ChatTemplate> t = ChatTemplate::parse(deep);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("nesting deeper than 128 levels"), std::string::npos);
}

}  // namespace
}  // namespace mlaspec::tokenizer
