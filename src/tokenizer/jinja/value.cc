#include "tokenizer/jinja/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace mlaspec::tokenizer::jinja {

const Value* Value::find(const std::string& key) const {
  if (!dict_) return nullptr;
  for (const auto& entry : *dict_) {
    if (entry.first == key) return &entry.second;
  }
  return nullptr;
}

bool Value::truthy() const {
  switch (type_) {
    case Type::kUndefined:
    case Type::kNone:
      return false;
    case Type::kBool:
    case Type::kInt:
      return int_ != 0;
    case Type::kFloat:
      return float_ != 0.0;
    case Type::kString:
      return !str_.empty();
    case Type::kList:
      return !list_->empty();
    case Type::kDict:
      return !dict_->empty();
    case Type::kNamespace:
    case Type::kMacro:
      return true;
  }
  return false;
}

bool Value::equals(const Value& other) const {
  if (is_number() && other.is_number()) {
    if (type_ == Type::kFloat || other.type_ == Type::kFloat) return as_float() == other.as_float();
    return int_ == other.int_;
  }
  if (type_ != other.type_) return false;
  switch (type_) {
    case Type::kUndefined:
    case Type::kNone:
      return true;
    case Type::kString:
      return str_ == other.str_;
    case Type::kList:
      // Python: a tuple never equals a list.
      if (is_tuple() != other.is_tuple() || list_->size() != other.list_->size()) return false;
      for (size_t i = 0; i < list_->size(); ++i) {
        if (!(*list_)[i].equals((*other.list_)[i])) return false;
      }
      return true;
    case Type::kDict:
      if (dict_->size() != other.dict_->size()) return false;
      for (const auto& entry : *dict_) {
        const Value* v = other.find(entry.first);
        if (!v || !entry.second.equals(*v)) return false;
      }
      return true;
    case Type::kNamespace:
      return dict_ == other.dict_;  // identity, as for Python objects without __eq__
    case Type::kMacro:
      return macro_ == other.macro_;
    default:
      return false;
  }
}

const char* Value::type_name() const {
  switch (type_) {
    case Type::kUndefined:
      return "undefined";
    case Type::kNone:
      return "NoneType";
    case Type::kBool:
      return "bool";
    case Type::kInt:
      return "int";
    case Type::kFloat:
      return "float";
    case Type::kString:
      return "str";
    case Type::kList:
      return is_tuple() ? "tuple" : "list";
    case Type::kDict:
      return "dict";
    case Type::kNamespace:
      return "Namespace";
    case Type::kMacro:
      return "Macro";
  }
  return "?";
}

