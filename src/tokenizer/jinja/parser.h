// Tokens to a syntax tree. Errors name the construct and its line and column: a syntax error is
// invalid_argument, a construct jinja2 has but this renderer does not (a tag, a filter, a test,
// a method) is unsupported.
#pragma once

#include <string>

#include "mlaspec/core/status.h"
#include "tokenizer/jinja/ast.h"

namespace mlaspec::tokenizer::jinja {

// Expressions and statements nest at most this deep.
inline constexpr int kMaxNesting = 128;

// `source` as normalize_source() returns it.
Result<Program> parse(const std::string& source);

}  // namespace mlaspec::tokenizer::jinja
