#include "tokenizer/normalizer.h"

#include <unicode/locid.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <vector>

#include "tokenizer/regex.h"
#include "tokenizer/utf8.h"

namespace mlaspec::tokenizer {
namespace {

bool is_ascii(const std::string& s) {
  for (const char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

class UnicodeForm final : public Normalizer {
 public:
  UnicodeForm(const icu::Normalizer2* n, std::string name) : n_(n), name_(std::move(name)) {}
  Status normalize(std::string& text) const override {
    // ASCII is invariant under all four forms; most text takes this exit.
    if (is_ascii(text)) return Status::Ok();
    UErrorCode err = U_ZERO_ERROR;
    const icu::UnicodeString in = icu::UnicodeString::fromUTF8(text);
    if (n_->isNormalized(in, err) && U_SUCCESS(err)) return Status::Ok();
    err = U_ZERO_ERROR;
    const icu::UnicodeString out = n_->normalize(in, err);
    if (U_FAILURE(err)) return internal_error(name_ + " normalization failed: " + u_errorName(err));
    text.clear();
    out.toUTF8String(text);
    return Status::Ok();
  }

 private:
  const icu::Normalizer2* n_;
  std::string name_;
};

class Lowercase final : public Normalizer {
 public:
  Status normalize(std::string& text) const override {
    if (is_ascii(text)) {
      for (char& c : text) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      }
      return Status::Ok();
    }
    // tokenizers lowercases character by character (full mappings such as U+0130 -> "i\u0307",
    // but no context: a final capital sigma becomes σ, not ς).
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
      const size_t n = utf8::char_length(static_cast<unsigned char>(text[i]));
      if (n == 1) {
        const char c = text[i];
        out.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
      } else {
        icu::UnicodeString one(static_cast<UChar32>(utf8::decode_at(text, i)));
        one.toLower(icu::Locale::getRoot());
        one.toUTF8String(out);
      }
      i += n;
    }
    text = std::move(out);
    return Status::Ok();
  }
};

class Prepend final : public Normalizer {
 public:
  explicit Prepend(std::string prefix) : prefix_(std::move(prefix)) {}
  Status normalize(std::string& text) const override {
    if (!text.empty()) text.insert(0, prefix_);
    return Status::Ok();
  }

 private:
  std::string prefix_;
};

class Replace final : public Normalizer {
 public:
  Replace(std::shared_ptr<const Regex> re, std::string content)
      : re_(std::move(re)), content_(std::move(content)) {}
  Status normalize(std::string& text) const override { return re_->replace_all(text, content_); }

 private:
  std::shared_ptr<const Regex> re_;
  std::string content_;
};

class Strip final : public Normalizer {
 public:
  Strip(bool left, bool right) : left_(left), right_(right) {}
  Status normalize(std::string& text) const override {
    size_t b = 0, e = text.size();
    if (left_) {
      while (b < e) {
        const size_t n = utf8::char_length(static_cast<unsigned char>(text[b]));
        if (!u_isUWhiteSpace(static_cast<UChar32>(utf8::decode_at(text, b)))) break;
        b += n;
      }
    }
    if (right_) {
      while (e > b) {
        size_t s = e - 1;
        while (s > b && (static_cast<unsigned char>(text[s]) & 0xC0) == 0x80) --s;
        if (!u_isUWhiteSpace(static_cast<UChar32>(utf8::decode_at(text, s)))) break;
        e = s;
      }
    }
    text = text.substr(b, e - b);
    return Status::Ok();
  }

 private:
  bool left_, right_;
};

class SequenceNormalizer final : public Normalizer {
 public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> parts)
      : parts_(std::move(parts)) {}
  Status normalize(std::string& text) const override {
    for (const auto& p : parts_) MLASPEC_RETURN_IF_ERROR(p->normalize(text));
    return Status::Ok();
  }
  bool changes_text() const override {
    for (const auto& p : parts_) {
      if (p->changes_text()) return true;
    }
    return false;
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> parts_;
};

Result<const icu::Normalizer2*> icu_form(const std::string& type) {
  UErrorCode err = U_ZERO_ERROR;
  const icu::Normalizer2* n = nullptr;
  if (type == "NFC") n = icu::Normalizer2::getNFCInstance(err);
  if (type == "NFD") n = icu::Normalizer2::getNFDInstance(err);
  if (type == "NFKC") n = icu::Normalizer2::getNFKCInstance(err);
  if (type == "NFKD") n = icu::Normalizer2::getNFKDInstance(err);
  if (!n || U_FAILURE(err)) return internal_error("ICU has no " + type + " normalizer");
  return n;
}

}  // namespace

Result<std::unique_ptr<Normalizer>> parse_normalizer(const json_util::Json& j) {
  using R = Result<std::unique_ptr<Normalizer>>;
  if (j.is_null()) return R(std::unique_ptr<Normalizer>());
  auto type = json_util::type_of(j, "normalizer");
  if (!type.ok()) return type.status();
  const std::string what = "normalizer " + *type;
  if (*type == "NFC" || *type == "NFD" || *type == "NFKC" || *type == "NFKD") {
    auto n = icu_form(*type);
    if (!n.ok()) return n.status();
    return R(std::make_unique<UnicodeForm>(*n, *type));
  }
  if (*type == "Lowercase") return R(std::make_unique<Lowercase>());
  if (*type == "Prepend") {
    auto p = json_util::get_string(j, "prepend", what);
    if (!p.ok()) return p.status();
    return R(std::make_unique<Prepend>(*p));
  }
  if (*type == "Replace") {
    auto pattern = json_util::get_pattern(j, what);
    if (!pattern.ok()) return pattern.status();
    auto content = json_util::get_string(j, "content", what);
    if (!content.ok()) return content.status();
    auto re = Regex::compile(
        pattern->text, pattern->is_regex ? Regex::Syntax::kOniguruma : Regex::Syntax::kLiteral);
    if (!re.ok()) return re.status().with_context(what);
    return R(std::make_unique<Replace>(*re, *content));
  }
  if (*type == "Strip") {
    auto left = json_util::get_bool(j, "strip_left", false, what);
    auto right = json_util::get_bool(j, "strip_right", false, what);
    if (!left.ok()) return left.status();
    if (!right.ok()) return right.status();
    return R(std::make_unique<Strip>(*left, *right));
  }
  if (*type == "Sequence") {
    auto arr = json_util::get_array(j, "normalizers", what);
    if (!arr.ok()) return arr.status();
    std::vector<std::unique_ptr<Normalizer>> parts;
    for (const auto& item : **arr) {
      auto part = parse_normalizer(item);
      if (!part.ok()) return part.status();
      if (*part) parts.push_back(std::move(*part));
    }
    return R(std::make_unique<SequenceNormalizer>(std::move(parts)));
  }
  return unsupported("normalizer type \"" + *type +
                     "\" is not supported (NFC, NFD, NFKC, NFKD, Lowercase, Prepend, Replace, "
                     "Strip, Sequence)");
}

}  // namespace mlaspec::tokenizer
