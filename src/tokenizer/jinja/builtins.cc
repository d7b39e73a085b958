// Filters, tests, methods and operators with the results Python and jinja2 give for the same
// values. Text is UTF-8; lengths, indices and slices count code points as Python's str does.
#include "tokenizer/jinja/builtins.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "tokenizer/jinja/eval.h"
#include "tokenizer/jinja/lexer.h"

namespace mlaspec::tokenizer::jinja {
namespace {

const std::set<std::string_view> kFilters = {
    "abs",    "capitalize", "count",     "d",    "default", "first",  "float",  "indent",
    "int",    "items",      "join",      "last", "length",  "list",   "lower",  "map",
    "reject", "rejectattr", "replace",   "reverse", "safe", "select", "selectattr", "sort",
    "string", "title",      "tojson",    "trim", "upper"};
const std::set<std::string_view> kTests = {
    "boolean", "callable", "defined", "divisibleby", "eq",  "equalto", "even",    "false",
    "float",   "ge",       "gt",      "in",          "integer", "iterable", "le", "lower",
    "lt",      "mapping",  "ne",      "none",        "number",  "odd",      "sameas", "sequence",
    "string",  "true",     "undefined", "upper"};
const std::set<std::string_view> kGlobals = {"raise_exception", "namespace", "range",
                                             "strftime_now", "dict"};
const std::set<std::string_view> kStringMethods = {
    "startswith", "endswith", "strip", "lstrip",     "rstrip",  "split", "rsplit", "upper",
    "lower",      "title",    "capitalize", "replace", "find",  "count", "join"};
const std::set<std::string_view> kDictMethods = {"items", "keys", "values", "get"};

[[noreturn]] void type_error(const Pos& pos, const std::string& what) { fail_at(pos, what); }

[[noreturn]] void undefined_error(const Pos& pos, const Value& v) {
  fail_at(pos, v.undefined_name().empty() ? "undefined value" : v.undefined_name());
}

// Positional argument i, else keyword `name`, else nullptr.
const Value* arg(const std::vector<Value>& args, const Kwargs& kwargs, size_t i,
                 const char* name) {
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

bool is_space_cp(const std::string& ch) {
  size_t i = 0;
  char32_t cp = 0;
  const auto b = static_cast<unsigned char>(ch[0]);
  const size_t n = ch.size();
  cp = n == 1 ? b : b & (0x7f >> n);
  for (i = 1; i < n; ++i) cp = (cp << 6) | (static_cast<unsigned char>(ch[i]) & 0x3f);
  return is_py_space(cp);
}

// str.strip / lstrip / rstrip: whitespace, or the characters of `chars`.
std::string strip(const std::string& s, const Value* chars, bool left, bool right) {
  const std::vector<std::string> cs = characters(s);
  std::set<std::string> set;
  const bool custom = chars && !chars->is_none();
  if (custom) {
    for (const std::string& c : characters(chars->as_string())) set.insert(c);
  }
  auto strip_it = [&](const std::string& c) { return custom ? set.count(c) > 0 : is_space_cp(c); };
  size_t b = 0, e = cs.size();
  if (left) {
    while (b < e && strip_it(cs[b])) ++b;
  }
  if (right) {
    while (e > b && strip_it(cs[e - 1])) --e;
  }
  std::string out;
  for (size_t i = b; i < e; ++i) out += cs[i];
  return out;
}

// ASCII case mapping; other letters would need Unicode tables this layer does not carry, so
// non-ASCII text is refused rather than mapped differently from Python.
std::string ascii_case(const Pos& pos, const std::string& what, const std::string& s, int mode) {
  for (const char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80) {
      fail_at(pos, what + " of non-ASCII text is not supported");
    }
  }
  std::string out = s;
  bool word_start = true;
  for (size_t i = 0; i < out.size(); ++i) {
    const char c = out[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    bool upper = mode == 1;
    if (mode == 2) upper = i == 0;          // capitalize
    if (mode == 3) upper = word_start;      // title
    if (alpha) out[i] = static_cast<char>(upper ? std::toupper(c) : std::tolower(c));
    word_start = !alpha;
  }
  return out;
}

std::vector<std::string> split(const Pos& pos, const std::string& s, const Value* sep,
                               int64_t maxsplit) {
  std::vector<std::string> out;
  if (!sep || sep->is_none()) {
    const std::vector<std::string> cs = characters(s);
    size_t i = 0;
    while (i < cs.size()) {
      while (i < cs.size() && is_space_cp(cs[i])) ++i;
      if (i == cs.size()) break;
      std::string word;
      if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) {
        while (i < cs.size()) word += cs[i++];
        // Python keeps the remainder as is, minus trailing whitespace only when nothing follows.
        out.push_back(strip(word, nullptr, false, true));
        break;
      }
      while (i < cs.size() && !is_space_cp(cs[i])) word += cs[i++];
      out.push_back(std::move(word));
    }
    return out;
  }
  const std::string& d = need_string(pos, "split()", *sep);
  if (d.empty()) fail_at(pos, "split(): empty separator");
  size_t from = 0;
  while (true) {
    const size_t at = s.find(d, from);
    if (at == std::string::npos || (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit)) {
      out.push_back(s.substr(from));
      return out;
    }
    out.push_back(s.substr(from, at - from));
    from = at + d.size();
  }
}

std::string replace(Budget& budget, const Pos& pos, const std::string& s, const std::string& old,
                    const std::string& repl, int64_t count) {
  std::string out;
  int64_t done = 0;
  if (old.empty()) {
    // Python inserts the replacement before every character and at the end.
    const std::vector<std::string> cs = characters(s);
    for (const std::string& c : cs) {
      if (count < 0 || done < count) {
        out += repl;
        ++done;
      }
      out += c;
      check_string(pos, out.size());
    }
    if (count < 0 || done < count) out += repl;
    budget.charge(pos, static_cast<int64_t>(cs.size()));
    check_string(pos, out.size());
    return out;
  }
  size_t from = 0;
  while (true) {
    const size_t at = s.find(old, from);
    if (at == std::string::npos || (count >= 0 && done == count)) break;
    out.append(s, from, at - from);
    out += repl;
    check_string(pos, out.size());
    from = at + old.size();
    ++done;
  }
  out.append(s, from, std::string::npos);
  budget.charge(pos, done + 1);
  check_string(pos, out.size());
  return out;
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
      return static_cast<int64_t>(characters(v.as_string()).size());
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

bool less(const Pos& pos, const Value& a, const Value& b) { return compare_op(pos, "<", a, b); }

}  // namespace

bool is_known_filter(std::string_view name) { return kFilters.count(name) > 0; }
bool is_known_test(std::string_view name) { return kTests.count(name) > 0; }
bool is_known_global(std::string_view name) { return kGlobals.count(name) > 0; }
bool is_known_method(std::string_view name) {
  return kStringMethods.count(name) > 0 || kDictMethods.count(name) > 0;
}

std::vector<std::string> characters(const std::string& s) {
  std::vector<std::string> out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    size_t n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 1;
    if (i + n > s.size()) n = 1;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) n = 1;
    }
    out.push_back(s.substr(i, n));
    i += n;
  }
  return out;
}

