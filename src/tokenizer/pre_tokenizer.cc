#include "tokenizer/pre_tokenizer.h"

#include <unicode/uchar.h>

#include <algorithm>

#include "tokenizer/regex.h"
#include "tokenizer/utf8.h"

namespace mlaspec::tokenizer {
namespace {

enum class Behavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

struct Range {
  uint32_t begin, end;
  bool flag;  // is_match before the behaviour fold, remove after it
};

// tokenizers' NormalizedString::split: `m` covers the piece in order (is_match flags); leaves
// the sub-ranges, with flag = remove.
void fold_behavior(std::vector<Range>& m, Behavior behavior, std::vector<Range>& acc) {
  // Isolated keeps every range and Removed drops the matches: no reshaping needed.
  if (behavior == Behavior::kIsolated) {
    for (Range& r : m) r.flag = false;
    return;
  }
  if (behavior == Behavior::kRemoved) return;
  acc.clear();
  bool previous = false;
  if (behavior == Behavior::kMergedWithNext) {
    for (auto it = m.rbegin(); it != m.rend(); ++it) {
      if (it->flag && !previous && !acc.empty()) {
        acc.back().begin = it->begin;
      } else {
        acc.push_back({it->begin, it->end, false});
      }
      previous = it->flag;
    }
    std::reverse(acc.begin(), acc.end());
  } else {
    for (const Range& r : m) {
      const bool merge =
          behavior == Behavior::kContiguous ? r.flag == previous : r.flag && !previous;
      if (merge && !acc.empty()) {
        acc.back().end = r.end;
      } else {
        acc.push_back({r.begin, r.end, false});
      }
      previous = r.flag;
    }
  }
  m.swap(acc);
}

// The (range, is_match) cover of a piece of length `len` from its sorted matches, as tokenizers'
// Pattern::find_matches builds it.
void cover(const std::vector<Span>& matches, uint32_t len, bool invert, std::vector<Range>& out) {
  out.clear();
  uint32_t prev = 0;
  for (const Span& s : matches) {
    if (prev != s.begin) out.push_back({prev, s.begin, invert});
    out.push_back({s.begin, s.end, !invert});
    prev = s.end;
  }
  if (prev != len) out.push_back({prev, len, invert});
}

void emit(const Piece& parent, const std::vector<Range>& ranges, std::vector<Piece>& out) {
  for (const Range& r : ranges) {
    if (r.flag || r.begin == r.end) continue;
    out.push_back({parent.begin + r.begin, parent.begin + r.end, parent.at_origin && r.begin == 0});
  }
}

// The matches of a per-character predicate: every matching character on its own.
template <typename Pred>
void char_matches(std::string_view text, Pred pred, std::vector<Span>& out) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = utf8::char_length(static_cast<unsigned char>(text[i]));
    if (pred(utf8::decode_at(text, i))) {
      out.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(i + n)});
    }
    i += n;
  }
}

// Per-thread scratch vectors: splitting runs once per piece and pre-tokenizer, so reusing them
// saves allocations per piece.
struct Scratch {
  std::vector<Piece> out;
  std::vector<Span> matches;
  std::vector<Range> ranges, acc;
};

template <typename Find>
Status split_pieces(std::vector<Piece>& pieces, const std::string& buf, Behavior behavior,
                    bool invert, Find find) {
  thread_local Scratch scratch;
  std::vector<Piece>& out = scratch.out;
  out.clear();
  for (const Piece& p : pieces) {
    const std::string_view text(buf.data() + p.begin, p.end - p.begin);
    scratch.matches.clear();
    MLASPEC_RETURN_IF_ERROR(find(text, scratch.matches));
    if (scratch.matches.empty() && !invert) {
      out.push_back(p);  // no match: the piece stays whole under every behaviour
      continue;
    }
    cover(scratch.matches, static_cast<uint32_t>(text.size()), invert, scratch.ranges);
    fold_behavior(scratch.ranges, behavior, scratch.acc);
    emit(p, scratch.ranges, out);
  }
  pieces.swap(out);
  return Status::Ok();
}

// Appends `text` to `buf` and returns the piece for it.
Piece append_piece(std::string& buf, const std::string& text, bool at_origin) {
  const auto begin = static_cast<uint32_t>(buf.size());
  buf += text;
  return {begin, static_cast<uint32_t>(buf.size()), at_origin};
}

class Split final : public PreTokenizer {
 public:
  Split(std::shared_ptr<const Regex> re, Behavior behavior, bool invert)
      : re_(std::move(re)), behavior_(behavior), invert_(invert) {}
  Status apply(std::string& buf, std::vector<Piece>& pieces) const override {
    return split_pieces(
        pieces, buf, behavior_, invert_,
        [&](std::string_view t, std::vector<Span>& m) { return re_->find_all(t, m); });
  }
  bool removes_text() const override { return behavior_ == Behavior::kRemoved; }

