#include "tokenizer/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "tokenizer/utf8.h"

namespace mlaspec::tokenizer {
namespace {

constexpr std::string_view kWordClass = "\\p{L}\\p{M}\\p{N}\\p{Pc}";

// Per-thread match state: match data for the whole-match pair and a JIT stack large enough for
// long words (the default 32 KiB can run out on patterns like \s+(?!\S) over megabyte inputs).
struct MatchState {
  pcre2_match_data* data = nullptr;
  pcre2_match_context* context = nullptr;
  pcre2_jit_stack* stack = nullptr;
  MatchState() {
    data = pcre2_match_data_create(1, nullptr);
    context = pcre2_match_context_create(nullptr);
    stack = pcre2_jit_stack_create(64 * 1024, 8 * 1024 * 1024, nullptr);
    pcre2_jit_stack_assign(context, nullptr, stack);
    // Bounds the backtracking of a pathological pattern so a hostile file cannot hang encode.
    pcre2_set_match_limit(context, 20'000'000);
  }
  ~MatchState() {
    pcre2_jit_stack_free(stack);
    pcre2_match_context_free(context);
    pcre2_match_data_free(data);
  }
};

MatchState& match_state() {
  thread_local MatchState state;
  return state;
}

}  // namespace

Result<std::string> translate_oniguruma(std::string_view p) {
  std::string out;
  out.reserve(p.size() + 16);
  bool in_class = false;
  for (size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\') {
      if (i + 1 >= p.size()) return invalid_argument("regex ends with a lone backslash");
      const char e = p[++i];
      switch (e) {
        case 's':
          out += "\\p{White_Space}";
          break;
        case 'S':
          out += "\\P{White_Space}";
          break;
        case 'w':
          out += in_class ? std::string(kWordClass) : "[" + std::string(kWordClass) + "]";
          break;
        case 'W':
          if (in_class) return unsupported("regex: \\W inside a character class is not supported");
          out += "[^" + std::string(kWordClass) + "]";
          break;
        case 'h':
        case 'H':
          return unsupported(std::string("regex: Oniguruma's \\") + e +
                             " (hex digit class) is not supported");
        case 'u': {
          if (i + 4 >= p.size()) return invalid_argument("regex: \\u needs four hex digits");
          out += "\\x{" + std::string(p.substr(i + 1, 4)) + "}";
          i += 4;
          break;
        }
        default:
          out += '\\';
          out += e;
      }
      continue;
    }
    if (in_class) {
      if (c == '[') {
        return unsupported(
            "regex: a nested character class or POSIX bracket ('[' inside [...]) is not "
            "supported");
      }
      if (c == '&' && i + 1 < p.size() && p[i + 1] == '&') {
        return unsupported("regex: class intersection '&&' is not supported");
      }
      if (c == ']') in_class = false;
      out += c;
      continue;
    }
    if (c == '[') {
      in_class = true;
      out += c;
      // A ']' right after '[' or '[^' is a literal in both engines' classes.
      if (i + 1 < p.size() && p[i + 1] == '^') out += p[++i];
      if (i + 1 < p.size() && p[i + 1] == ']') out += p[++i];
      continue;
    }
    out += c;
  }
  if (in_class) return invalid_argument("regex: unterminated character class");
  return out;
}

Result<std::shared_ptr<const Regex>> Regex::compile(std::string_view pattern, Syntax syntax) {
  std::string text(pattern);
  uint32_t flags = PCRE2_UTF | PCRE2_UCP | PCRE2_MULTILINE;
  if (syntax == Syntax::kOniguruma) {
    auto translated = translate_oniguruma(pattern);
    if (!translated.ok()) {
      return translated.status().with_context("pattern \"" + std::string(pattern) + "\"");
    }
    text = std::move(*translated);
  } else {
    flags = PCRE2_UTF | PCRE2_LITERAL;
  }
  if (utf8::first_invalid(text) != std::string_view::npos) {
    return invalid_argument("regex pattern is not valid UTF-8");
  }
  int error = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), flags,
                                   &error, &offset, nullptr);
  if (!code) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(error, msg, sizeof(msg));
    return unsupported("regex \"" + std::string(pattern) + "\" does not compile at offset " +
                       std::to_string(offset) + ": " + reinterpret_cast<const char*>(msg));
  }
  // JIT is an optimisation: a pattern it cannot handle still runs interpreted.
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  std::shared_ptr<Regex> re(new Regex());
  re->pattern_ = std::string(pattern);
  re->code_ = code;
  return std::shared_ptr<const Regex>(std::move(re));
}

Regex::~Regex() {
  pcre2_code_free(static_cast<pcre2_code*>(code_));
}

Status Regex::replace_all(std::string& text, std::string_view content) const {
  std::vector<Span> matches;
  MLASPEC_RETURN_IF_ERROR(find_all(text, matches));
  if (matches.empty()) return Status::Ok();
  std::string out;
  size_t prev = 0;
  for (const Span& m : matches) {
    out.append(text, prev, m.begin - prev);
    out += content;
    prev = m.end;
  }
  out.append(text, prev, std::string::npos);
  text = std::move(out);
  return Status::Ok();
}

Status Regex::find_all(std::string_view text, std::vector<Span>& out) const {
  MatchState& st = match_state();
  auto* code = static_cast<pcre2_code*>(code_);
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t start = 0;
  size_t last_match_end = SIZE_MAX;
  while (start <= text.size()) {
    const int rc =
        pcre2_match(code, subject, text.size(), start, PCRE2_NO_UTF_CHECK, st.data, st.context);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(rc, msg, sizeof(msg));
      return resource_exhausted("regex \"" + pattern_ + "\" failed on a " +
                                std::to_string(text.size()) +
                                "-byte piece: " + reinterpret_cast<const char*>(msg));
    }
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(st.data);
    const size_t s = ov[0], e = ov[1];
    if (s == e && last_match_end == e) {
      // Oniguruma's iterator: no empty match right where the previous one ended; step one char.
      start += start < text.size() ? utf8::char_length(static_cast<unsigned char>(text[start])) : 1;
      continue;
    }
    out.push_back({static_cast<uint32_t>(s), static_cast<uint32_t>(e)});
    start = e;
    last_match_end = e;
  }
  return Status::Ok();
}

}  // namespace mlaspec::tokenizer
