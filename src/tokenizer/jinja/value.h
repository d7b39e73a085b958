// The values a chat template computes with, modelled on the Python objects jinja2 hands around:
// undefined (jinja2's default Undefined: renders empty, iterates empty, fails on attribute
// access), None, bool, int (64-bit; overflow is an error, not a wrap), float, str (UTF-8), list
// and tuple, dict (string keys, insertion order like Python's), namespace() (the one mutable
// object) and macros.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "mlaspec/core/status.h"

namespace mlaspec::tokenizer::jinja {

struct Stmt;
class Value;

// Text costs one render step per this many bytes wherever it is built, copied or walked.
inline constexpr size_t kBytesPerStep = 16;
using List = std::vector<Value>;
using Dict = std::vector<std::pair<std::string, Value>>;

class Value {
 public:
  enum class Type {
    kUndefined,
    kNone,
    kBool,
    kInt,
    kFloat,
    kString,
    kList,
    kDict,
    kNamespace,
    kMacro
  };

  Value() = default;  // undefined
  static Value undefined(std::string name = {}) {
    Value v;
    v.str_ = std::move(name);
    return v;
  }
  static Value none() { return Value(Type::kNone); }
  static Value boolean(bool b) {
    Value v(Type::kBool);
    v.int_ = b;
    return v;
  }
  static Value integer(int64_t i) {
    Value v(Type::kInt);
    v.int_ = i;
    return v;
  }
  static Value real(double f) {
    Value v(Type::kFloat);
    v.float_ = f;
    return v;
  }
  static Value string(std::string s) {
    Value v(Type::kString);
    v.weight_ = 1 + s.size() / kBytesPerStep;
    v.str_ = std::move(s);
    return v;
  }
  static Value list(List items, bool tuple = false) {
    Value v(Type::kList);
    for (const Value& item : items) {
      v.depth_ = std::max(v.depth_, item.depth_ + 1);
      v.weight_ = add_weight(v.weight_, item.weight_);
    }
    v.list_ = std::make_shared<List>(std::move(items));
    v.int_ = tuple;
    return v;
  }
  static Value dict(Dict items) {
    Value v(Type::kDict);
    for (const auto& entry : items) {
      v.depth_ = std::max(v.depth_, entry.second.depth_ + 1);
      v.weight_ =
          add_weight(v.weight_, 1 + entry.first.size() / kBytesPerStep + entry.second.weight_);
    }
    v.dict_ = std::make_shared<Dict>(std::move(items));
    return v;
  }
  static Value make_namespace(Dict items) {
    Value v(Type::kNamespace);
    v.dict_ = std::make_shared<Dict>(std::move(items));
    return v;
  }
  static Value macro(const Stmt* def) {
    Value v(Type::kMacro);
    v.macro_ = def;
    return v;
  }

  Type type() const { return type_; }
  bool is_undefined() const { return type_ == Type::kUndefined; }
  bool is_none() const { return type_ == Type::kNone; }
  bool is_string() const { return type_ == Type::kString; }
  bool is_number() const {
    return type_ == Type::kInt || type_ == Type::kFloat || type_ == Type::kBool;
  }
  bool is_list() const { return type_ == Type::kList; }
  bool is_tuple() const { return type_ == Type::kList && int_ != 0; }
  bool is_dict() const { return type_ == Type::kDict; }
  bool is_mapping() const { return type_ == Type::kDict || type_ == Type::kNamespace; }

  bool as_bool() const { return int_ != 0; }
  int64_t as_int() const { return int_; }  // ints and bools
  double as_float() const { return type_ == Type::kFloat ? float_ : static_cast<double>(int_); }
  const std::string& as_string() const { return str_; }
  // The name an undefined value was looked up by ("" when unknown).
  const std::string& undefined_name() const { return str_; }
  const List& items() const { return *list_; }
  const Dict& entries() const { return *dict_; }
  Dict& mutable_entries() const { return *dict_; }  // namespaces only
  const Stmt* macro_def() const { return macro_; }
  // Nesting of lists and dicts (a scalar is 0; a namespace is not looked into, which is also
  // why a namespace holding itself never makes printing or comparing recurse forever).
  uint32_t depth() const { return depth_; }
  // The work of walking the whole value (printing, comparing, serialising it): one per
  // element plus one per kBytesPerStep bytes of text, saturating. Renders are charged by it.
  uint64_t weight() const { return weight_; }

  // The entry of a dict or namespace, or nullptr.
  const Value* find(const std::string& key) const;

  // Python truthiness (undefined is false).
  bool truthy() const;
  // Python ==, deep for lists and dicts (undefined equals only undefined).
  bool equals(const Value& other) const;
  // The type's Python name, for errors ("str", "int", "dict", "undefined").
  const char* type_name() const;

 private:
  explicit Value(Type t) : type_(t) {}
  static uint64_t add_weight(uint64_t a, uint64_t b) {
    constexpr uint64_t kCap = uint64_t{1} << 62;
    return a + b > kCap ? kCap : a + b;
  }
  Type type_ = Type::kUndefined;
  int64_t int_ = 0;
  double float_ = 0;
  std::string str_;
  std::shared_ptr<List> list_;
  std::shared_ptr<Dict> dict_;
  const Stmt* macro_ = nullptr;
  uint32_t depth_ = 0;
  uint64_t weight_ = 1;
};

// str(value) as jinja2 prints it in {{ }}: undefined "", None "None", True "True", floats as
// Python's repr, lists and dicts as Python's repr.
std::string to_output(const Value& v);
// Python's repr(): strings quoted the way Python picks quotes.
std::string to_repr(const Value& v);
// json.dumps(value, ensure_ascii=False, indent=..., separators=..., sort_keys=...), what Hugging
// Face's tojson filter calls. indent < 0 means None (one line); the separators default as in
// Python: (", ", ": ") on one line, (",", ": ") with an indent.
struct JsonFormat {
  int indent = -1;
  bool sort_keys = false;
  std::string item_sep;  // empty: Python's default for the indent
  std::string key_sep = ": ";
};
Result<std::string> to_json(const Value& v, const JsonFormat& format);
// Python's repr of a float: shortest round trip, "1.0", "1e-05", "1e+16", "inf", "nan".
std::string float_repr(double f);

}  // namespace mlaspec::tokenizer::jinja