 private:
  std::shared_ptr<const Regex> re_;
  Behavior behavior_;
  bool invert_;
};

// GPT-2's pattern, as tokenizers' ByteLevel carries it.
constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

class ByteLevel final : public PreTokenizer {
 public:
  ByteLevel(bool add_prefix_space, std::shared_ptr<const Regex> re)
      : add_prefix_space_(add_prefix_space), re_(std::move(re)) {}
  Status apply(std::string& buf, std::vector<Piece>& pieces) const override {
    if (add_prefix_space_) {
      for (Piece& p : pieces) {
        if (p.end > p.begin && buf[p.begin] == ' ') continue;
        const std::string text = " " + buf.substr(p.begin, p.end - p.begin);
        p = append_piece(buf, text, p.at_origin);
      }
    }
    if (!re_) return Status::Ok();
    return split_pieces(
        pieces, buf, Behavior::kIsolated, false,
        [&](std::string_view t, std::vector<Span>& m) { return re_->find_all(t, m); });
  }
  bool byte_level() const override { return true; }
  bool adds_text() const override { return add_prefix_space_; }

 private:
  bool add_prefix_space_;
  std::shared_ptr<const Regex> re_;
};

class Digits final : public PreTokenizer {
 public:
  explicit Digits(bool individual) : individual_(individual) {}
  Status apply(std::string& buf, std::vector<Piece>& pieces) const override {
    // Rust's char::is_numeric: general categories Nd, Nl, No.
    const auto numeric = [](char32_t c) {
      return (U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_N_MASK) != 0;
    };
    return split_pieces(pieces, buf, individual_ ? Behavior::kIsolated : Behavior::kContiguous,
                        false, [&](std::string_view t, std::vector<Span>& m) {
                          char_matches(t, numeric, m);
                          return Status::Ok();
                        });
  }

 private:
  bool individual_;
};

enum class PrependScheme { kAlways, kFirst, kNever };

class Metaspace final : public PreTokenizer {
 public:
  Metaspace(char32_t replacement, PrependScheme scheme, bool split)
      : replacement_(replacement), scheme_(scheme), split_(split) {
    utf8::append(rep_, replacement);
  }
  Status apply(std::string& buf, std::vector<Piece>& pieces) const override {
    for (Piece& p : pieces) {
      std::string text;
      text.reserve(p.end - p.begin + 8);
      for (uint32_t i = p.begin; i < p.end; ++i) {
        if (buf[i] == ' ') {
          text += rep_;
        } else {
          text += buf[i];
        }
      }
      const bool starts = text.compare(0, rep_.size(), rep_) == 0;
      if (!starts && (scheme_ == PrependScheme::kAlways ||
                      (scheme_ == PrependScheme::kFirst && p.at_origin))) {
        text.insert(0, rep_);
      }
      p = append_piece(buf, text, p.at_origin);
    }
    if (!split_) return Status::Ok();
    return split_pieces(pieces, buf, Behavior::kMergedWithNext, false,
                        [&](std::string_view t, std::vector<Span>& m) {
                          char_matches(
                              t, [&](char32_t c) { return c == replacement_; }, m);
                          return Status::Ok();
                        });
  }
  bool adds_text() const override { return true; }

 private:
  char32_t replacement_;
  std::string rep_;
  PrependScheme scheme_;
  bool split_;
};

class SequencePre final : public PreTokenizer {
 public:
  explicit SequencePre(std::vector<std::unique_ptr<PreTokenizer>> parts)
      : parts_(std::move(parts)) {}
  Status apply(std::string& buf, std::vector<Piece>& pieces) const override {
    for (const auto& p : parts_) MLASPEC_RETURN_IF_ERROR(p->apply(buf, pieces));
    return Status::Ok();
  }
  bool byte_level() const override { return !parts_.empty() && parts_.back()->byte_level(); }
  bool removes_text() const override {
    for (const auto& p : parts_) {
      if (p->removes_text()) return true;
    }
    return false;
  }
  bool adds_text() const override {
    for (const auto& p : parts_) {
      if (p->adds_text()) return true;
    }
    return false;
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> parts_;
};

Result<Behavior> parse_behavior(const json_util::Json& j, const std::string& what) {
  auto b = json_util::get_string(j, "behavior", what);
  if (!b.ok()) return b.status();
  if (*b == "Removed") return Behavior::kRemoved;
  if (*b == "Isolated") return Behavior::kIsolated;
  if (*b == "MergedWithPrevious") return Behavior::kMergedWithPrevious;
  if (*b == "MergedWithNext") return Behavior::kMergedWithNext;
  if (*b == "Contiguous") return Behavior::kContiguous;
  return unsupported(what + ": behavior \"" + *b +
                     "\" is not supported (Removed, Isolated, MergedWithPrevious, MergedWithNext, "
                     "Contiguous)");
}

}  // namespace

