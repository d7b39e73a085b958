// Renders a parsed template against a context of variables, with jinja2's semantics under Hugging
// Face's environment (sandboxed, loop controls, tojson without HTML escaping, raise_exception).
// Every render is bounded: steps, output and string sizes, list lengths, value nesting and macro
// recursion each have a limit, and passing one is a resource_exhausted error naming it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "mlaspec/core/status.h"
#include "tokenizer/jinja/ast.h"
#include "tokenizer/jinja/value.h"

namespace mlaspec::tokenizer::jinja {

inline constexpr int64_t kMaxSteps = 2'000'000;              // expression and statement steps
inline constexpr size_t kMaxStringBytes = size_t{16} << 20;  // output and any one string
inline constexpr size_t kMaxListItems = size_t{1} << 18;     // any one list
inline constexpr int kMaxMacroDepth = 64;                    // nested macro calls
inline constexpr int kMaxNestingValues = 256;                // lists and dicts in each other
inline constexpr int kMaxEvalDepth = 256;                    // evaluator recursion (the stack)

using Context = std::map<std::string, Value>;

Result<std::string> render(const Program& program, const Context& context);

// ---- shared by the evaluator and the builtins ----

// Thrown while rendering; render() returns its status.
struct RenderError {
  Status status;
};
[[noreturn]] void fail_at(const Pos& pos, const std::string& what);
[[noreturn]] void exhausted_at(const Pos& pos, const std::string& what);

// Steps left in this render; builtins charge for work proportional to their input.
struct Budget {
  int64_t steps = kMaxSteps;
  void charge(const Pos& pos, int64_t n) {
    steps -= n;
    if (steps < 0) {
      exhausted_at(pos, "the render took more than " + std::to_string(kMaxSteps) +
                            " steps (a loop too long for a chat prompt?)");
    }
  }
};

// Charges the render in progress on this thread (builtins reach it without a parameter);
// nothing outside a render.
void charge(const Pos& pos, uint64_t n);
// to_output(v), charged by the value's weight and checked against the string limit.
std::string output_of(const Pos& pos, const Value& v);

// Size checks, failing with the value and the limit.
void check_string(const Pos& pos, size_t bytes);
void check_list(const Pos& pos, size_t items);
Value checked_list(const Pos& pos, List items, bool tuple = false);

// What a for loop or a filter iterates over: list items, dict keys, string characters;
// undefined is empty.
List iterate(const Pos& pos, const Value& v);

using Kwargs = std::vector<std::pair<std::string, Value>>;
Value apply_filter(Budget& budget, const Pos& pos, const std::string& name, const Value& target,
                   const std::vector<Value>& args, const Kwargs& kwargs);
bool apply_test(const Pos& pos, const std::string& name, const Value& target,
                const std::vector<Value>& args);
Value call_method(Budget& budget, const Pos& pos, const Value& target, const std::string& name,
                  const std::vector<Value>& args, const Kwargs& kwargs);
// The '+', '-', ... operators and comparisons, as Python computes them.
Value binary_op(Budget& budget, const Pos& pos, const std::string& op, const Value& a,
                const Value& b);
bool compare_op(const Pos& pos, const std::string& op, const Value& a, const Value& b);

}  // namespace mlaspec::tokenizer::jinja
