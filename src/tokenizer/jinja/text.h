// Python str semantics on UTF-8 text, for the filters and methods: code points, str.isspace,
// strip, split, replace, and ASCII-only case mapping.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tokenizer/jinja/ast.h"
#include "tokenizer/jinja/eval.h"

namespace mlaspec::tokenizer::jinja {

// Whether one code point (as its UTF-8 bytes) is Python whitespace.
bool is_space_cp(const std::string& ch);
// str.strip / lstrip / rstrip: whitespace, or the characters of `chars` (a string value).
std::string strip(const std::string& s, const Value* chars, bool left, bool right);
// mode 0 lower, 1 upper, 2 capitalize, 3 title. Non-ASCII text is refused: this layer carries
// no Unicode case tables, and mapping only ASCII would differ from Python in silence.
std::string ascii_case(const Pos& pos, const std::string& what, const std::string& s, int mode);
// str.split(sep, maxsplit); sep null or None splits on whitespace runs.
std::vector<std::string> split(const Pos& pos, const std::string& s, const Value* sep,
                               int64_t maxsplit);
// str.replace(old, repl, count); count < 0 replaces all.
std::string replace(Budget& budget, const Pos& pos, const std::string& s, const std::string& old,
                    const std::string& repl, int64_t count);

}  // namespace mlaspec::tokenizer::jinja