List iterate(const Pos& pos, const Value& v) {
  switch (v.type()) {
    case Value::Type::kUndefined:
      return {};
    case Value::Type::kList:
      return v.items();
    case Value::Type::kDict: {
      List keys;
      for (const auto& e : v.entries()) keys.push_back(Value::string(e.first));
      return keys;
    }
    case Value::Type::kString: {
      List chars;
      for (std::string& c : characters(v.as_string())) chars.push_back(Value::string(std::move(c)));
      return chars;
    }
    default:
      type_error(pos, std::string("'") + v.type_name() + "' object is not iterable");
  }
}

Value binary_op(Budget& budget, const Pos& pos, const std::string& op, const Value& a,
                const Value& b) {
  if (op == "~") {
    std::string s = to_output(a) + to_output(b);
    check_string(pos, s.size());
    budget.charge(pos, static_cast<int64_t>(s.size() / 64));
    return Value::string(std::move(s));
  }
  if (a.is_undefined()) undefined_error(pos, a);
  if (b.is_undefined()) undefined_error(pos, b);
  auto unsupported_types = [&]() {
    type_error(pos, "unsupported operand type(s) for " + op + ": '" + a.type_name() + "' and '" +
                        b.type_name() + "'");
  };
  if (a.is_number() && b.is_number()) {
    const bool real = a.type() == Value::Type::kFloat || b.type() == Value::Type::kFloat;
    const int64_t x = a.as_int(), y = b.as_int();
    const double fx = a.as_float(), fy = b.as_float();
    int64_t r = 0;
    auto overflow = [&]() { fail_at(pos, "integer overflow in " + op + " (beyond 64 bits)"); };
    if (op == "+") {
      if (real) return Value::real(fx + fy);
      if (__builtin_add_overflow(x, y, &r)) overflow();
      return Value::integer(r);
    }
    if (op == "-") {
      if (real) return Value::real(fx - fy);
      if (__builtin_sub_overflow(x, y, &r)) overflow();
      return Value::integer(r);
    }
    if (op == "*") {
      if (real) return Value::real(fx * fy);
      if (__builtin_mul_overflow(x, y, &r)) overflow();
      return Value::integer(r);
    }
    if (op == "/") {
      if (fy == 0) fail_at(pos, "division by zero");
      return Value::real(fx / fy);
    }
    if (op == "//" || op == "%") {
      if (real) {
        if (fy == 0) fail_at(pos, "float division by zero");
        const double m = std::fmod(fx, fy);
        const double mod = (m != 0 && ((m < 0) != (fy < 0))) ? m + fy : m;
        return op == "%" ? Value::real(mod) : Value::real(std::floor((fx - mod) / fy + 0.5));
      }
      if (y == 0) fail_at(pos, "integer division or modulo by zero");
      if (x == INT64_MIN && y == -1) overflow();
      int64_t q = x / y, m = x % y;
      if (m != 0 && ((m < 0) != (y < 0))) {
        m += y;
        --q;
      }
      return Value::integer(op == "%" ? m : q);
    }
    if (op == "**") {
      if (real || y < 0) return Value::real(std::pow(fx, fy));
      int64_t result = 1, base = x, e = y;
      while (e > 0) {
        if (e & 1) {
          if (__builtin_mul_overflow(result, base, &result)) overflow();
        }
        e >>= 1;
        if (e > 0 && __builtin_mul_overflow(base, base, &base)) overflow();
      }
      return Value::integer(result);
    }
    unsupported_types();
  }
  if (op == "+") {
    if (a.is_string() && b.is_string()) {
      check_string(pos, a.as_string().size() + b.as_string().size());
      budget.charge(pos, static_cast<int64_t>((a.as_string().size() + b.as_string().size()) / 64));
      return Value::string(a.as_string() + b.as_string());
    }
    if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
      List items = a.items();
      items.insert(items.end(), b.items().begin(), b.items().end());
      budget.charge(pos, static_cast<int64_t>(items.size()));
      return checked_list(pos, std::move(items), a.is_tuple());
    }
    unsupported_types();
  }
  if (op == "*") {
    const Value* seq = a.is_number() ? &b : &a;
    const Value* times = a.is_number() ? &a : &b;
    if (times->type() != Value::Type::kInt && times->type() != Value::Type::kBool) {
      unsupported_types();
    }
    const int64_t n = std::max<int64_t>(0, times->as_int());
    if (seq->is_string()) {
      const size_t unit = seq->as_string().size();
      if (unit > 0 && static_cast<uint64_t>(n) > kMaxStringBytes / unit) {
        check_string(pos, kMaxStringBytes + 1);
      }
      std::string out;
      for (int64_t i = 0; i < n; ++i) out += seq->as_string();
      budget.charge(pos, static_cast<int64_t>(out.size() / 64) + n / 64);
      return Value::string(std::move(out));
    }
    if (seq->is_list()) {
      const size_t unit = seq->items().size();
      if (unit > 0 && static_cast<uint64_t>(n) > kMaxListItems / unit) check_list(pos, kMaxListItems + 1);
      List out;
      for (int64_t i = 0; i < n; ++i) out.insert(out.end(), seq->items().begin(), seq->items().end());
      budget.charge(pos, static_cast<int64_t>(out.size()) + n / 64);
      return checked_list(pos, std::move(out), seq->is_tuple());
    }
    unsupported_types();
  }
  if (op == "%" && a.is_string()) {
    fail_at(pos, "printf-style string formatting ('...' % value) is not supported");
  }
  type_error(pos, "unsupported operand type(s) for " + op + ": '" + a.type_name() + "' and '" +
                      b.type_name() + "'");
}

