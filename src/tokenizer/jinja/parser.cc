#include "tokenizer/jinja/parser.h"

#include <cerrno>
#include <cstdlib>
#include <initializer_list>
#include <map>
#include <set>

#include "tokenizer/jinja/builtins.h"
#include "tokenizer/jinja/lexer.h"

namespace mlaspec::tokenizer::jinja {
namespace {

// Thrown inside the parser only; parse() turns it back into a Status.
struct ParseError {
  Status status;
};

using TT = Token::Type;

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : t_(std::move(tokens)) {}

  Program run() {
    Program program;
    std::string ended_by;
    program.body = parse_body({}, &ended_by);
    for (const auto& call : called_) {
      if (!is_known_global(call.first) && macros_.count(call.first) == 0) {
        unsupported_at(call.second, "function '" + call.first + "' is not supported");
      }
    }
    return program;
  }

 private:
  // ---- tokens ----
  const Token& peek(size_t k = 0) const { return t_[std::min(i_ + k, t_.size() - 1)]; }
  const Token& next() {
    const Token& tok = t_[i_];
    if (i_ + 1 < t_.size()) ++i_;
    return tok;
  }
  bool at_op(const char* op, size_t k = 0) const {
    return peek(k).type == TT::kOp && peek(k).text == op;
  }
  bool at_name(const char* name, size_t k = 0) const {
    return peek(k).type == TT::kName && peek(k).text == name;
  }
  static std::string describe(const Token& tok) {
    switch (tok.type) {
      case TT::kText:
        return "template text";
      case TT::kVarBegin:
        return "'{{'";
      case TT::kVarEnd:
        return "'}}'";
      case TT::kBlockBegin:
        return "'{%'";
      case TT::kBlockEnd:
        return "'%}'";
      case TT::kEof:
        return "end of template";
      case TT::kString:
        return "string literal";
      default:
        return "'" + tok.text + "'";
    }
  }
  [[noreturn]] void fail(const Pos& pos, const std::string& what) {
    throw ParseError{invalid_argument("chat template " + where(pos) + ": " + what)};
  }
  [[noreturn]] void unsupported_at(const Pos& pos, const std::string& what) {
    throw ParseError{unsupported("chat template " + where(pos) + ": " + what)};
  }
  void expect_op(const char* op) {
    if (!at_op(op)) fail(peek().pos, std::string("expected '") + op + "', got " + describe(peek()));
    next();
  }
  std::string expect_name(const char* what) {
    if (peek().type != TT::kName) {
      fail(peek().pos, std::string("expected ") + what + ", got " + describe(peek()));
    }
    return next().text;
  }
  void expect_block_end() {
    if (peek().type != TT::kBlockEnd) fail(peek().pos, "expected '%}', got " + describe(peek()));
    next();
  }

  // Bounds the recursion of nested expressions and statements.
  struct Nest {
    Parser* p;
    Nest(Parser* parser, const Pos& pos) : p(parser) {
      if (++p->depth_ > kMaxNesting) {
        p->fail(pos, "nesting deeper than " + std::to_string(kMaxNesting) + " levels");
      }
    }
    ~Nest() { --p->depth_; }
  };

  // ---- statements ----
  // Statements until a block tag whose keyword is in `ends` (consumed up to the keyword).
  Body parse_body(std::initializer_list<const char*> ends, std::string* ended_by) {
    Body body;
    while (true) {
      const Token& tok = peek();
      if (tok.type == TT::kEof) {
        if (ends.size() == 0) return body;
        std::string want;
        for (const char* e : ends) want += std::string(want.empty() ? "" : " or ") + "'" + e + "'";
        fail(tok.pos, "unexpected end of template, expected " + want);
      }
      if (tok.type == TT::kText) {
        auto s = make(Stmt::Kind::kText, tok.pos);
        s->text = next().text;
        body.push_back(std::move(s));
        continue;
      }
      if (tok.type == TT::kVarBegin) {
        next();
        auto s = make(Stmt::Kind::kOutput, tok.pos);
        s->expr = parse_tuple(true);
        if (peek().type != TT::kVarEnd) fail(peek().pos, "expected '}}', got " + describe(peek()));
        next();
        body.push_back(std::move(s));
        continue;
      }
      if (tok.type != TT::kBlockBegin) fail(tok.pos, "unexpected " + describe(tok));
      const Token& kw = peek(1);
      if (kw.type != TT::kName) fail(kw.pos, "expected a tag name, got " + describe(kw));
      for (const char* e : ends) {
        if (kw.text == e) {
          next();
          *ended_by = next().text;
          return body;
        }
      }
      body.push_back(parse_statement());
    }
  }

