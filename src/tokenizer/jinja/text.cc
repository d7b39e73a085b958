// Python str semantics on UTF-8 text: code points, whitespace, strip, split, replace, case.
#include "tokenizer/jinja/text.h"

#include <cctype>
#include <set>

#include "tokenizer/jinja/eval.h"
#include "tokenizer/jinja/lexer.h"

namespace mlaspec::tokenizer::jinja {

namespace {

// Byte length of the character starting at s[i] (1 for an invalid byte).
size_t char_len(const std::string& s, size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  size_t n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 1;
  if (i + n > s.size()) return 1;
  for (size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 1;
  }
  return n;
}

}  // namespace

Chars::Chars(const std::string& s) : s_(s) {
  starts_.reserve(s.size() / 2 + 2);
  for (size_t i = 0; i < s.size(); i += char_len(s, i)) starts_.push_back(static_cast<uint32_t>(i));
  starts_.push_back(static_cast<uint32_t>(s.size()));
}

size_t count_chars(const std::string& s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size(); i += char_len(s, i)) ++n;
  return n;
}

bool is_space_cp(std::string_view ch) {
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
  const Chars cs(s);
  std::set<std::string, std::less<>> set;
  const bool custom = chars && !chars->is_none();
  if (custom) {
    const Chars strip_chars(chars->as_string());
    for (size_t i = 0; i < strip_chars.size(); ++i) set.emplace(strip_chars[i]);
  }
  auto strip_it = [&](std::string_view c) { return custom ? set.count(c) > 0 : is_space_cp(c); };
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
    if (mode == 2) upper = i == 0;      // capitalize
    if (mode == 3) upper = word_start;  // title
    if (alpha) out[i] = static_cast<char>(upper ? std::toupper(c) : std::tolower(c));
    word_start = !alpha;
  }
  return out;
}

std::vector<std::string> split(const Pos& pos, const std::string& s, const Value* sep,
                               int64_t maxsplit) {
  std::vector<std::string> out;
  if (!sep || sep->is_none()) {
    const Chars cs(s);
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
  if (!sep->is_string())
    fail_at(pos, std::string("split() needs a string separator, not ") + sep->type_name());
  const std::string& d = sep->as_string();
  if (d.empty()) fail_at(pos, "split(): empty separator");
  size_t from = 0;
  while (true) {
    const size_t at = s.find(d, from);
    if (at == std::string::npos ||
        (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit)) {
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
    const Chars cs(s);
    for (size_t i = 0; i < cs.size(); ++i) {
      if (count < 0 || done < count) {
        out += repl;
        ++done;
      }
      out += cs[i];
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

}  // namespace mlaspec::tokenizer::jinja
