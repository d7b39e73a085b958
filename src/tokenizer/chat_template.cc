#include "mlaspec/tokenizer/chat_template.h"

#include <nlohmann/json.hpp>

#include "tokenizer/jinja/eval.h"
#include "tokenizer/jinja/lexer.h"
#include "tokenizer/jinja/parser.h"
#include "tokenizer/read_file.h"

namespace mlaspec::tokenizer {
namespace {

using OrderedJson = nlohmann::ordered_json;
using jinja::Value;

constexpr const char* kSpecialTokenNames[] = {"bos_token", "eos_token", "unk_token", "pad_token",
                                              "sep_token", "cls_token", "mask_token"};

Result<Value> from_json(const OrderedJson& j, int depth) {
  if (depth > jinja::kMaxNestingValues) {
    return resource_exhausted("chat context nests deeper than " +
                              std::to_string(jinja::kMaxNestingValues) + " levels");
  }
  switch (j.type()) {
    case OrderedJson::value_t::null:
      return Value::none();
    case OrderedJson::value_t::boolean:
      return Value::boolean(j.get<bool>());
    case OrderedJson::value_t::number_integer:
      return Value::integer(j.get<int64_t>());
    case OrderedJson::value_t::number_unsigned: {
      const uint64_t u = j.get<uint64_t>();
      if (u > static_cast<uint64_t>(INT64_MAX)) {
        return out_of_range("chat context integer " + std::to_string(u) + " does not fit 64 bits");
      }
      return Value::integer(static_cast<int64_t>(u));
    }
    case OrderedJson::value_t::number_float:
      return Value::real(j.get<double>());
    case OrderedJson::value_t::string:
      return Value::string(j.get<std::string>());
    case OrderedJson::value_t::array: {
      jinja::List items;
      for (const OrderedJson& item : j) {
        Result<Value> v = from_json(item, depth + 1);
        if (!v.ok()) return v.status();
        items.push_back(std::move(*v));
      }
      return Value::list(std::move(items));
    }
    case OrderedJson::value_t::object: {
      jinja::Dict entries;
      for (auto it = j.begin(); it != j.end(); ++it) {
        Result<Value> v = from_json(it.value(), depth + 1);
        if (!v.ok()) return v.status();
        entries.emplace_back(it.key(), std::move(*v));
      }
      return Value::dict(std::move(entries));
    }
    default:
      return invalid_argument("chat context holds a JSON value of unsupported type");
  }
}

// "bos_token": "<s>" or {"content": "<s>", ...} or null.
Result<std::string> token_text(const OrderedJson& j, const std::string& key) {
  if (j.is_null()) return std::string();
  if (j.is_string()) return j.get<std::string>();
  if (j.is_object()) {
    auto it = j.find("content");
    if (it != j.end() && it->is_string()) return it->get<std::string>();
  }
  return data_loss("tokenizer_config.json: " + key +
                   " must be a string or an object with a string \"content\"");
}

}  // namespace

ChatTemplate::~ChatTemplate() = default;

Result<ChatTemplate> ChatTemplate::parse(std::string_view source) {
  ChatTemplate t;
  t.source_ = std::string(source);
  Result<jinja::Program> program = jinja::parse(jinja::normalize_source(source));
  if (!program.ok()) return program.status();
  t.program_ = std::make_shared<const jinja::Program>(std::move(*program));
  return t;
}

Result<ChatTemplate> ChatTemplate::load(const std::filesystem::path& model_dir) {
  const std::filesystem::path config_path = model_dir / "tokenizer_config.json";
  Result<std::string> text = read_file(config_path);
  if (!text.ok()) return text.status();
  OrderedJson config;
  try {
    config = OrderedJson::parse(*text);
  } catch (const nlohmann::json::exception& e) {
    return data_loss(config_path.string() + ": " + e.what());
  }
  if (!config.is_object()) return data_loss(config_path.string() + " is not a JSON object");
  std::string source;
  bool found = false;
  auto it = config.find("chat_template");
  if (it != config.end() && !it->is_null()) {
    if (it->is_string()) {
      source = it->get<std::string>();
      found = true;
    } else if (it->is_array()) {
      // [{"name": "default", "template": ...}, {"name": "tool_use", ...}]
      std::string names;
      for (const OrderedJson& entry : *it) {
        if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string() ||
            !entry.contains("template") || !entry["template"].is_string()) {
          return data_loss(config_path.string() +
                           ": chat_template list entries must be {\"name\": string, "
                           "\"template\": string}");
        }
        const std::string name = entry["name"].get<std::string>();
        names += (names.empty() ? "" : ", ") + name;
        if (name == "default") {
          source = entry["template"].get<std::string>();
          found = true;
        }
      }
      if (!found) {
        return not_found(config_path.string() +
                         ": chat_template has no \"default\" entry (it has " +
                         (names.empty() ? std::string("none") : names) + ")");
      }
    } else {
      return data_loss(config_path.string() + ": chat_template must be a string or a list");
    }
  }
  if (!found) {
    Result<std::string> jinja_file = read_file(model_dir / "chat_template.jinja");
    if (!jinja_file.ok()) {
      return not_found(model_dir.string() +
                       " has no chat template (no chat_template in tokenizer_config.json, no "
                       "chat_template.jinja)");
    }
    source = std::move(*jinja_file);
  }
  Result<ChatTemplate> t = parse(source);
  if (!t.ok()) return t.status();
  for (const char* name : kSpecialTokenNames) {
    auto tok = config.find(name);
    if (tok == config.end()) continue;
    Result<std::string> value = token_text(*tok, name);
    if (!value.ok()) return value.status();
    if (!tok->is_null()) t->special_tokens_[name] = std::move(*value);
  }
  return t;
}

const std::string& ChatTemplate::bos_token() const {
  static const std::string kEmpty;
  auto it = special_tokens_.find("bos_token");
  return it == special_tokens_.end() ? kEmpty : it->second;
}

const std::string& ChatTemplate::eos_token() const {
  static const std::string kEmpty;
  auto it = special_tokens_.find("eos_token");
  return it == special_tokens_.end() ? kEmpty : it->second;
}

void ChatTemplate::set_special_token(const std::string& name, std::string value) {
  special_tokens_[name] = std::move(value);
}

Result<std::string> ChatTemplate::render(std::span<const ChatMessage> messages,
                                         bool add_generation_prompt) const {
  jinja::Context context;
  jinja::List list;
  for (const ChatMessage& m : messages) {
    list.push_back(
        Value::dict({{"role", Value::string(m.role)}, {"content", Value::string(m.content)}}));
  }
  context["messages"] = Value::list(std::move(list));
  context["add_generation_prompt"] = Value::boolean(add_generation_prompt);
  context["tools"] = Value::none();
  context["documents"] = Value::none();
  for (const auto& [name, value] : special_tokens_) context[name] = Value::string(value);
  return jinja::render(*program_, context);
}

Result<std::string> ChatTemplate::render_json(std::string_view context_json) const {
  OrderedJson j;
  try {
    j = OrderedJson::parse(context_json);
  } catch (const nlohmann::json::exception& e) {
    return invalid_argument(std::string("chat context is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) return invalid_argument("chat context must be a JSON object");
  jinja::Context context;
  for (const auto& [name, value] : special_tokens_) context[name] = Value::string(value);
  for (auto it = j.begin(); it != j.end(); ++it) {
    Result<Value> v = from_json(it.value(), 1);
    if (!v.ok()) return v.status();
    context[it.key()] = std::move(*v);
  }
  return jinja::render(*program_, context);
}

}  // namespace mlaspec::tokenizer
