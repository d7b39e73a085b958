// Filters, tests, methods and operators with the results Python and jinja2 give for the same
// values. Text is UTF-8; lengths, indices and slices count code points as Python's str does.
#include "tokenizer/jinja/builtins.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "tokenizer/jinja/eval.h"
#include "tokenizer/jinja/lexer.h"
#include "tokenizer/jinja/text.h"

namespace mlaspec::tokenizer::jinja {
namespace {

const std::set<std::string_view> kFilters = {
    "abs",    "capitalize", "count",   "d",       "default", "first",  "float",      "indent",
    "int",    "items",      "join",    "last",    "length",  "list",   "lower",      "map",
    "reject", "rejectattr", "replace", "reverse", "safe",    "select", "selectattr", "sort",
    "string", "title",      "tojson",  "trim",    "upper"};
const std::set<std::string_view> kTests = {
    "boolean", "callable", "defined",  "divisibleby", "eq",   "equalto",   "even",
    "false",   "float",    "ge",       "gt",          "in",   "integer",   "iterable",
    "le",      "lower",    "lt",       "mapping",     "ne",   "none",      "number",
    "odd",     "sameas",   "sequence", "string",      "true", "undefined", "upper"};
const std::set<std::string_view> kGlobals = {"raise_exception", "namespace", "range",
                                             "strftime_now", "dict"};
const std::set<std::string_view> kStringMethods = {
    "startswith", "endswith", "strip",      "lstrip",  "rstrip", "split", "rsplit", "upper",
    "lower",      "title",    "capitalize", "replace", "find",   "count", "join"};
const std::set<std::string_view> kDictMethods = {"items", "keys", "values", "get"};

[[noreturn]] void type_error(const Pos& pos, const std::string& what) {
  fail_at(pos, what);
}

[[noreturn]] void undefined_error(const Pos& pos, const Value& v) {
  fail_at(pos, v.undefined_name().empty() ? "undefined value" : v.undefined_name());
}

// Positional argument i, else keyword `name`, else nullptr.
const Value* arg(const std::vector<Value>& args, const Kwargs& kwargs, size_t i, const char* name) {
  if (i < args.size()) return &args[i];
  for (const auto& kw : kwargs) {
    if (kw.first == name) return &kw.second;
  }
  return nullptr;
}

void check_arity(const Pos& pos, const std::string& what, const std::vector<Value>& args,
                 const Kwargs& kwargs, std::initializer_list<const char*> names) {
  if (args.size() > names.size()) {
    fail_at(pos, what + " takes at most " + std::to_string(names.size()) + " arguments, got " +
                     std::to_string(args.size()));
  }
  for (const auto& kw : kwargs) {
    bool known = false;
    for (const char* n : names) known = known || kw.first == n;
    if (!known) fail_at(pos, what + " has no argument '" + kw.first + "'");
  }
}

const std::string& need_string(const Pos& pos, const std::string& what, const Value& v) {
  if (v.is_undefined()) undefined_error(pos, v);
  if (!v.is_string()) type_error(pos, what + " needs a string, not " + v.type_name());
  return v.as_string();
}

int64_t need_int(const Pos& pos, const std::string& what, const Value& v) {
  if (v.type() != Value::Type::kInt && v.type() != Value::Type::kBool) {
    type_error(pos, what + " needs an integer, not " + v.type_name());
  }
  return v.as_int();
}

// A dotted attribute path ("a.b", "0") of an item, as jinja2's attribute= arguments read it.
Value attribute_of(const Value& item, const std::string& path) {
  Value v = item;
  size_t from = 0;
  while (true) {
    const size_t dot = path.find('.', from);
    const std::string part = path.substr(from, dot == std::string::npos ? dot : dot - from);
    if (v.is_mapping()) {
      const Value* found = v.find(part);
      v = found ? *found : Value::undefined("'dict object' has no attribute '" + part + "'");
    } else if (v.is_list() && !part.empty() &&
               std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
               part.size() < 10 && std::stoul(part) < v.items().size()) {
      v = v.items()[std::stoul(part)];
    } else {
      v = Value::undefined("no attribute '" + part + "'");
    }
    if (dot == std::string::npos) return v;
    from = dot + 1;
  }
}

int64_t length_of(const Pos& pos, const Value& v) {
  switch (v.type()) {
    case Value::Type::kUndefined:
      return 0;
    case Value::Type::kString:
      return static_cast<int64_t>(count_chars(v.as_string()));
    case Value::Type::kList:
      return static_cast<int64_t>(v.items().size());
    case Value::Type::kDict:
      return static_cast<int64_t>(v.entries().size());
    default:
      type_error(pos, std::string("object of type '") + v.type_name() + "' has no len()");
  }
}

Value int_of(const Value& v, const Value& fallback) {
  switch (v.type()) {
    case Value::Type::kInt:
      return v;
    case Value::Type::kBool:
      return Value::integer(v.as_int());
    case Value::Type::kFloat:
      if (std::isfinite(v.as_float()) && std::fabs(v.as_float()) < 9.2e18) {
        return Value::integer(static_cast<int64_t>(v.as_float()));
      }
      return fallback;
    case Value::Type::kString: {
      const std::string t = strip(v.as_string(), nullptr, true, true);
      size_t i = (t.size() > 0 && (t[0] == '-' || t[0] == '+')) ? 1 : 0;
      if (i == t.size() || t.size() > 19) return fallback;
      for (size_t k = i; k < t.size(); ++k) {
        if (t[k] < '0' || t[k] > '9') {
          // jinja2 falls back to float(): "1.5" -> 1.
          char* end = nullptr;
          const double f = std::strtod(t.c_str(), &end);
          if (end == t.c_str() + t.size() && std::isfinite(f) && std::fabs(f) < 9.2e18) {
            return Value::integer(static_cast<int64_t>(f));
          }
          return fallback;
        }
      }
      return Value::integer(std::stoll(t));
    }
    default:
      return fallback;
  }
}

Value float_of(const Value& v, const Value& fallback) {
  if (v.is_number()) return Value::real(v.as_float());
  if (v.is_string()) {
    const std::string t = strip(v.as_string(), nullptr, true, true);
    char* end = nullptr;
    const double f = std::strtod(t.c_str(), &end);
    if (!t.empty() && end == t.c_str() + t.size()) return Value::real(f);
  }
  return fallback;
}

// jinja2's indent filter.
std::string indent(const std::string& s, const std::string& pad, bool first, bool blank) {
  std::vector<std::string> lines;
  size_t from = 0;
  const std::string text = s + "\n";
  while (from < text.size()) {
    const size_t nl = text.find('\n', from);
    lines.push_back(text.substr(from, nl - from));
    from = nl + 1;
  }
  std::string out;
  if (blank) {
    for (size_t i = 0; i < lines.size(); ++i) out += (i ? "\n" + pad : "") + lines[i];
  } else {
    out = lines[0];
    for (size_t i = 1; i < lines.size(); ++i) {
      out += "\n" + (lines[i].empty() ? "" : pad + lines[i]);
    }
  }
  return first ? pad + out : out;
}

bool less(const Pos& pos, const Value& a, const Value& b) {
  return compare_op(pos, "<", a, b);
}

}  // namespace

bool is_known_filter(std::string_view name) {
  return kFilters.count(name) > 0;
}
bool is_known_test(std::string_view name) {
  return kTests.count(name) > 0;
}
bool is_known_global(std::string_view name) {
  return kGlobals.count(name) > 0;
}
bool is_known_method(std::string_view name) {
  return kStringMethods.count(name) > 0 || kDictMethods.count(name) > 0;
}

bool apply_test(const Pos& pos, const std::string& name, const Value& v,
                const std::vector<Value>& args) {
  using T = Value::Type;
  auto need_arg = [&]() -> const Value& {
    if (args.empty()) fail_at(pos, "test '" + name + "' needs an argument");
    return args[0];
  };
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.is_none();
  if (name == "string") return v.is_string();
  if (name == "number") return v.is_number();
  if (name == "integer") return v.type() == T::kInt;
  if (name == "float") return v.type() == T::kFloat;
  if (name == "boolean") return v.type() == T::kBool;
  if (name == "true") return v.type() == T::kBool && v.as_bool();
  if (name == "false") return v.type() == T::kBool && !v.as_bool();
  if (name == "mapping") return v.is_dict();
  if (name == "iterable") return v.is_list() || v.is_dict() || v.is_string() || v.is_undefined();
  if (name == "sequence") return v.is_list() || v.is_dict() || v.is_string();
  if (name == "callable") return v.type() == T::kMacro;
  if (name == "odd" || name == "even" || name == "divisibleby") {
    const int64_t x = need_int(pos, "test '" + name + "'", v);
    if (name == "odd") return x % 2 != 0;
    if (name == "even") return x % 2 == 0;
    const int64_t d = need_int(pos, "test 'divisibleby'", need_arg());
    if (d == 0) fail_at(pos, "divisibleby 0");
    return d == -1 || x % d == 0;
  }
  if (name == "eq" || name == "equalto") return compare_op(pos, "==", v, need_arg());
  if (name == "ne") return compare_op(pos, "!=", v, need_arg());
  if (name == "lt") return compare_op(pos, "<", v, need_arg());
  if (name == "le") return compare_op(pos, "<=", v, need_arg());
  if (name == "gt") return compare_op(pos, ">", v, need_arg());
  if (name == "ge") return compare_op(pos, ">=", v, need_arg());
  if (name == "in") return compare_op(pos, "in", v, need_arg());
  if (name == "sameas") {
    const Value& o = need_arg();
    // Python identity: None, True and False are singletons; other values compare as objects.
    if (v.is_none() || o.is_none()) return v.is_none() && o.is_none();
    if (v.type() == T::kBool || o.type() == T::kBool) return v.type() == o.type() && v.equals(o);
    return v.is_mapping() && o.is_mapping() && v.type() == T::kNamespace && v.equals(o);
  }
  if (name == "lower" || name == "upper") {
    if (!v.is_string()) return false;
    bool cased = false;
    for (const char c : v.as_string()) {
      if (static_cast<unsigned char>(c) >= 0x80)
        fail_at(pos, "test '" + name + "' of non-ASCII text is not supported");
      if (std::isalpha(static_cast<unsigned char>(c))) {
        cased = true;
        if ((name == "lower") != (std::islower(static_cast<unsigned char>(c)) != 0)) return false;
      }
    }
    return cased;
  }
  fail_at(pos, "test '" + name + "' is not supported");
}

Value apply_filter(Budget& budget, const Pos& pos, const std::string& name, const Value& v,
                   const std::vector<Value>& args, const Kwargs& kwargs) {
  const std::string what = "filter '" + name + "'";
  budget.charge(pos, 1);
  if (name != "default" && name != "d" && name != "safe") charge(pos, v.weight());
  if (name == "default" || name == "d") {
    check_arity(pos, what, args, kwargs, {"default_value", "boolean"});
    const Value* dflt = arg(args, kwargs, 0, "default_value");
    const Value* boolean = arg(args, kwargs, 1, "boolean");
    const bool use = v.is_undefined() || (boolean && boolean->truthy() && !v.truthy());
    return use ? (dflt ? *dflt : Value::string("")) : v;
  }
  if (name == "safe") return v;
  if (name == "string") return Value::string(output_of(pos, v));
  if (name == "length" || name == "count") return Value::integer(length_of(pos, v));
  if (name == "tojson") {
    check_arity(pos, what, args, kwargs, {"ensure_ascii", "indent", "separators", "sort_keys"});
    JsonFormat f;
    if (const Value* a = arg(args, kwargs, 0, "ensure_ascii"); a && a->truthy()) {
      fail_at(pos, "tojson(ensure_ascii=True) is not supported");
    }
    if (const Value* a = arg(args, kwargs, 1, "indent"); a && !a->is_none()) {
      const int64_t n = need_int(pos, "tojson indent", *a);
      if (n < 0 || n > 64) fail_at(pos, "tojson indent " + std::to_string(n) + " is outside 0..64");
      f.indent = static_cast<int>(n);
    }
    if (const Value* a = arg(args, kwargs, 2, "separators"); a && !a->is_none()) {
      if (!a->is_list() || a->items().size() != 2 || !a->items()[0].is_string() ||
          !a->items()[1].is_string() || a->items()[0].as_string().empty()) {
        fail_at(pos, "tojson separators must be a pair of strings (item, key)");
      }
      f.item_sep = a->items()[0].as_string();
      f.key_sep = a->items()[1].as_string();
    }
    if (const Value* a = arg(args, kwargs, 3, "sort_keys")) f.sort_keys = a->truthy();
    Result<std::string> json = to_json(v, f);
    if (!json.ok()) fail_at(pos, json.status().message());
    check_string(pos, json->size());
    budget.charge(pos, static_cast<int64_t>(json->size() / kBytesPerStep));
    return Value::string(std::move(*json));
  }
  if (name == "trim") {
    check_arity(pos, what, args, kwargs, {"chars"});
    const Value* chars = arg(args, kwargs, 0, "chars");
    if (chars && !chars->is_none()) need_string(pos, what, *chars);
    return Value::string(strip(need_string(pos, what, v), chars, true, true));
  }
  if (name == "upper") return Value::string(ascii_case(pos, what, need_string(pos, what, v), 1));
  if (name == "lower") return Value::string(ascii_case(pos, what, need_string(pos, what, v), 0));
  if (name == "capitalize") {
    return Value::string(ascii_case(pos, what, need_string(pos, what, v), 2));
  }
  if (name == "title") return Value::string(ascii_case(pos, what, need_string(pos, what, v), 3));
  if (name == "replace") {
    check_arity(pos, what, args, kwargs, {"old", "new", "count"});
    const Value* old = arg(args, kwargs, 0, "old");
    const Value* repl = arg(args, kwargs, 1, "new");
    const Value* count = arg(args, kwargs, 2, "count");
    if (!old || !repl) fail_at(pos, what + " needs old and new strings");
    const std::string s = output_of(pos, v);
    return Value::string(replace(budget, pos, s, need_string(pos, what, *old),
                                 need_string(pos, what, *repl),
                                 count && !count->is_none() ? need_int(pos, what, *count) : -1));
  }
  if (name == "join") {
    check_arity(pos, what, args, kwargs, {"d", "attribute"});
    const Value* sep = arg(args, kwargs, 0, "d");
    const Value* attr = arg(args, kwargs, 1, "attribute");
    const std::string d = sep ? output_of(pos, *sep) : "";
    std::string out;
    bool first = true;
    for (const Value& item : iterate(pos, v)) {
      if (!first) out += d;
      first = false;
      out += output_of(pos, attr ? attribute_of(item, output_of(pos, *attr)) : item);
      check_string(pos, out.size());
    }
    budget.charge(pos, static_cast<int64_t>(out.size() / kBytesPerStep));
    return Value::string(std::move(out));
  }
  if (name == "first" || name == "last") {
    List items = iterate(pos, v);
    if (items.empty()) return Value::undefined("No " + name + " item, sequence was empty.");
    return name == "first" ? items.front() : items.back();
  }
  if (name == "items") {
    if (v.is_undefined()) return Value::list({});
    if (!v.is_dict()) type_error(pos, what + " needs a mapping, not " + std::string(v.type_name()));
    List out;
    for (const auto& e : v.entries()) {
      out.push_back(Value::list({Value::string(e.first), e.second}, true));
    }
    return checked_list(pos, std::move(out));
  }
  if (name == "list") return checked_list(pos, iterate(pos, v));
  if (name == "reverse") {
    if (v.is_string()) {
      const Chars cs(v.as_string());
      std::string out;
      for (size_t i = cs.size(); i > 0; --i) out += cs[i - 1];
      return Value::string(std::move(out));
    }
    List items = iterate(pos, v);
    std::reverse(items.begin(), items.end());
    return checked_list(pos, std::move(items));
  }
  if (name == "abs") {
    if (v.type() == Value::Type::kFloat) return Value::real(std::fabs(v.as_float()));
    const int64_t x = need_int(pos, what, v);
    if (x == INT64_MIN) fail_at(pos, "integer overflow in abs");
    return Value::integer(x < 0 ? -x : x);
  }
  if (name == "int") {
    check_arity(pos, what, args, kwargs, {"default"});
    const Value* dflt = arg(args, kwargs, 0, "default");
    return int_of(v, dflt ? *dflt : Value::integer(0));
  }
  if (name == "float") {
    check_arity(pos, what, args, kwargs, {"default"});
    const Value* dflt = arg(args, kwargs, 0, "default");
    return float_of(v, dflt ? *dflt : Value::real(0.0));
  }
  if (name == "indent") {
    check_arity(pos, what, args, kwargs, {"width", "first", "blank"});
    const Value* width = arg(args, kwargs, 0, "width");
    const Value* first = arg(args, kwargs, 1, "first");
    const Value* blank = arg(args, kwargs, 2, "blank");
    std::string pad = "    ";
    if (width && width->is_string()) {
      pad = width->as_string();
    } else if (width) {
      const int64_t n = need_int(pos, what, *width);
      if (n < 0 || n > 1024)
        fail_at(pos, "indent width " + std::to_string(n) + " is outside 0..1024");
      pad = std::string(static_cast<size_t>(n), ' ');
    }
    const std::string s = output_of(pos, v);
    std::string out = indent(s, pad, first && first->truthy(), blank && blank->truthy());
    check_string(pos, out.size());
    budget.charge(pos, static_cast<int64_t>(out.size() / kBytesPerStep));
    return Value::string(std::move(out));
  }
  if (name == "sort") {
    check_arity(pos, what, args, kwargs, {"reverse", "case_sensitive", "attribute"});
    const Value* rev = arg(args, kwargs, 0, "reverse");
    const Value* cs = arg(args, kwargs, 1, "case_sensitive");
    const Value* attr = arg(args, kwargs, 2, "attribute");
    List items = iterate(pos, v);
    budget.charge(pos, static_cast<int64_t>(items.size()) * 20);
    std::vector<std::pair<Value, size_t>> keyed;
    for (size_t i = 0; i < items.size(); ++i) {
      Value key = attr ? attribute_of(items[i], output_of(pos, *attr)) : items[i];
      if (key.is_string() && !(cs && cs->truthy())) {
        std::string lowered = key.as_string();
        for (char& c : lowered) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        key = Value::string(std::move(lowered));
      }
      keyed.emplace_back(std::move(key), i);
    }
    const bool reverse = rev && rev->truthy();
    std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& x, const auto& y) {
      return reverse ? less(pos, y.first, x.first) : less(pos, x.first, y.first);
    });
    List out;
    for (const auto& k : keyed) out.push_back(items[k.second]);
    return checked_list(pos, std::move(out));
  }
  if (name == "map") {
    List out;
    const Value* attr = arg({}, kwargs, 0, "attribute");
    if (attr) {
      const Value* dflt = arg({}, kwargs, 0, "default");
      for (const Value& item : iterate(pos, v)) {
        Value x = attribute_of(item, output_of(pos, *attr));
        out.push_back(x.is_undefined() && dflt ? *dflt : x);
      }
      return checked_list(pos, std::move(out));
    }
    if (args.empty() || !args[0].is_string()) fail_at(pos, "map needs a filter name or attribute=");
    const std::string filter = args[0].as_string();
    if (!is_known_filter(filter) || filter == "map") {
      fail_at(pos, "map: filter '" + filter + "' is not supported");
    }
    const std::vector<Value> rest(args.begin() + 1, args.end());
    for (const Value& item : iterate(pos, v)) {
      out.push_back(apply_filter(budget, pos, filter, item, rest, kwargs));
    }
    return checked_list(pos, std::move(out));
  }
  if (name == "select" || name == "reject" || name == "selectattr" || name == "rejectattr") {
    const bool by_attr = name == "selectattr" || name == "rejectattr";
    const bool keep_if = name == "select" || name == "selectattr";
    size_t k = 0;
    std::string attr;
    if (by_attr) {
      if (args.empty()) fail_at(pos, what + " needs an attribute name");
      attr = output_of(pos, args[k++]);
    }
    std::string test;
    if (k < args.size()) {
      if (!args[k].is_string() || !is_known_test(args[k].as_string())) {
        fail_at(pos, what + ": test " + to_repr(args[k]) + " is not supported");
      }
      test = args[k++].as_string();
    }
    const std::vector<Value> rest(args.begin() + static_cast<std::ptrdiff_t>(k), args.end());
    List out;
    for (const Value& item : iterate(pos, v)) {
      budget.charge(pos, 1);
      const Value x = by_attr ? attribute_of(item, attr) : item;
      const bool ok = test.empty() ? x.truthy() : apply_test(pos, test, x, rest);
      if (ok == keep_if) out.push_back(item);
    }
    return checked_list(pos, std::move(out));
  }
  fail_at(pos, what + " is not supported");
}