  StmtPtr make(Stmt::Kind kind, const Pos& pos) {
    auto s = std::make_unique<Stmt>();
    s->kind = kind;
    s->pos = pos;
    return s;
  }

  StmtPtr parse_statement() {
    next();  // {%
    const Token kw = next();
    Nest nest(this, kw.pos);
    const std::string& k = kw.text;
    if (k == "if") return parse_if(kw.pos);
    if (k == "for") return parse_for(kw.pos);
    if (k == "set") return parse_set(kw.pos);
    if (k == "macro") return parse_macro(kw.pos);
    if (k == "break" || k == "continue") {
      if (loops_ == 0) fail(kw.pos, "'" + k + "' outside a for loop");
      expect_block_end();
      return make(k == "break" ? Stmt::Kind::kBreak : Stmt::Kind::kContinue, kw.pos);
    }
    if (k == "generation") {
      // Hugging Face's AssistantTracker tag: renders its body in place.
      expect_block_end();
      auto s = make(Stmt::Kind::kScope, kw.pos);
      std::string ended;
      s->bodies.push_back(parse_body({"endgeneration"}, &ended));
      expect_block_end();
      return s;
    }
    static const std::set<std::string> kClosers = {"elif",   "else",     "endif",        "endfor",
                                                   "endset", "endmacro", "endgeneration"};
    if (kClosers.count(k)) fail(kw.pos, "unexpected '" + k + "'");
    unsupported_at(kw.pos, "tag '" + k + "' is not supported");
  }

  StmtPtr parse_if(const Pos& pos) {
    auto s = make(Stmt::Kind::kIf, pos);
    s->conds.push_back(parse_tuple(true));
    expect_block_end();
    while (true) {
      std::string ended;
      s->bodies.push_back(parse_body({"elif", "else", "endif"}, &ended));
      if (ended == "elif") {
        s->conds.push_back(parse_tuple(true));
        expect_block_end();
      } else if (ended == "else") {
        expect_block_end();
        s->bodies.push_back(parse_body({"endif"}, &ended));
        expect_block_end();
        return s;
      } else {
        expect_block_end();
        return s;
      }
    }
  }

  std::vector<std::string> parse_targets() {
    std::vector<std::string> names;
    const bool paren = at_op("(");
    if (paren) next();
    names.push_back(expect_name("a variable name"));
    while (at_op(",")) {
      next();
      names.push_back(expect_name("a variable name"));
    }
    if (paren) expect_op(")");
    return names;
  }

  StmtPtr parse_for(const Pos& pos) {
    auto s = make(Stmt::Kind::kFor, pos);
    s->targets = parse_targets();
    if (!at_name("in")) fail(peek().pos, "expected 'in', got " + describe(peek()));
    next();
    s->expr = parse_tuple(false);
    if (at_name("if")) {
      next();
      s->cond = parse_expression(true);
    }
    if (at_name("recursive")) unsupported_at(peek().pos, "recursive for loops are not supported");
    expect_block_end();
    ++loops_;
    std::string ended;
    s->bodies.push_back(parse_body({"else", "endfor"}, &ended));
    --loops_;
    if (ended == "else") {
      expect_block_end();
      s->bodies.push_back(parse_body({"endfor"}, &ended));
    }
    expect_block_end();
    return s;
  }

  StmtPtr parse_set(const Pos& pos) {
    auto s = make(Stmt::Kind::kSet, pos);
    s->targets.push_back(expect_name("a variable name"));
    if (at_op(".")) {
      next();
      s->attr = expect_name("an attribute name");
    } else {
      while (at_op(",")) {
        next();
        s->targets.push_back(expect_name("a variable name"));
      }
    }
    if (!at_op("=")) {
      if (s->targets.size() != 1 || !s->attr.empty()) fail(peek().pos, "expected '='");
      if (at_op("|")) unsupported_at(peek().pos, "filtered set blocks are not supported");
      expect_block_end();
      s->kind = Stmt::Kind::kSetBlock;
      std::string ended;
      s->bodies.push_back(parse_body({"endset"}, &ended));
      expect_block_end();
      return s;
    }
    next();
    s->expr = parse_tuple(true);
    expect_block_end();
    return s;
  }

