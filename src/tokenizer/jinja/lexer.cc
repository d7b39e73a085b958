#include "tokenizer/jinja/lexer.h"

#include <cstring>

namespace mlaspec::tokenizer::jinja {

bool is_py_space(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x20) || cp == 0x85 || cp == 0xa0 ||
         cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 ||
         cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

namespace {

// The code point starting at s[i] and its byte length (an invalid byte reads as itself, length 1).
char32_t cp_at(std::string_view s, size_t i, size_t* len) {
  const auto b = static_cast<unsigned char>(s[i]);
  size_t n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
  if (n == 0 || i + n > s.size()) {
    *len = 1;
    return 0xFFFD;
  }
  char32_t cp = n == 1 ? b : b & (0x7f >> n);
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
  *len = n;
  return cp;
}

// Length of the whitespace run starting at i.
size_t space_run(std::string_view s, size_t i) {
  size_t j = i;
  while (j < s.size()) {
    size_t len = 0;
    if (!is_py_space(cp_at(s, j, &len))) break;
    j += len;
  }
  return j - i;
}

// s without its trailing whitespace (Python's str.rstrip()).
std::string_view rstrip(std::string_view s) {
  size_t end = s.size();
  while (end > 0) {
    size_t start = end - 1;
    while (start > 0 && end - start < 4 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) {
      --start;
    }
    size_t len = 0;
    const char32_t cp = cp_at(s, start, &len);
    if (start + len != end || !is_py_space(cp)) break;
    end = start;
  }
  return s.substr(0, end);
}

// Tracks line and column while offsets only grow.
class Cursor {
 public:
  explicit Cursor(const std::string& s) : s_(s) {}
  Pos at(size_t offset) {
    if (offset < off_) {  // an error pointing back at an earlier tag
      off_ = 0;
      pos_ = Pos{};
    }
    for (; off_ < offset && off_ < s_.size(); ++off_) {
      if (s_[off_] == '\n') {
        ++pos_.line;
        pos_.col = 1;
      } else if ((static_cast<unsigned char>(s_[off_]) & 0xC0) != 0x80) {
        ++pos_.col;
      }
    }
    return pos_;
  }

