#include "tokenizer/jinja/eval.h"

#include <ctime>

#include "tokenizer/jinja/lexer.h"
#include "tokenizer/jinja/text.h"

namespace mlaspec::tokenizer::jinja {

void fail_at(const Pos& pos, const std::string& what) {
  throw RenderError{invalid_argument("chat template " + where(pos) + ": " + what)};
}

void exhausted_at(const Pos& pos, const std::string& what) {
  throw RenderError{resource_exhausted("chat template " + where(pos) + ": " + what)};
}

void check_string(const Pos& pos, size_t bytes) {
  if (bytes > kMaxStringBytes) {
    exhausted_at(pos, "a string of " + std::to_string(bytes) + " bytes exceeds the limit of " +
                          std::to_string(kMaxStringBytes));
  }
}

void check_list(const Pos& pos, size_t items) {
  if (items > kMaxListItems) {
    exhausted_at(pos, "a list of " + std::to_string(items) + " items exceeds the limit of " +
                          std::to_string(kMaxListItems));
  }
}

Value checked_list(const Pos& pos, List items, bool tuple) {
  check_list(pos, items.size());
  Value v = Value::list(std::move(items), tuple);
  if (v.depth() > static_cast<uint32_t>(kMaxNestingValues)) {
    exhausted_at(pos, "lists nested " + std::to_string(v.depth()) + " deep exceed the limit of " +
                          std::to_string(kMaxNestingValues));
  }
  return v;
}

namespace {
thread_local Budget* active_budget = nullptr;
}  // namespace

void charge(const Pos& pos, uint64_t n) {
  if (active_budget) {
    active_budget->charge(pos, static_cast<int64_t>(std::min<uint64_t>(n, uint64_t{1} << 40)));
  }
}

std::string output_of(const Pos& pos, const Value& v) {
  charge(pos, v.weight());
  std::string s = to_output(v);
  check_string(pos, s.size());
  return s;
}

namespace {

enum class Flow { kNormal, kBreak, kContinue };

using Frame = std::map<std::string, Value>;

class Renderer {
 public:
  explicit Renderer(const Context& context) : root_(context) {
    scopes_.push_back(&root_);
    active_budget = &budget_;
  }
  ~Renderer() { active_budget = nullptr; }
  Renderer(const Renderer&) = delete;
  Renderer& operator=(const Renderer&) = delete;

  std::string run(const Body& body) {
    std::string out;
    exec(body, out);
    return out;
  }

 private:
  // ---- statements ----
  Flow exec(const Body& body, std::string& out) {
    for (const StmtPtr& s : body) {
      const Flow flow = exec(*s, out);
      if (flow != Flow::kNormal) return flow;
    }
    return Flow::kNormal;
  }

  void emit(const Pos& pos, std::string& out, const std::string& text) {
    check_string(pos, out.size() + text.size());
    out += text;
  }

  // Bounds the evaluator's recursion (nested expressions inside recursive macros), which the
  // parser's nesting limit alone does not.
  struct Deeper {
    Renderer* r;
    Deeper(Renderer* renderer, const Pos& pos) : r(renderer) {
      if (++r->depth_ > kMaxEvalDepth) {
        exhausted_at(pos,
                     "evaluation nested deeper than " + std::to_string(kMaxEvalDepth) + " levels");
      }
    }
    ~Deeper() { --r->depth_; }
  };

  Flow exec(const Stmt& s, std::string& out) {
    budget_.charge(s.pos, 1);
    Deeper deeper(this, s.pos);
    switch (s.kind) {
      case Stmt::Kind::kText:
        emit(s.pos, out, s.text);
        return Flow::kNormal;
      case Stmt::Kind::kOutput: {
        const Value v = eval(*s.expr);
        if (v.type() == Value::Type::kNamespace || v.type() == Value::Type::kMacro) {
          fail_at(s.pos, std::string("printing a ") + v.type_name() + " is not supported");
        }
        emit(s.pos, out, output_of(s.pos, v));
        return Flow::kNormal;
      }
      case Stmt::Kind::kIf:
        for (size_t i = 0; i < s.conds.size(); ++i) {
          if (eval(*s.conds[i]).truthy()) return exec(s.bodies[i], out);
        }
        if (s.bodies.size() > s.conds.size()) return exec(s.bodies.back(), out);
        return Flow::kNormal;
      case Stmt::Kind::kFor:
        exec_for(s, out);
        return Flow::kNormal;
      case Stmt::Kind::kSet:
        exec_set(s, eval(*s.expr));
        return Flow::kNormal;
      case Stmt::Kind::kSetBlock: {
        std::string captured;
        exec(s.bodies[0], captured);
        assign(s.targets[0], Value::string(std::move(captured)));
        return Flow::kNormal;
      }
      case Stmt::Kind::kMacro:
        assign(s.text, Value::macro(&s));
        return Flow::kNormal;
      case Stmt::Kind::kBreak:
        return Flow::kBreak;
      case Stmt::Kind::kContinue:
        return Flow::kContinue;
      case Stmt::Kind::kScope:
        return exec(s.bodies[0], out);
    }
    return Flow::kNormal;
  }