  StmtPtr parse_macro(const Pos& pos) {
    auto s = make(Stmt::Kind::kMacro, pos);
    s->text = expect_name("a macro name");
    macros_.insert(s->text);
    expect_op("(");
    while (!at_op(")")) {
      if (!s->targets.empty()) expect_op(",");
      if (at_op(")")) break;
      s->targets.push_back(expect_name("a parameter name"));
      if (at_op("=")) {
        next();
        s->defaults.push_back(parse_expression(true));
      } else {
        if (!s->defaults.empty() && s->defaults.back()) {
          fail(peek().pos, "a parameter without a default follows one with a default");
        }
        s->defaults.push_back(nullptr);
      }
    }
    next();
    expect_block_end();
    const int saved_loops = loops_;
    loops_ = 0;
    std::string ended;
    s->bodies.push_back(parse_body({"endmacro"}, &ended));
    loops_ = saved_loops;
    if (peek().type == TT::kName && peek().text == s->text) next();
    expect_block_end();
    return s;
  }

  // ---- expressions ----
  ExprPtr node(Expr::Kind kind, const Pos& pos) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->pos = pos;
    return e;
  }

  // Comma-separated expressions; more than one (or a trailing comma) makes a tuple.
  ExprPtr parse_tuple(bool with_condexpr) {
    const Pos pos = peek().pos;
    ExprPtr first = parse_expression(with_condexpr);
    if (!at_op(",")) return first;
    auto t = node(Expr::Kind::kTuple, pos);
    t->args.push_back(std::move(first));
    while (at_op(",")) {
      next();
      if (peek().type == TT::kBlockEnd || peek().type == TT::kVarEnd || at_op(")") ||
          at_name("if")) {
        break;
      }
      t->args.push_back(parse_expression(with_condexpr));
    }
    return t;
  }

  ExprPtr parse_expression(bool with_condexpr) {
    Nest nest(this, peek().pos);
    ExprPtr e = parse_or();
    if (!with_condexpr) return e;
    while (at_name("if")) {
      auto c = node(Expr::Kind::kCondition, next().pos);
      c->args.push_back(std::move(e));
      c->args.push_back(parse_or());
      if (at_name("else")) {
        next();
        c->args.push_back(parse_expression(true));
      } else {
        c->args.push_back(nullptr);
      }
      e = std::move(c);
    }
    return e;
  }

  ExprPtr binary(const std::string& op, ExprPtr left, ExprPtr right, const Pos& pos) {
    auto b = node(Expr::Kind::kBinary, pos);
    b->name = op;
    b->args.push_back(std::move(left));
    b->args.push_back(std::move(right));
    return b;
  }

  // One level of left-associative binary operators (names such as `or` or symbols such as `+`)
  // over the next tighter level.
  template <typename Operand>
  ExprPtr binary_level(std::initializer_list<const char*> ops, Operand operand) {
    ExprPtr left = operand();
    while (true) {
      const char* op = nullptr;
      for (const char* candidate : ops) {
        if (at_op(candidate) || at_name(candidate)) op = candidate;
      }
      if (!op) return left;
      const Pos pos = next().pos;
      left = binary(op, std::move(left), operand(), pos);
    }
  }

  ExprPtr parse_or() {
    return binary_level({"or"}, [this] { return parse_and(); });
  }
  ExprPtr parse_and() {
    return binary_level({"and"}, [this] { return parse_not(); });
  }
  ExprPtr parse_not() {
    if (at_name("not")) {
      Nest nest(this, peek().pos);
      auto u = node(Expr::Kind::kUnary, next().pos);
      u->name = "not";
      u->args.push_back(parse_not());
      return u;
    }
    return parse_compare();
  }
  ExprPtr parse_compare() {
    const Pos pos = peek().pos;
    ExprPtr first = parse_math1();
    ExprPtr cmp;
    while (true) {
      std::string op;
      if (peek().type == TT::kOp &&
          (peek().text == "==" || peek().text == "!=" || peek().text == "<" ||
           peek().text == "<=" || peek().text == ">" || peek().text == ">=")) {
        op = next().text;
      } else if (at_name("in")) {
        next();
        op = "in";
      } else if (at_name("not") && at_name("in", 1)) {
        next();
        next();
        op = "not in";
      } else {
        break;
      }
      if (!cmp) {
        cmp = node(Expr::Kind::kCompare, pos);
        cmp->args.push_back(std::move(first));
      }
      cmp->ops.push_back(op);
      cmp->args.push_back(parse_math1());
    }
    return cmp ? std::move(cmp) : std::move(first);
  }
  ExprPtr parse_math1() {
    return binary_level({"+", "-"}, [this] { return parse_concat(); });
  }
  ExprPtr parse_concat() {
    return binary_level({"~"}, [this] { return parse_math2(); });
  }
  ExprPtr parse_math2() {
    return binary_level({"*", "/", "//", "%"}, [this] { return parse_pow(); });
  }
  ExprPtr parse_pow() {
    return binary_level({"**"}, [this] { return parse_unary(true); });
  }
  ExprPtr parse_unary(bool with_filter) {
    Nest nest(this, peek().pos);
    ExprPtr e;
    if (at_op("-") || at_op("+")) {
      const Token& op = next();
      e = node(Expr::Kind::kUnary, op.pos);
      e->name = op.text;
      e->args.push_back(parse_unary(false));
    } else {
      e = parse_primary();
    }
    e = parse_postfix(std::move(e));
    if (with_filter) e = parse_filter_expr(std::move(e));
    return e;
  }