Result<std::unique_ptr<PreTokenizer>> parse_pre_tokenizer(const json_util::Json& j) {
  using R = Result<std::unique_ptr<PreTokenizer>>;
  if (j.is_null()) return R(std::unique_ptr<PreTokenizer>());
  auto type = json_util::type_of(j, "pre_tokenizer");
  if (!type.ok()) return type.status();
  const std::string what = "pre_tokenizer " + *type;
  if (*type == "Split") {
    auto pattern = json_util::get_pattern(j, what);
    if (!pattern.ok()) return pattern.status();
    auto behavior = parse_behavior(j, what);
    if (!behavior.ok()) return behavior.status();
    auto invert = json_util::get_bool(j, "invert", false, what);
    if (!invert.ok()) return invert.status();
    auto re = Regex::compile(
        pattern->text, pattern->is_regex ? Regex::Syntax::kOniguruma : Regex::Syntax::kLiteral);
    if (!re.ok()) return re.status().with_context(what);
    return R(std::make_unique<Split>(*re, *behavior, *invert));
  }
  if (*type == "ByteLevel") {
    auto prefix = json_util::get_bool(j, "add_prefix_space", true, what);
    auto use_regex = json_util::get_bool(j, "use_regex", true, what);
    if (!prefix.ok()) return prefix.status();
    if (!use_regex.ok()) return use_regex.status();
    std::shared_ptr<const Regex> re;
    if (*use_regex) {
      auto compiled = Regex::compile(kGpt2Pattern, Regex::Syntax::kOniguruma);
      if (!compiled.ok()) return compiled.status().with_context(what);
      re = *compiled;
    }
    return R(std::make_unique<ByteLevel>(*prefix, re));
  }
  if (*type == "Digits") {
    auto individual = json_util::get_bool(j, "individual_digits", false, what);
    if (!individual.ok()) return individual.status();
    return R(std::make_unique<Digits>(*individual));
  }
  if (*type == "Metaspace") {
    auto rep = json_util::get_string(j, "replacement", what);
    if (!rep.ok()) return rep.status();
    if (rep->empty() || utf8::first_invalid(*rep) != std::string::npos ||
        utf8::char_length(static_cast<unsigned char>((*rep)[0])) != rep->size()) {
      return data_loss(what + ": replacement must be one character");
    }
    PrependScheme scheme = PrependScheme::kAlways;
    if (auto it = j.find("prepend_scheme"); it != j.end() && !it->is_null()) {
      if (!it->is_string()) return data_loss(what + ": prepend_scheme must be a string");
      const std::string s = it->get<std::string>();
      if (s == "always") {
        scheme = PrependScheme::kAlways;
      } else if (s == "first") {
        scheme = PrependScheme::kFirst;
      } else if (s == "never") {
        scheme = PrependScheme::kNever;
      } else {
        return unsupported(what + ": prepend_scheme \"" + s +
                           "\" is not supported (always, first, never)");
      }
    }
    auto legacy = j.find("add_prefix_space");
    if (legacy != j.end() && legacy->is_boolean() && !legacy->get<bool>()) {
      scheme = PrependScheme::kNever;
    }
    auto split = json_util::get_bool(j, "split", true, what);
    if (!split.ok()) return split.status();
    return R(std::make_unique<Metaspace>(utf8::decode_at(*rep, 0), scheme, *split));
  }
  if (*type == "Sequence") {
    auto arr = json_util::get_array(j, "pretokenizers", what);
    if (!arr.ok()) return arr.status();
    std::vector<std::unique_ptr<PreTokenizer>> parts;
    for (const auto& item : **arr) {
      auto part = parse_pre_tokenizer(item);
      if (!part.ok()) return part.status();
      if (!*part) continue;
      if (!parts.empty() && parts.back()->byte_level()) {
        return unsupported(what +
                           ": a pre-tokenizer after ByteLevel is not supported (ByteLevel must "
                           "come last)");
      }
      parts.push_back(std::move(*part));
    }
    return R(std::make_unique<SequencePre>(std::move(parts)));
  }
  return unsupported("pre_tokenizer type \"" + *type +
                     "\" is not supported (Split, ByteLevel, Digits, Metaspace, Sequence)");
}

}  // namespace mlaspec::tokenizer