  void assign(const std::string& name, Value v) { (*scopes_.back())[name] = std::move(v); }

  void bind_targets(const Pos& pos, const std::vector<std::string>& targets, const Value& v) {
    if (targets.size() == 1) {
      assign(targets[0], v);
      return;
    }
    const List items = iterate(pos, v);
    if (items.size() != targets.size()) {
      fail_at(pos, "cannot unpack " + std::to_string(items.size()) + " values into " +
                       std::to_string(targets.size()) + " names");
    }
    for (size_t i = 0; i < targets.size(); ++i) assign(targets[i], items[i]);
  }

  void exec_set(const Stmt& s, const Value& v) {
    if (s.attr.empty()) {
      bind_targets(s.pos, s.targets, v);
      return;
    }
    const Value ns = lookup(s.targets[0]);
    if (ns.type() != Value::Type::kNamespace) {
      fail_at(s.pos, "cannot assign attribute '" + s.attr + "' on " + s.targets[0] + " (a " +
                         ns.type_name() + ", not a namespace())");
    }
    Dict& entries = ns.mutable_entries();
    for (auto& e : entries) {
      if (e.first == s.attr) {
        e.second = v;
        return;
      }
    }
    entries.emplace_back(s.attr, v);
  }

  void exec_for(const Stmt& s, std::string& out) {
    const Value seq = eval(*s.expr);
    if (seq.is_none() || seq.is_number()) {
      fail_at(s.expr->pos, std::string("'") + seq.type_name() + "' object is not iterable");
    }
    List items = iterate(s.expr->pos, seq);
    if (s.cond) {
      // `for x in xs if cond`: the condition sees the loop variables but not `loop`.
      List kept;
      for (Value& item : items) {
        Frame frame;
        scopes_.push_back(&frame);
        bind_targets(s.pos, s.targets, item);
        const bool keep = eval(*s.cond).truthy();
        scopes_.pop_back();
        if (keep) kept.push_back(std::move(item));
      }
      items = std::move(kept);
    }
    if (items.empty()) {
      if (s.bodies.size() > 1) exec(s.bodies[1], out);
      return;
    }
    const auto n = static_cast<int64_t>(items.size());
    for (int64_t i = 0; i < n; ++i) {
      budget_.charge(s.pos, 1);
      // Each iteration starts from the enclosing scope: jinja2 does not carry a `set` inside
      // the body over to the next iteration (that is what namespace() is for).
      Frame frame;
      scopes_.push_back(&frame);
      Dict loop = {
          {"index", Value::integer(i + 1)},
          {"index0", Value::integer(i)},
          {"revindex", Value::integer(n - i)},
          {"revindex0", Value::integer(n - i - 1)},
          {"first", Value::boolean(i == 0)},
          {"last", Value::boolean(i == n - 1)},
          {"length", Value::integer(n)},
          {"depth", Value::integer(1)},
          {"depth0", Value::integer(0)},
          {"previtem", i > 0 ? items[i - 1] : Value::undefined("there is no previous item")},
          {"nextitem", i + 1 < n ? items[i + 1] : Value::undefined("there is no next item")},
      };
      frame["loop"] = Value::dict(std::move(loop));
      bind_targets(s.pos, s.targets, items[i]);
      const Flow flow = exec(s.bodies[0], out);
      scopes_.pop_back();
      if (flow == Flow::kBreak) break;
    }
  }

  // ---- expressions ----
  Value lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto found = (*it)->find(name);
      if (found != (*it)->end()) return found->second;
    }
    return Value::undefined("'" + name + "' is undefined");
  }

  static std::string object_name(const Value& v) {
    return std::string("'") + v.type_name() + " object'";
  }

  [[noreturn]] void fail_undefined(const Pos& pos, const Value& v) {
    fail_at(pos, v.undefined_name().empty() ? "undefined value" : v.undefined_name());
  }

  Value get_attr(const Pos& pos, const Value& obj, const std::string& name) {
    if (obj.is_undefined()) fail_undefined(pos, obj);
    if (obj.is_mapping()) {
      if (const Value* v = obj.find(name)) return *v;
    }
    return Value::undefined(object_name(obj) + " has no attribute '" + name + "'");
  }