  ExprPtr literal(Value v, const Pos& pos) {
    auto e = node(Expr::Kind::kLiteral, pos);
    e->value = std::move(v);
    return e;
  }

  ExprPtr parse_primary() {
    const Token tok = next();
    switch (tok.type) {
      case TT::kName:
        if (tok.text == "true" || tok.text == "True") return literal(Value::boolean(true), tok.pos);
        if (tok.text == "false" || tok.text == "False") {
          return literal(Value::boolean(false), tok.pos);
        }
        if (tok.text == "none" || tok.text == "None") return literal(Value::none(), tok.pos);
        {
          auto e = node(Expr::Kind::kName, tok.pos);
          e->name = tok.text;
          return e;
        }
      case TT::kString: {
        std::string s = tok.text;
        while (peek().type == TT::kString) s += next().text;  // adjacent literals join
        return literal(Value::string(std::move(s)), tok.pos);
      }
      case TT::kInt: {
        errno = 0;
        const long long v = std::strtoll(tok.text.c_str(), nullptr, 10);
        if (errno == ERANGE) fail(tok.pos, "integer literal " + tok.text + " does not fit 64 bits");
        return literal(Value::integer(v), tok.pos);
      }
      case TT::kFloat:
        return literal(Value::real(std::strtod(tok.text.c_str(), nullptr)), tok.pos);
      case TT::kOp:
        if (tok.text == "(") {
          if (at_op(")")) {
            next();
            auto t = node(Expr::Kind::kTuple, tok.pos);
            return t;
          }
          ExprPtr e = parse_tuple(true);
          expect_op(")");
          return e;
        }
        if (tok.text == "[") {
          auto l = node(Expr::Kind::kList, tok.pos);
          while (!at_op("]")) {
            if (!l->args.empty()) expect_op(",");
            if (at_op("]")) break;
            l->args.push_back(parse_expression(true));
          }
          next();
          return l;
        }
        if (tok.text == "{") {
          auto d = node(Expr::Kind::kDict, tok.pos);
          while (!at_op("}")) {
            if (!d->args.empty()) expect_op(",");
            if (at_op("}")) break;
            d->args.push_back(parse_expression(true));
            expect_op(":");
            d->args.push_back(parse_expression(true));
          }
          next();
          return d;
        }
        break;
      default:
        break;
    }
    fail(tok.pos, "unexpected " + describe(tok));
  }

