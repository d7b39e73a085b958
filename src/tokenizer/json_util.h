// Typed access to tokenizer.json fields: a missing or mistyped field is a data_loss error naming
// the construct and the field, so a hostile or unusual file never throws out of the loader.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "mlaspec/core/status.h"

namespace mlaspec::tokenizer::json_util {

using Json = nlohmann::json;

// The "type" of a component object ("normalizer", {"type": "NFC"}) -> "NFC".
inline Result<std::string> type_of(const Json& j, const std::string& what) {
  if (!j.is_object()) return data_loss(what + " is not a JSON object");
  auto it = j.find("type");
  if (it == j.end() || !it->is_string()) return data_loss(what + " has no string \"type\"");
  return it->get<std::string>();
}

inline Result<std::string> get_string(const Json& j, const char* key, const std::string& what) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) {
    return data_loss(what + ": field \"" + key + "\" must be a string");
  }
  return it->get<std::string>();
}

// A bool field; absent or null gives `fallback`.
inline Result<bool> get_bool(const Json& j, const char* key, bool fallback,
                             const std::string& what) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) return data_loss(what + ": field \"" + key + "\" must be a bool");
  return it->get<bool>();
}

inline Result<const Json*> get_array(const Json& j, const char* key, const std::string& what) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) {
    return data_loss(what + ": field \"" + key + "\" must be an array");
  }
  return &*it;
}

// A {"String": "..."} / {"Regex": "..."} pattern (Split, Replace).
struct Pattern {
  bool is_regex = false;
  std::string text;
};
inline Result<Pattern> get_pattern(const Json& j, const std::string& what) {
  auto it = j.find("pattern");
  if (it == j.end() || !it->is_object() || it->size() != 1) {
    return data_loss(what + ": \"pattern\" must be {\"String\": ...} or {\"Regex\": ...}");
  }
  const auto first = it->begin();
  const std::string key = first.key();
  const Json& value = first.value();
  if (!value.is_string()) return data_loss(what + ": pattern value must be a string");
  if (key == "String") return Pattern{false, value.get<std::string>()};
  if (key == "Regex") return Pattern{true, value.get<std::string>()};
  return unsupported(what + ": pattern kind \"" + key + "\" is not supported (String, Regex)");
}

}  // namespace mlaspec::tokenizer::json_util