  Value get_item(const Pos& pos, const Value& obj, const Value& key) {
    if (obj.is_undefined()) fail_undefined(pos, obj);
    if (obj.is_mapping() && key.is_string()) {
      if (const Value* v = obj.find(key.as_string())) return *v;
      return Value::undefined(object_name(obj) + " has no attribute '" + key.as_string() + "'");
    }
    if ((obj.is_list() || obj.is_string()) && key.type() == Value::Type::kInt) {
      if (obj.is_list()) {
        const auto n = static_cast<int64_t>(obj.items().size());
        int64_t i = key.as_int();
        if (i < 0) i += n;
        if (i >= 0 && i < n) return obj.items()[static_cast<size_t>(i)];
      } else {
        charge(pos, obj.weight());
        const Chars chars(obj.as_string());
        const auto n = static_cast<int64_t>(chars.size());
        int64_t i = key.as_int();
        if (i < 0) i += n;
        if (i >= 0 && i < n) return Value::string(std::string(chars[static_cast<size_t>(i)]));
      }
      return Value::undefined(object_name(obj) + " has no element " + to_output(key));
    }
    return Value::undefined(object_name(obj) + " has no element " + to_repr(key));
  }

  Value slice(const Expr& e) {
    const Value obj = eval(*e.args[0]);
    if (obj.is_undefined()) fail_undefined(e.pos, obj);
    int64_t bound[3] = {0, 0, 1};
    bool given[3] = {false, false, false};
    for (int k = 0; k < 3; ++k) {
      if (!e.args[1 + k]) continue;
      const Value v = eval(*e.args[1 + k]);
      if (v.is_none()) continue;
      if (v.type() != Value::Type::kInt && v.type() != Value::Type::kBool) {
        fail_at(e.pos, std::string("slice indices must be integers or None, not ") + v.type_name());
      }
      bound[k] = v.as_int();
      given[k] = true;
    }
    const int64_t step = bound[2];
    if (step == 0) fail_at(e.pos, "slice step cannot be zero");
    if (!obj.is_string() && !obj.is_list()) {
      fail_at(e.pos, std::string("'") + obj.type_name() + "' object is not subscriptable");
    }
    static const std::string kNoText;
    budget_.charge(e.pos, static_cast<int64_t>(obj.weight()));
    const Chars chars(obj.is_string() ? obj.as_string() : kNoText);
    const auto n = static_cast<int64_t>(obj.is_string() ? chars.size() : obj.items().size());
    // Python's slice.indices().
    auto clamp = [&](int64_t v, bool is_given, int64_t dflt) {
      if (!is_given) return dflt;
      if (v < 0) v += n;
      if (step > 0) return std::clamp<int64_t>(v, 0, n);
      return std::clamp<int64_t>(v, -1, n - 1);
    };
    const int64_t start = clamp(bound[0], given[0], step > 0 ? 0 : n - 1);
    const int64_t stop = clamp(bound[1], given[1], step > 0 ? n : -1);
    if (obj.is_string()) {
      std::string out;
      for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
        out += chars[static_cast<size_t>(i)];
      }
      return Value::string(std::move(out));
    }
    List out;
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
      out.push_back(obj.items()[static_cast<size_t>(i)]);
    }
    return Value::list(std::move(out), obj.is_tuple());
  }

  void eval_args(const Expr& e, size_t from, std::vector<Value>* args, Kwargs* kwargs) {
    for (size_t i = from; i < e.args.size(); ++i) args->push_back(eval(*e.args[i]));
    for (const auto& kw : e.kwargs) kwargs->emplace_back(kw.first, eval(*kw.second));
  }

  Value call(const Expr& e) {
    const Expr& callee = *e.args[0];
    std::vector<Value> args;
    Kwargs kwargs;
    if (callee.kind == Expr::Kind::kAttr) {
      const Value obj = eval(*callee.args[0]);
      if (obj.is_undefined()) fail_undefined(callee.pos, obj);
      eval_args(e, 1, &args, &kwargs);
      if (obj.is_mapping()) {
        // A macro stored in a namespace or dict is called; otherwise a dict method.
        const Value* member = obj.find(callee.name);
        if (member && member->type() == Value::Type::kMacro) {
          return call_macro(e.pos, *member->macro_def(), args, kwargs);
        }
      }
      return call_method(budget_, callee.pos, obj, callee.name, args, kwargs);
    }
    eval_args(e, 1, &args, &kwargs);
    const std::string& name = callee.name;
    const Value v = lookup(name);
    if (v.type() == Value::Type::kMacro) return call_macro(e.pos, *v.macro_def(), args, kwargs);
    if (!v.is_undefined())
      fail_at(callee.pos, "'" + name + "' (a " + v.type_name() + ") is not callable");
    return call_global(e.pos, name, args, kwargs);
  }

  Value call_global(const Pos& pos, const std::string& name, const std::vector<Value>& args,
                    const Kwargs& kwargs) {
    if (name == "raise_exception") {
      const std::string msg = args.empty() ? "" : output_of(pos, args[0]);
      throw RenderError{invalid_argument("chat template raised an exception: " + msg)};
    }
    if (name == "namespace" || name == "dict") {
      if (!args.empty()) fail_at(pos, name + "() takes keyword arguments only here");
      Dict entries;
      for (const auto& kw : kwargs) entries.emplace_back(kw.first, kw.second);
      return name == "dict" ? Value::dict(std::move(entries))
                            : Value::make_namespace(std::move(entries));
    }
    if (name == "range") {
      if (args.empty() || args.size() > 3 || !kwargs.empty()) {
        fail_at(pos, "range() takes 1 to 3 integer arguments");
      }
      for (const Value& a : args) {
        if (a.type() != Value::Type::kInt && a.type() != Value::Type::kBool) {
          fail_at(pos, std::string("range() arguments must be integers, not ") + a.type_name());
        }
      }
      const int64_t start = args.size() > 1 ? args[0].as_int() : 0;
      const int64_t stop = args.size() > 1 ? args[1].as_int() : args[0].as_int();
      const int64_t step = args.size() > 2 ? args[2].as_int() : 1;
      if (step == 0) fail_at(pos, "range() step must not be zero");
      // Count first, in 128 bits' worth of care: the bounds may be extreme.
      const long double span = static_cast<long double>(stop) - static_cast<long double>(start);
      const long double count = span / static_cast<long double>(step);
      if (count > static_cast<long double>(kMaxListItems)) {
        exhausted_at(pos, "range() of more than " + std::to_string(kMaxListItems) +
                              " items exceeds the list limit");
      }
      List out;
      for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
        out.push_back(Value::integer(i));
      }
      budget_.charge(pos, static_cast<int64_t>(out.size()));
      return Value::list(std::move(out));
    }
    if (name == "strftime_now") {
      if (args.size() != 1 || !args[0].is_string())
        fail_at(pos, "strftime_now() takes a format string");
      const std::time_t now = std::time(nullptr);
      std::tm tm{};
      localtime_r(&now, &tm);
      char buf[256];
      const size_t n = std::strftime(buf, sizeof(buf), args[0].as_string().c_str(), &tm);
      return Value::string(std::string(buf, n));
    }
    fail_at(pos, "'" + name + "' is undefined");
  }

  Value call_macro(const Pos& pos, const Stmt& def, const std::vector<Value>& args,
                   const Kwargs& kwargs) {
    if (macro_depth_ >= kMaxMacroDepth) {
      exhausted_at(pos, "macro calls nested deeper than " + std::to_string(kMaxMacroDepth));
    }
    if (args.size() > def.targets.size()) {
      fail_at(pos, "macro '" + def.text + "' takes " + std::to_string(def.targets.size()) +
                       " arguments, got " + std::to_string(args.size()));
    }
    Frame frame;
    // The body sees the template's top level and its own parameters, not the caller's locals.
    std::vector<Frame*> saved = std::move(scopes_);
    scopes_ = {&root_, &frame};
    for (size_t i = 0; i < def.targets.size(); ++i) {
      const std::string& param = def.targets[i];
      const Value* given = i < args.size() ? &args[i] : nullptr;
      for (const auto& kw : kwargs) {
        if (kw.first == param) given = &kw.second;
      }
      if (given) {
        frame[param] = *given;
      } else if (def.defaults[i]) {
        frame[param] = eval(*def.defaults[i]);
      } else {
        frame[param] = Value::undefined("'" + param + "' is undefined");
      }
    }
    for (const auto& kw : kwargs) {
      bool known = false;
      for (const std::string& p : def.targets) known = known || p == kw.first;
      if (!known) {
        scopes_ = std::move(saved);
        fail_at(pos, "macro '" + def.text + "' has no parameter '" + kw.first + "'");
      }
    }
    ++macro_depth_;
    std::string out;
    exec(def.bodies[0], out);
    --macro_depth_;
    scopes_ = std::move(saved);
    return Value::string(std::move(out));
  }

  Value eval(const Expr& e) {
    budget_.charge(e.pos, 1);
    Deeper deeper(this, e.pos);
    switch (e.kind) {
      case Expr::Kind::kLiteral:
        return e.value;
      case Expr::Kind::kName:
        return lookup(e.name);
      case Expr::Kind::kList:
      case Expr::Kind::kTuple: {
        List items;
        for (const ExprPtr& a : e.args) items.push_back(eval(*a));
        return checked_list(e.pos, std::move(items), e.kind == Expr::Kind::kTuple);
      }
      case Expr::Kind::kDict: {
        Dict entries;
        for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
          const Value key = eval(*e.args[i]);
          if (!key.is_string()) {
            fail_at(e.args[i]->pos,
                    std::string("dict keys must be strings here, not ") + key.type_name());
          }
          Value v = eval(*e.args[i + 1]);
          bool replaced = false;
          for (auto& entry : entries) {
            if (entry.first == key.as_string()) {
              entry.second = v;
              replaced = true;
            }
          }
          if (!replaced) entries.emplace_back(key.as_string(), std::move(v));
        }
        Value d = Value::dict(std::move(entries));
        if (d.depth() > static_cast<uint32_t>(kMaxNestingValues)) {
          exhausted_at(e.pos, "dicts nested deeper than " + std::to_string(kMaxNestingValues));
        }
        return d;
      }
      case Expr::Kind::kAttr:
        return get_attr(e.pos, eval(*e.args[0]), e.name);
      case Expr::Kind::kItem: {
        const Value obj = eval(*e.args[0]);
        return get_item(e.pos, obj, eval(*e.args[1]));
      }
      case Expr::Kind::kSlice:
        return slice(e);
      case Expr::Kind::kCall:
        return call(e);
      case Expr::Kind::kFilter: {
        const Value target = eval(*e.args[0]);
        std::vector<Value> args;
        Kwargs kwargs;
        eval_args(e, 1, &args, &kwargs);
        return apply_filter(budget_, e.pos, e.name, target, args, kwargs);
      }
      case Expr::Kind::kTest: {
        const Value target = eval(*e.args[0]);
        std::vector<Value> args;
        Kwargs kwargs;
        eval_args(e, 1, &args, &kwargs);
        if (!kwargs.empty()) fail_at(e.pos, "test '" + e.name + "' takes no keyword arguments");
        return Value::boolean(apply_test(e.pos, e.name, target, args) != e.negate);
      }
      case Expr::Kind::kUnary: {
        const Value v = eval(*e.args[0]);
        if (e.name == "not") return Value::boolean(!v.truthy());
        if (v.is_undefined()) fail_undefined(e.pos, v);
        if (!v.is_number()) {
          fail_at(e.pos, std::string("bad operand type for unary ") + e.name + ": '" +
                             v.type_name() + "'");
        }
        if (e.name == "+") return v.type() == Value::Type::kBool ? Value::integer(v.as_int()) : v;
        if (v.type() == Value::Type::kFloat) return Value::real(-v.as_float());
        if (v.as_int() == INT64_MIN) fail_at(e.pos, "integer overflow in unary -");
        return Value::integer(-v.as_int());
      }
      case Expr::Kind::kBinary: {
        if (e.name == "and" || e.name == "or") {
          Value left = eval(*e.args[0]);
          if (left.truthy() == (e.name == "or")) return left;
          return eval(*e.args[1]);
        }
        const Value left = eval(*e.args[0]);
        const Value right = eval(*e.args[1]);
        return binary_op(budget_, e.pos, e.name, left, right);
      }
      case Expr::Kind::kCompare: {
        Value left = eval(*e.args[0]);
        for (size_t i = 0; i < e.ops.size(); ++i) {
          Value right = eval(*e.args[i + 1]);
          if (!compare_op(e.pos, e.ops[i], left, right)) return Value::boolean(false);
          left = std::move(right);
        }
        return Value::boolean(true);
      }
      case Expr::Kind::kCondition:
        if (eval(*e.args[1]).truthy()) return eval(*e.args[0]);
        if (e.args[2]) return eval(*e.args[2]);
        return Value::undefined(
            "the inline if expression evaluated to false and no else "
            "section was defined");
    }
    return {};
  }

  Frame root_;
  std::vector<Frame*> scopes_;
  Budget budget_;
  int macro_depth_ = 0;
  int depth_ = 0;
};

}  // namespace

Result<std::string> render(const Program& program, const Context& context) {
  try {
    return Renderer(context).run(program.body);
  } catch (const RenderError& e) {
    return e.status;
  }
}

}  // namespace mlaspec::tokenizer::jinja
