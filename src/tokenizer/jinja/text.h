// Python str semantics on UTF-8 text, for the filters and methods: code points, str.isspace,
// strip, split, replace, and ASCII-only case mapping.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/jinja/ast.h"
#include "tokenizer/jinja/eval.h"

namespace mlaspec::tokenizer::jinja {

// The code points of a UTF-8 string (an invalid byte counts as one), by offset: Python's view
// of a str for indexing, slicing and iterating, at 4 bytes per character.
class Chars {
 public:
  explicit Chars(const std::string& s);
  size_t size() const { return starts_.size() - 1; }
  std::string_view operator[](size_t i) const {
    return std::string_view(s_).substr(starts_[i], starts_[i + 1] - starts_[i]);
  }

 private:
  const std::string& s_;
  std::vector<uint32_t> starts_;
};
// len(str): the number of code points.
size_t count_chars(const std::string& s);

// Whether one code point (as its UTF-8 bytes) is Python whitespace.
bool is_space_cp(std::string_view ch);
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
