// Python's operators and comparisons on template values, and what iterating a value yields.
#include <algorithm>
#include <cmath>

#include "tokenizer/jinja/builtins.h"
#include "tokenizer/jinja/eval.h"
#include "tokenizer/jinja/text.h"

namespace mlaspec::tokenizer::jinja {
namespace {

[[noreturn]] void undefined_error(const Pos& pos, const Value& v) {
  fail_at(pos, v.undefined_name().empty() ? "undefined value" : v.undefined_name());
}

[[noreturn]] void type_error(const Pos& pos, const std::string& what) {
  fail_at(pos, what);
}

}  // namespace

List iterate(const Pos& pos, const Value& v) {
  charge(pos, v.weight());
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
      // One value per character: bounded and charged by the count before any is made.
      const size_t n = count_chars(v.as_string());
      check_list(pos, n);
      charge(pos, n);
      const Chars cs(v.as_string());
      chars.reserve(cs.size());
      for (size_t i = 0; i < cs.size(); ++i) chars.push_back(Value::string(std::string(cs[i])));
      return chars;
    }
    default:
      type_error(pos, std::string("'") + v.type_name() + "' object is not iterable");
  }
}

Value binary_op(Budget& budget, const Pos& pos, const std::string& op, const Value& a,
                const Value& b) {
  if (op == "~") {
    std::string s = output_of(pos, a) + output_of(pos, b);
    check_string(pos, s.size());
    budget.charge(pos, static_cast<int64_t>(s.size() / kBytesPerStep));
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
      budget.charge(
          pos, static_cast<int64_t>((a.as_string().size() + b.as_string().size()) / kBytesPerStep));
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
      budget.charge(pos, static_cast<int64_t>(out.size() / kBytesPerStep) + n / 64);
      return Value::string(std::move(out));
    }
    if (seq->is_list()) {
      const size_t unit = seq->items().size();
      if (unit > 0 && static_cast<uint64_t>(n) > kMaxListItems / unit)
        check_list(pos, kMaxListItems + 1);
      List out;
      for (int64_t i = 0; i < n; ++i)
        out.insert(out.end(), seq->items().begin(), seq->items().end());
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
  // Equality and `in` may walk a whole value.
  charge(pos, std::min(a.weight(), b.weight()) + (op == "in" || op == "not in" ? b.weight() : 0));
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

}  // namespace mlaspec::tokenizer::jinja