 private:
  const std::string& s_;
  size_t off_ = 0;
  Pos pos_;
};

bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Lexer {
 public:
  explicit Lexer(const std::string& src) : s_(src), cursor_(src) {}

  Result<std::vector<Token>> run() {
    size_t pos = 0;
    bool line_starting = true;
    while (pos < s_.size()) {
      const size_t at = s_.find('{', pos);
      size_t tag = std::string::npos;
      for (size_t i = at; i != std::string::npos && i + 1 < s_.size(); i = s_.find('{', i + 1)) {
        const char k = s_[i + 1];
        if (k == '{' || k == '%' || k == '#') {
          tag = i;
          break;
        }
      }
      if (tag == std::string::npos) {
        emit_text(std::string_view(s_).substr(pos), pos);
        break;
      }
      const char kind = s_[tag + 1];
      const char sign = tag + 2 < s_.size() ? s_[tag + 2] : '\0';
      std::string_view text = std::string_view(s_).substr(pos, tag - pos);
      if (sign == '-') {
        text = rstrip(text);
      } else if (sign != '+' && kind != '{') {
        // lstrip_blocks: a block or comment tag preceded on its line by whitespace only.
        const size_t nl = text.rfind('\n');
        const size_t l_pos = nl == std::string_view::npos ? 0 : nl + 1;
        if ((l_pos > 0 || line_starting) && space_run(text, l_pos) == text.size() - l_pos) {
          text = text.substr(0, l_pos);
        }
      }
      emit_text(text, pos);
      size_t body = tag + 2 + ((sign == '-' || sign == '+') ? 1 : 0);
      if (kind == '#') {
        Result<size_t> end = comment_end(tag, body, &line_starting);
        if (!end.ok()) return end.status();
        pos = *end;
        continue;
      }
      if (kind == '%' && is_raw(body)) {
        Result<size_t> end = raw_block(tag, body, &line_starting);
        if (!end.ok()) return end.status();
        pos = *end;
        continue;
      }
      Result<size_t> end = tag_tokens(tag, kind, body, &line_starting);
      if (!end.ok()) return end.status();
      pos = *end;
    }
    tokens_.push_back({Token::Type::kEof, "", cursor_.at(s_.size())});
    return std::move(tokens_);
  }

 private:
  Status error(size_t offset, const std::string& what) {
    return invalid_argument("chat template " + where(cursor_.at(offset)) + ": " + what);
  }

  void emit_text(std::string_view text, size_t offset) {
    if (!text.empty())
      tokens_.push_back({Token::Type::kText, std::string(text), cursor_.at(offset)});
  }

  // After an end tag: "-" strips all following whitespace, "+" nothing, plain eats one newline.
  size_t after_end(size_t end, char sign, bool* line_starting) {
    size_t next = end;
    if (sign == '-') {
      next += space_run(s_, next);
    } else if (sign != '+' && next < s_.size() && s_[next] == '\n') {
      ++next;
    }
    *line_starting = next > 0 && s_[next - 1] == '\n';
    return next;
  }

  Result<size_t> comment_end(size_t tag, size_t body, bool* line_starting) {
    const size_t close = s_.find("#}", body);
    if (close == std::string::npos) return error(tag, "missing end of comment tag");
    const char sign = close > body ? s_[close - 1] : '\0';
    return after_end(close + 2, sign == '-' || sign == '+' ? sign : '\0', line_starting);
  }

  // {% raw %}: the text up to {% endraw %} is output as is.
  bool is_raw(size_t body) {
    const size_t p = body + space_run(s_, body);
    if (s_.compare(p, 3, "raw") != 0) return false;
    const size_t q = p + 3;
    return q < s_.size() && (s_[q] == '%' || s_[q] == '-' || is_py_space(s_[q]));
  }

  Result<size_t> raw_block(size_t tag, size_t body, bool* line_starting) {
    size_t p = body + space_run(s_, body) + 3;
    p += space_run(s_, p);
    bool strip_after = false;
    if (s_.compare(p, 3, "-%}") == 0) {
      strip_after = true;
      ++p;
    }
    if (s_.compare(p, 2, "%}") != 0) return error(tag, "expected '%}' after 'raw'");
    p += 2;
    if (strip_after) p += space_run(s_, p);
    for (size_t q = s_.find("{%", p); q != std::string::npos; q = s_.find("{%", q + 2)) {
      size_t r = q + 2;
      const char sign = r < s_.size() ? s_[r] : '\0';
      if (sign == '-' || sign == '+') ++r;
      r += space_run(s_, r);
      if (s_.compare(r, 6, "endraw") != 0) continue;
      r += 6;
      r += space_run(s_, r);
      char end_sign = '\0';
      if (r < s_.size() && (s_[r] == '-' || s_[r] == '+')) end_sign = s_[r++];
      if (s_.compare(r, 2, "%}") != 0) continue;
      std::string_view text = std::string_view(s_).substr(p, q - p);
      if (sign == '-') text = rstrip(text);
      emit_text(text, p);
      return after_end(r + 2, end_sign, line_starting);
    }
    return error(tag, "missing end of raw directive ({% endraw %})");
  }

  Result<size_t> tag_tokens(size_t tag, char kind, size_t p, bool* line_starting) {
    const bool block = kind == '%';
    tokens_.push_back(
        {block ? Token::Type::kBlockBegin : Token::Type::kVarBegin, "", cursor_.at(tag)});
    int depth = 0;
    while (true) {
      p += space_run(s_, p);
      if (p >= s_.size()) {
        return error(tag, block ? "missing end of block tag '%}'" : "missing end of output '}}'");
      }
      if (depth == 0) {
        const char* close = block ? "%}" : "}}";
        const char sign = s_[p];
        const size_t c = (sign == '-' || (block && sign == '+')) ? p + 1 : p;
        if (s_.compare(c, 2, close) == 0) {
          tokens_.push_back(
              {block ? Token::Type::kBlockEnd : Token::Type::kVarEnd, "", cursor_.at(p)});
          const char end_sign = c > p ? sign : '\0';
          return block ? after_end(c + 2, end_sign, line_starting)
                       : after_end_var(c + 2, end_sign, line_starting);
        }
      }
      const char c = s_[p];
      const size_t start = p;
      if (is_name_start(c)) {
        while (p < s_.size() && (is_name_start(s_[p]) || is_digit(s_[p]))) ++p;
        tokens_.push_back({Token::Type::kName, s_.substr(start, p - start), cursor_.at(start)});
      } else if (is_digit(c)) {
        bool real = false;
        while (p < s_.size() && (is_digit(s_[p]) || s_[p] == '_')) ++p;
        if (p + 1 < s_.size() && s_[p] == '.' && is_digit(s_[p + 1])) {
          real = true;
          ++p;
          while (p < s_.size() && (is_digit(s_[p]) || s_[p] == '_')) ++p;
        }
        if (p < s_.size() && (s_[p] == 'e' || s_[p] == 'E')) {
          size_t q = p + 1;
          if (q < s_.size() && (s_[q] == '+' || s_[q] == '-')) ++q;
          if (q < s_.size() && is_digit(s_[q])) {
            real = true;
            p = q;
            while (p < s_.size() && is_digit(s_[p])) ++p;
          }
        }
        std::string digits;
        for (size_t i = start; i < p; ++i) {
          if (s_[i] != '_') digits += s_[i];
        }
        tokens_.push_back(
            {real ? Token::Type::kFloat : Token::Type::kInt, digits, cursor_.at(start)});
      } else if (c == '\'' || c == '"') {
        Result<size_t> end = string_literal(p);
        if (!end.ok()) return end.status();
        p = *end;
      } else {
        static const char* const kTwo[] = {"//", "**", "==", "!=", "<=", ">="};
        std::string op;
        for (const char* two : kTwo) {
          if (s_.compare(p, 2, two) == 0) op = two;
        }
        if (op.empty()) {
          if (std::strchr("+-/*%~[](){}<>=.:|,", c) == nullptr) {
            return error(p, std::string("unexpected character '") + c + "'");
          }
          op = std::string(1, c);
        }
        if (op == "(" || op == "[" || op == "{") ++depth;
        if ((op == ")" || op == "]" || op == "}") && depth > 0) --depth;
        p += op.size();
        tokens_.push_back({Token::Type::kOp, op, cursor_.at(start)});
      }
    }
  }

  // `}}` has no trim_blocks newline; only "-}}" strips.
  size_t after_end_var(size_t end, char sign, bool* line_starting) {
    size_t next = end;
    if (sign == '-') next += space_run(s_, next);
    *line_starting = next > 0 && s_[next - 1] == '\n';
    return next;
  }

  // A '...' or "..." literal with Python's escapes; returns the offset after it.
  Result<size_t> string_literal(size_t p) {
    const char quote = s_[p];
    const size_t start = p++;
    std::string out;
    while (true) {
      if (p >= s_.size()) return error(start, "unterminated string literal");
      const char c = s_[p];
      if (c == quote) break;
      if (c != '\\') {
        out += c;
        ++p;
        continue;
      }
      if (p + 1 >= s_.size()) return error(start, "unterminated string literal");
      const char e = s_[p + 1];
      p += 2;
      switch (e) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case '0':
        case '1':
        case '2':
        case '3':
        case '4':
        case '5':
        case '6':
        case '7': {
          // Up to three octal digits, as Python reads "\101".
          unsigned v = static_cast<unsigned>(e - '0');
          for (int k = 0; k < 2 && p < s_.size() && s_[p] >= '0' && s_[p] <= '7'; ++k) {
            v = v * 8 + static_cast<unsigned>(s_[p++] - '0');
          }
          append_utf8(out, v);
          break;
        }
        case 'a':
          out += '\a';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'v':
          out += '\v';
          break;
        case '\\':
        case '\'':
        case '"':
          out += e;
          break;
        case '\n':
          break;  // a line continuation
        case 'x':
        case 'u':
        case 'U': {
          const size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          char32_t cp = 0;
          for (size_t k = 0; k < n; ++k) {
            const int h = p + k < s_.size() ? hex_value(s_[p + k]) : -1;
            if (h < 0) return error(p - 2, std::string("bad \\") + e + " escape in string literal");
            cp = cp * 16 + static_cast<char32_t>(h);
          }
          if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
            return error(p - 2, "escape outside Unicode scalar values in string literal");
          }
          append_utf8(out, cp);
          p += n;
          break;
        }
        default:
          out += '\\';
          out += e;
      }
    }
    tokens_.push_back({Token::Type::kString, std::move(out), cursor_.at(start)});
    return p + 1;
  }

  const std::string& s_;
  Cursor cursor_;
  std::vector<Token> tokens_;
};

}  // namespace

std::string normalize_source(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out += source[i];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

Result<std::vector<Token>> lex(const std::string& source) {
  if (source.size() > kMaxTemplateBytes) {
    return resource_exhausted("chat template of " + std::to_string(source.size()) +
                              " bytes exceeds the limit of " + std::to_string(kMaxTemplateBytes));
  }
  return Lexer(source).run();
}

Pos pos_of(const std::string& source, size_t offset) {
  return Cursor(source).at(offset);
}

std::string where(const Pos& pos) {
  return "line " + std::to_string(pos.line) + " col " + std::to_string(pos.col);
}

}  // namespace mlaspec::tokenizer::jinja
