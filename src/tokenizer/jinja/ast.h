// The syntax tree of a parsed template: statements (text, {{ }} output, if, for, set, macro,
// break/continue) holding expressions. One node struct per tree level with a kind tag keeps the
// evaluator a pair of switches.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/jinja/value.h"

namespace mlaspec::tokenizer::jinja {

struct Pos {
  int line = 1;
  int col = 1;
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind {
    kLiteral,   // value
    kName,      // name
    kList,      // args = elements
    kTuple,     // args = elements
    kDict,      // args = key, value, key, value, ...
    kAttr,      // args[0].name
    kItem,      // args[0][args[1]]
    kSlice,     // args[0][args[1]:args[2]:args[3]] (null = omitted)
    kCall,      // args[0](args[1..], kwargs)
    kFilter,    // args[0] | name(args[1..], kwargs)
    kTest,      // args[0] is [not] name(args[1..]); negate
    kUnary,     // name ("-", "+", "not") args[0]
    kBinary,    // args[0] name args[1]: + - * / // % ** ~ and or
    kCompare,   // args[0] ops[0] args[1] ops[1] args[2] ...: == != < <= > >= in "not in", chained
    kCondition  // args[0] if args[1] else args[2] (args[2] null: undefined)
  };
  Kind kind = Kind::kLiteral;
  Pos pos;
  Value value;
  std::string name;
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  std::vector<std::string> ops;
  bool negate = false;
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct Stmt {
  enum class Kind {
    kText,      // text
    kOutput,    // {{ expr }}
    kIf,        // conds[i] -> bodies[i]; bodies[conds.size()] if present is the else
    kFor,       // for targets in expr [if cond]: bodies[0], else bodies[1]
    kSet,       // set targets = expr; or set ns.attr = expr (attr non-empty, targets[0] = ns)
    kSetBlock,  // set targets[0] %} bodies[0] {% endset
    kMacro,     // macro name(targets with defaults) bodies[0]
    kBreak,
    kContinue,
    kScope  // a body rendered in place ({% generation %})
  };
  Kind kind = Kind::kText;
  Pos pos;
  std::string text;
  ExprPtr expr;
  ExprPtr cond;
  std::vector<ExprPtr> conds;
  std::vector<Body> bodies;
  std::vector<std::string> targets;
  std::string attr;
  std::vector<ExprPtr> defaults;  // macro parameter defaults, aligned with targets (null: none)
};

struct Program {
  Body body;
};

}  // namespace mlaspec::tokenizer::jinja
