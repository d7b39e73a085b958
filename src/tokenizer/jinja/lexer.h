// Splits template source into text and tag tokens with jinja2's whitespace rules as Hugging Face
// configures them (trim_blocks and lstrip_blocks on, keep_trailing_newline off): `{%-`/`-%}` strip
// all whitespace on that side, `{%+`/`+%}` keep it, a block or comment tag's end eats one newline,
// and spaces before a block or comment tag alone on its line are dropped. Comments vanish here.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "mlaspec/core/status.h"
#include "tokenizer/jinja/ast.h"

namespace mlaspec::tokenizer::jinja {

struct Token {
  enum class Type {
    kText,
    kVarBegin,    // {{
    kVarEnd,      // }}
    kBlockBegin,  // {%
    kBlockEnd,    // %}
    kName,
    kString,  // text holds the unescaped value
    kInt,
    kFloat,
    kOp,
    kEof
  };
  Type type;
  std::string text;
  Pos pos;
};

// Limits on what the lexer accepts (fuzz safety and clear errors).
inline constexpr size_t kMaxTemplateBytes = size_t{1} << 20;

// Newlines normalised to "\n" and one trailing newline dropped, as jinja2 does before lexing.
std::string normalize_source(std::string_view source);
Result<std::vector<Token>> lex(const std::string& source);

// Python's str.isspace() for one code point.
bool is_py_space(char32_t cp);

// "line 3 col 7" of a byte offset.
Pos pos_of(const std::string& source, size_t offset);
std::string where(const Pos& pos);

}  // namespace mlaspec::tokenizer::jinja