  ExprPtr parse_postfix(ExprPtr e) {
    while (true) {
      if (at_op(".")) {
        const Pos pos = next().pos;
        const Token& tok = next();
        if (tok.type == TT::kName) {
          auto a = node(Expr::Kind::kAttr, pos);
          a->name = tok.text;
          a->args.push_back(std::move(e));
          e = std::move(a);
        } else if (tok.type == TT::kInt) {
          auto it = node(Expr::Kind::kItem, pos);
          it->args.push_back(std::move(e));
          it->args.push_back(
              literal(Value::integer(std::strtoll(tok.text.c_str(), nullptr, 10)), tok.pos));
          e = std::move(it);
        } else {
          fail(tok.pos, "expected an attribute name after '.', got " + describe(tok));
        }
      } else if (at_op("[")) {
        e = parse_subscript(std::move(e));
      } else if (at_op("(")) {
        e = parse_call(std::move(e));
      } else {
        return e;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr target) {
    const Pos pos = next().pos;  // [
    ExprPtr parts[3];
    int colons = 0;
    while (!at_op("]")) {
      if (at_op(":")) {
        next();
        if (++colons > 2) fail(pos, "a slice takes at most start:stop:step");
        continue;
      }
      if (parts[colons]) fail(peek().pos, "expected ':' or ']', got " + describe(peek()));
      parts[colons] = parse_expression(true);
      if (colons == 0 && at_op(","))
        unsupported_at(peek().pos, "tuple subscripts are not supported");
    }
    next();
    if (colons == 0) {
      if (!parts[0]) fail(pos, "empty subscript");
      auto it = node(Expr::Kind::kItem, pos);
      it->args.push_back(std::move(target));
      it->args.push_back(std::move(parts[0]));
      return it;
    }
    auto s = node(Expr::Kind::kSlice, pos);
    s->args.push_back(std::move(target));
    for (ExprPtr& p : parts) s->args.push_back(std::move(p));
    return s;
  }

  // (args, name=value); into e->args after the callee and e->kwargs.
  void parse_args(Expr* e) {
    expect_op("(");
    bool first = true;
    while (!at_op(")")) {
      if (!first) expect_op(",");
      first = false;
      if (at_op(")")) break;
      if (at_op("*") || at_op("**"))
        unsupported_at(peek().pos, "*args and **kwargs are not supported");
      if (peek().type == TT::kName && at_op("=", 1)) {
        std::string key = next().text;
        next();
        e->kwargs.emplace_back(std::move(key), parse_expression(true));
      } else {
        if (!e->kwargs.empty())
          fail(peek().pos, "a positional argument follows a keyword argument");
        e->args.push_back(parse_expression(true));
      }
    }
    next();
  }

  ExprPtr parse_call(ExprPtr callee) {
    auto c = node(Expr::Kind::kCall, peek().pos);
    if (callee->kind == Expr::Kind::kName) {
      called_.emplace(callee->name, callee->pos);
    } else if (callee->kind == Expr::Kind::kAttr) {
      if (!is_known_method(callee->name)) {
        unsupported_at(callee->pos, "method '" + callee->name + "' is not supported");
      }
    } else {
      unsupported_at(c->pos, "calling the result of an expression is not supported");
    }
    c->args.push_back(std::move(callee));
    parse_args(c.get());
    return c;
  }

  ExprPtr parse_filter_expr(ExprPtr e) {
    while (true) {
      if (at_op("|")) {
        next();
        const Token tok = next();
        if (tok.type != TT::kName) fail(tok.pos, "expected a filter name, got " + describe(tok));
        if (!is_known_filter(tok.text)) {
          unsupported_at(tok.pos, "filter '" + tok.text + "' is not supported");
        }
        auto f = node(Expr::Kind::kFilter, tok.pos);
        f->name = tok.text;
        f->args.push_back(std::move(e));
        if (at_op("(")) parse_args(f.get());
        e = std::move(f);
      } else if (at_name("is")) {
        next();
        auto t = node(Expr::Kind::kTest, peek().pos);
        if (at_name("not")) {
          next();
          t->negate = true;
        }
        const Token tok = next();
        if (tok.type != TT::kName) fail(tok.pos, "expected a test name, got " + describe(tok));
        if (!is_known_test(tok.text)) {
          unsupported_at(tok.pos, "test '" + tok.text + "' is not supported");
        }
        t->name = tok.text;
        t->args.push_back(std::move(e));
        if (at_op("(")) {
          parse_args(t.get());
        } else if ((peek().type == TT::kName || peek().type == TT::kString ||
                    peek().type == TT::kInt || peek().type == TT::kFloat || at_op("[") ||
                    at_op("{")) &&
                   !at_name("else") && !at_name("or") && !at_name("and")) {
          // `x is divisibleby 3`: one argument without parentheses.
          t->args.push_back(parse_postfix(parse_primary()));
        }
        e = std::move(t);
      } else if (at_op("(")) {
        e = parse_call(std::move(e));
      } else {
        return e;
      }
    }
  }

  std::vector<Token> t_;
  size_t i_ = 0;
  int depth_ = 0;
  int loops_ = 0;
  std::set<std::string> macros_;
  std::map<std::string, Pos> called_;
};

}  // namespace

Result<Program> parse(const std::string& source) {
  Result<std::vector<Token>> tokens = lex(source);
  if (!tokens.ok()) return tokens.status();
  try {
    return Parser(std::move(*tokens)).run();
  } catch (const ParseError& e) {
    return e.status;
  }
}

}  // namespace mlaspec::tokenizer::jinja