std::string float_repr(double f) {
  if (std::isnan(f)) return "nan";
  if (std::isinf(f)) return f < 0 ? "-inf" : "inf";
  if (f == 0) return std::signbit(f) ? "-0.0" : "0.0";
  // Shortest round-trip digits, then Python's layout: positional for exponents -4..15.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), f, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  const size_t e_at = sci.find('e');
  std::string mant = sci.substr(0, e_at);
  const int exp = std::stoi(sci.substr(e_at + 1));
  std::string sign;
  if (mant[0] == '-') {
    sign = "-";
    mant.erase(0, 1);
  }
  std::string digits;
  for (char c : mant) {
    if (c != '.') digits += c;
  }
  if (exp >= -5 + 1 && exp < 16) {
    std::string out;
    if (exp < 0) {
      out = "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
    } else if (static_cast<size_t>(exp) + 1 >= digits.size()) {
      out = digits + std::string(static_cast<size_t>(exp) + 1 - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, static_cast<size_t>(exp) + 1) + "." +
            digits.substr(static_cast<size_t>(exp) + 1);
    }
    return sign + out;
  }
  std::string out = digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  char ebuf[16];
  std::snprintf(ebuf, sizeof(ebuf), "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
  return sign + out + ebuf;
}

namespace {

// Python's repr of a str: single quotes unless the text holds ' and no ".
std::string string_repr(const std::string& s) {
  const bool dq = s.find('\'') != std::string::npos && s.find('"') == std::string::npos;
  const char q = dq ? '"' : '\'';
  std::string out(1, q);
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (ch == q || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (ch == '\n') {
      out += "\\n";
    } else if (ch == '\r') {
      out += "\\r";
    } else if (ch == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  out += q;
  return out;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

Status json_into(const Value& v, const JsonFormat& f, int level, std::string& out) {
  const int indent = f.indent;
  using T = Value::Type;
  const std::string nl =
      indent >= 0 ? "\n" + std::string(static_cast<size_t>(indent) * (level + 1), ' ') : "";
  const std::string close_nl =
      indent >= 0 ? "\n" + std::string(static_cast<size_t>(indent) * level, ' ') : "";
  const std::string item_sep = f.item_sep;
  switch (v.type()) {
    case T::kNone:
      out += "null";
      return {};
    case T::kBool:
      out += v.as_bool() ? "true" : "false";
      return {};
    case T::kInt:
      out += std::to_string(v.as_int());
      return {};
    case T::kFloat: {
      const double f = v.as_float();
      out += std::isnan(f)   ? "NaN"
             : std::isinf(f) ? (f < 0 ? "-Infinity" : "Infinity")
                             : float_repr(f);
      return {};
    }
    case T::kString:
      out += json_string(v.as_string());
      return {};
    case T::kList: {
      if (v.items().empty()) {
        out += "[]";
        return {};
      }
      out += "[" + nl;
      for (size_t i = 0; i < v.items().size(); ++i) {
        if (i > 0) out += item_sep + nl;
        MLASPEC_RETURN_IF_ERROR(json_into(v.items()[i], f, level + 1, out));
      }
      out += close_nl + "]";
      return {};
    }
    case T::kDict: {
      if (v.entries().empty()) {
        out += "{}";
        return {};
      }
      std::vector<const std::pair<std::string, Value>*> entries;
      for (const auto& e : v.entries()) entries.push_back(&e);
      if (f.sort_keys) {
        std::stable_sort(entries.begin(), entries.end(),
                         [](const auto* a, const auto* b) { return a->first < b->first; });
      }
      out += "{" + nl;
      for (size_t i = 0; i < entries.size(); ++i) {
        if (i > 0) out += item_sep + nl;
        out += json_string(entries[i]->first) + f.key_sep;
        MLASPEC_RETURN_IF_ERROR(json_into(entries[i]->second, f, level + 1, out));
      }
      out += close_nl + "}";
      return {};
    }
    default:
      return invalid_argument(std::string("tojson: object of type ") + v.type_name() +
                              " is not JSON serializable");
  }
}

}  // namespace

std::string to_repr(const Value& v) {
  using T = Value::Type;
  switch (v.type()) {
    case T::kString:
      return string_repr(v.as_string());
    case T::kList: {
      std::string out = v.is_tuple() ? "(" : "[";
      for (size_t i = 0; i < v.items().size(); ++i) {
        if (i > 0) out += ", ";
        out += to_repr(v.items()[i]);
      }
      if (v.is_tuple() && v.items().size() == 1) out += ",";
      return out + (v.is_tuple() ? ")" : "]");
    }
    case T::kDict: {
      std::string out = "{";
      bool first = true;
      for (const auto& e : v.entries()) {
        if (!first) out += ", ";
        first = false;
        out += string_repr(e.first) + ": " + to_repr(e.second);
      }
      return out + "}";
    }
    default:
      return to_output(v);
  }
}

std::string to_output(const Value& v) {
  using T = Value::Type;
  switch (v.type()) {
    case T::kUndefined:
      return "";
    case T::kNone:
      return "None";
    case T::kBool:
      return v.as_bool() ? "True" : "False";
    case T::kInt:
      return std::to_string(v.as_int());
    case T::kFloat:
      return float_repr(v.as_float());
    case T::kString:
      return v.as_string();
    case T::kList:
    case T::kDict:
      return to_repr(v);
    case T::kNamespace:
      return "<Namespace>";
    case T::kMacro:
      return "<Macro>";
  }
  return "";
}

Result<std::string> to_json(const Value& v, const JsonFormat& format) {
  JsonFormat f = format;
  if (f.item_sep.empty()) f.item_sep = f.indent >= 0 ? "," : ", ";
  std::string out;
  MLASPEC_RETURN_IF_ERROR(json_into(v, f, 0, out));
  return out;
}

}  // namespace mlaspec::tokenizer::jinja