Value call_method(Budget& budget, const Pos& pos, const Value& obj, const std::string& name,
                  const std::vector<Value>& args, const Kwargs& kwargs) {
  const std::string what = std::string(obj.type_name()) + "." + name + "()";
  budget.charge(pos, 1);
  charge(pos, obj.weight());
  if (obj.is_dict() && kDictMethods.count(name)) {
    if (name == "get") {
      check_arity(pos, what, args, kwargs, {"key", "default"});
      const Value* key = arg(args, kwargs, 0, "key");
      if (!key) fail_at(pos, what + " needs a key");
      const Value* found = key->is_string() ? obj.find(key->as_string()) : nullptr;
      if (found) return *found;
      const Value* dflt = arg(args, kwargs, 1, "default");
      return dflt ? *dflt : Value::none();
    }
    check_arity(pos, what, args, kwargs, {});
    List out;
    for (const auto& e : obj.entries()) {
      if (name == "items") out.push_back(Value::list({Value::string(e.first), e.second}, true));
      if (name == "keys") out.push_back(Value::string(e.first));
      if (name == "values") out.push_back(e.second);
    }
    return checked_list(pos, std::move(out));
  }
  if (obj.is_string() && kStringMethods.count(name)) {
    const std::string& s = obj.as_string();
    if (name == "startswith" || name == "endswith") {
      check_arity(pos, what, args, kwargs, {"prefix"});
      if (args.empty()) fail_at(pos, what + " needs an argument");
      List options = args[0].is_list() ? args[0].items() : List{args[0]};
      for (const Value& o : options) {
        const std::string& p = need_string(pos, what, o);
        const bool hit = p.size() <= s.size() &&
                         (name == "startswith" ? s.compare(0, p.size(), p) == 0
                                               : s.compare(s.size() - p.size(), p.size(), p) == 0);
        if (hit) return Value::boolean(true);
      }
      return Value::boolean(false);
    }
    if (name == "strip" || name == "lstrip" || name == "rstrip") {
      check_arity(pos, what, args, kwargs, {"chars"});
      const Value* chars = arg(args, kwargs, 0, "chars");
      if (chars && !chars->is_none()) need_string(pos, what, *chars);
      return Value::string(strip(s, chars, name != "rstrip", name != "lstrip"));
    }
    if (name == "split" || name == "rsplit") {
      check_arity(pos, what, args, kwargs, {"sep", "maxsplit"});
      const Value* maxsplit = arg(args, kwargs, 1, "maxsplit");
      const int64_t m = maxsplit ? need_int(pos, what, *maxsplit) : -1;
      if (name == "rsplit" && m >= 0) fail_at(pos, "rsplit() with maxsplit is not supported");
      List out;
      for (std::string& part : split(pos, s, arg(args, kwargs, 0, "sep"), m)) {
        out.push_back(Value::string(std::move(part)));
      }
      budget.charge(pos, static_cast<int64_t>(out.size()));
      return checked_list(pos, std::move(out));
    }
    if (name == "upper" || name == "lower" || name == "title" || name == "capitalize") {
      check_arity(pos, what, args, kwargs, {});
      const int mode = name == "upper" ? 1 : name == "lower" ? 0 : name == "capitalize" ? 2 : 3;
      return Value::string(ascii_case(pos, what, s, mode));
    }
    if (name == "replace") {
      check_arity(pos, what, args, kwargs, {"old", "new", "count"});
      if (args.size() < 2) fail_at(pos, what + " needs old and new strings");
      const Value* count = arg(args, kwargs, 2, "count");
      return Value::string(replace(budget, pos, s, need_string(pos, what, args[0]),
                                   need_string(pos, what, args[1]),
                                   count ? need_int(pos, what, *count) : -1));
    }
    if (name == "find" || name == "count") {
      check_arity(pos, what, args, kwargs, {"sub"});
      if (args.empty()) fail_at(pos, what + " needs an argument");
      const std::string& sub = need_string(pos, what, args[0]);
      if (name == "find") {
        const size_t at = s.find(sub);
        if (at == std::string::npos) return Value::integer(-1);
        return Value::integer(static_cast<int64_t>(count_chars(s.substr(0, at))));
      }
      if (sub.empty()) return Value::integer(static_cast<int64_t>(count_chars(s)) + 1);
      int64_t n = 0;
      for (size_t at = s.find(sub); at != std::string::npos; at = s.find(sub, at + sub.size())) ++n;
      return Value::integer(n);
    }
    if (name == "join") {
      check_arity(pos, what, args, kwargs, {"iterable"});
      if (args.empty()) fail_at(pos, what + " needs an argument");
      std::string out;
      bool first = true;
      for (const Value& item : iterate(pos, args[0])) {
        if (!first) out += s;
        first = false;
        out += need_string(pos, what, item);
        check_string(pos, out.size());
      }
      return Value::string(std::move(out));
    }
  }
  fail_at(pos, std::string("'") + obj.type_name() + "' object has no method '" + name + "'");
}

}  // namespace mlaspec::tokenizer::jinja