bool compare_op(const Pos& pos, const std::string& op, const Value& a, const Value& b) {
  if (op == "==") return a.equals(b);
  if (op == "!=") return !a.equals(b);
  if (op == "in" || op == "not in") {
    bool found = false;
    if (b.is_string()) {
      if (a.is_undefined()) undefined_error(pos, a);
      if (!a.is_string()) {
        type_error(pos, std::string("'in <string>' requires string as left operand, not ") +
                            a.type_name());
      }
      found = b.as_string().find(a.as_string()) != std::string::npos;
    } else if (b.is_list()) {
      for (const Value& item : b.items()) found = found || item.equals(a);
    } else if (b.is_dict()) {
      found = a.is_string() && b.find(a.as_string()) != nullptr;
    } else if (!b.is_undefined()) {
      type_error(pos, std::string("argument of type '") + b.type_name() + "' is not iterable");
    }
    return op == "in" ? found : !found;
  }
  if (a.is_undefined()) undefined_error(pos, a);
  if (b.is_undefined()) undefined_error(pos, b);
  int c = 0;
  if (a.is_number() && b.is_number()) {
    const bool real = a.type() == Value::Type::kFloat || b.type() == Value::Type::kFloat;
    if (real) {
      const double x = a.as_float(), y = b.as_float();
      if (std::isnan(x) || std::isnan(y)) return false;
      c = x < y ? -1 : x > y ? 1 : 0;
    } else {
      c = a.as_int() < b.as_int() ? -1 : a.as_int() > b.as_int() ? 1 : 0;
    }
  } else if (a.is_string() && b.is_string()) {
    // UTF-8 byte order is code point order, Python's str order.
    const int r = a.as_string().compare(b.as_string());
    c = r < 0 ? -1 : r > 0 ? 1 : 0;
  } else if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
    const List& x = a.items();
    const List& y = b.items();
    size_t i = 0;
    while (i < x.size() && i < y.size() && x[i].equals(y[i])) ++i;
    if (i < x.size() && i < y.size()) {
      c = compare_op(pos, "<", x[i], y[i]) ? -1 : 1;
    } else {
      c = x.size() < y.size() ? -1 : x.size() > y.size() ? 1 : 0;
    }
  } else {
    type_error(pos, "'" + op + "' not supported between instances of '" + a.type_name() +
                        "' and '" + b.type_name() + "'");
  }
  if (op == "<") return c < 0;
  if (op == "<=") return c <= 0;
  if (op == ">") return c > 0;
  if (op == ">=") return c >= 0;
  fail_at(pos, "unknown comparison " + op);
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
      if (static_cast<unsigned char>(c) >= 0x80) fail_at(pos, "test '" + name + "' of non-ASCII text is not supported");
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
  if (name == "default" || name == "d") {
    check_arity(pos, what, args, kwargs, {"default_value", "boolean"});
    const Value* dflt = arg(args, kwargs, 0, "default_value");
    const Value* boolean = arg(args, kwargs, 1, "boolean");
    const bool use = v.is_undefined() || (boolean && boolean->truthy() && !v.truthy());
    return use ? (dflt ? *dflt : Value::string("")) : v;
  }
  if (name == "safe") return v;
  if (name == "string") return Value::string(to_output(v));
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
    budget.charge(pos, static_cast<int64_t>(json->size() / 64));
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
    const std::string s = to_output(v);
    return Value::string(replace(budget, pos, s, need_string(pos, what, *old),
                                 need_string(pos, what, *repl),
                                 count && !count->is_none() ? need_int(pos, what, *count) : -1));
  }
  if (name == "join") {
    check_arity(pos, what, args, kwargs, {"d", "attribute"});
    const Value* sep = arg(args, kwargs, 0, "d");
    const Value* attr = arg(args, kwargs, 1, "attribute");
    const std::string d = sep ? to_output(*sep) : "";
    std::string out;
    bool first = true;
    for (const Value& item : iterate(pos, v)) {
      if (!first) out += d;
      first = false;
      out += to_output(attr ? attribute_of(item, to_output(*attr)) : item);
      check_string(pos, out.size());
    }
    budget.charge(pos, static_cast<int64_t>(out.size() / 64));
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
      std::vector<std::string> cs = characters(v.as_string());
      std::string out;
      for (auto it = cs.rbegin(); it != cs.rend(); ++it) out += *it;
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
      if (n < 0 || n > 1024) fail_at(pos, "indent width " + std::to_string(n) + " is outside 0..1024");
      pad = std::string(static_cast<size_t>(n), ' ');
    }
    const std::string s = to_output(v);
    std::string out = indent(s, pad, first && first->truthy(), blank && blank->truthy());
    check_string(pos, out.size());
    budget.charge(pos, static_cast<int64_t>(out.size() / 64));
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
      Value key = attr ? attribute_of(items[i], to_output(*attr)) : items[i];
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
        Value x = attribute_of(item, to_output(*attr));
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
      attr = to_output(args[k++]);
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
        return Value::integer(static_cast<int64_t>(characters(s.substr(0, at)).size()));
      }
      if (sub.empty()) return Value::integer(static_cast<int64_t>(characters(s).size()) + 1);
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
