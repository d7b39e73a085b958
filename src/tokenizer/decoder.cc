#include "tokenizer/decoder.h"

#include "tokenizer/regex.h"
#include "tokenizer/utf8.h"
#include "tokenizer/vocab.h"

namespace mlaspec::tokenizer {
namespace {

class ByteLevelDecoder final : public Decoder {
 public:
  Status decode_chain(std::vector<std::string>& tokens) const override {
    const ByteTable& bt = byte_table();
    std::string bytes;
    for (const std::string& t : tokens) {
      const size_t mark = bytes.size();
      bool mapped = true;
      for (size_t i = 0; i < t.size();) {
        const char32_t c = utf8::decode_at(t, i);
        i += utf8::char_length(static_cast<unsigned char>(t[i]));
        if (c >= 512 || bt.char_to_byte[c] < 0) {
          mapped = false;
          break;
        }
        bytes.push_back(static_cast<char>(bt.char_to_byte[c]));
      }
      // A token with a character outside the table (an added token) contributes its own bytes.
      if (!mapped) {
        bytes.resize(mark);
        bytes += t;
      }
    }
    tokens.assign(1, utf8::lossy(bytes));
    return Status::Ok();
  }
  bool byte_level() const override { return true; }
};

class MetaspaceDecoder final : public Decoder {
 public:
  MetaspaceDecoder(char32_t replacement, bool prepend)
      : replacement_(replacement), prepend_(prepend) {}
  Status decode_chain(std::vector<std::string>& tokens) const override {
    for (size_t k = 0; k < tokens.size(); ++k) {
      std::string out;
      const std::string& t = tokens[k];
      for (size_t i = 0; i < t.size();) {
        const size_t n = utf8::char_length(static_cast<unsigned char>(t[i]));
        if (utf8::decode_at(t, i) == replacement_) {
          if (!(k == 0 && prepend_)) out += ' ';
        } else {
          out.append(t, i, n);
        }
        i += n;
      }
      tokens[k] = std::move(out);
    }
    return Status::Ok();
  }

 private:
  char32_t replacement_;
  bool prepend_;
};

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class ByteFallbackDecoder final : public Decoder {
 public:
  Status decode_chain(std::vector<std::string>& tokens) const override {
    std::vector<std::string> out;
    std::string pending;
    auto flush = [&] {
      if (pending.empty()) return;
      if (utf8::first_invalid(pending) == std::string::npos) {
        out.push_back(pending);
      } else {
        for (size_t i = 0; i < pending.size(); ++i) out.emplace_back(utf8::kReplacement);
      }
      pending.clear();
    };
    for (std::string& t : tokens) {
      if (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>' && hex_value(t[3]) >= 0 &&
          hex_value(t[4]) >= 0) {
        pending.push_back(static_cast<char>(hex_value(t[3]) * 16 + hex_value(t[4])));
        continue;
      }
      flush();
      out.push_back(std::move(t));
    }
    flush();
    tokens = std::move(out);
    return Status::Ok();
  }
};

class FuseDecoder final : public Decoder {
 public:
  Status decode_chain(std::vector<std::string>& tokens) const override {
    std::string all;
    for (const std::string& t : tokens) all += t;
    tokens.assign(1, std::move(all));
    return Status::Ok();
  }
};

class StripDecoder final : public Decoder {
 public:
  StripDecoder(char32_t content, size_t start, size_t stop)
      : content_(content), start_(start), stop_(stop) {}
  Status decode_chain(std::vector<std::string>& tokens) const override {
    for (std::string& t : tokens) {
      std::vector<std::pair<size_t, size_t>> chars;  // (offset, length)
      for (size_t i = 0; i < t.size();) {
        const size_t n = utf8::char_length(static_cast<unsigned char>(t[i]));
        chars.emplace_back(i, n);
        i += n;
      }
      size_t start_cut = 0;
      for (size_t i = 0; i < std::min(start_, chars.size()); ++i) {
        if (utf8::decode_at(t, chars[i].first) != content_) break;
        start_cut = i + 1;
      }
      size_t stop_cut = chars.size();
      for (size_t i = 0; i < stop_ && i < chars.size(); ++i) {
        const size_t index = chars.size() - i - 1;
        if (utf8::decode_at(t, chars[index].first) != content_) break;
        stop_cut = index;
      }
      if (stop_cut <= start_cut) {
        t.clear();
        continue;
      }
      const size_t b = chars[start_cut].first;
      const size_t e = stop_cut < chars.size() ? chars[stop_cut].first : t.size();
      t = t.substr(b, e - b);
    }
    return Status::Ok();
  }

 private:
  char32_t content_;
  size_t start_, stop_;
};

class ReplaceDecoder final : public Decoder {
 public:
  ReplaceDecoder(std::shared_ptr<const Regex> re, std::string content)
      : re_(std::move(re)), content_(std::move(content)) {}
  Status decode_chain(std::vector<std::string>& tokens) const override {
    for (std::string& t : tokens) MLASPEC_RETURN_IF_ERROR(re_->replace_all(t, content_));
    return Status::Ok();
  }

 private:
  std::shared_ptr<const Regex> re_;
  std::string content_;
};

class SequenceDecoder final : public Decoder {
 public:
  explicit SequenceDecoder(std::vector<std::unique_ptr<Decoder>> parts)
      : parts_(std::move(parts)) {}
  Status decode_chain(std::vector<std::string>& tokens) const override {
    for (const auto& p : parts_) MLASPEC_RETURN_IF_ERROR(p->decode_chain(tokens));
    return Status::Ok();
  }
  bool byte_level() const override {
    for (const auto& p : parts_) {
      if (p->byte_level()) return true;
    }
    return false;
  }

 private:
  std::vector<std::unique_ptr<Decoder>> parts_;
};

Result<char32_t> one_char(const json_util::Json& j, const char* key, const std::string& what) {
  auto s = json_util::get_string(j, key, what);
  if (!s.ok()) return s.status();
  if (s->empty() || utf8::first_invalid(*s) != std::string::npos ||
      utf8::char_length(static_cast<unsigned char>((*s)[0])) != s->size()) {
    return data_loss(what + ": \"" + key + "\" must be one character");
  }
  return utf8::decode_at(*s, 0);
}

Result<size_t> get_count(const json_util::Json& j, const char* key, const std::string& what) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_unsigned()) {
    return data_loss(what + ": \"" + key + "\" must be a non-negative integer");
  }
  return static_cast<size_t>(std::min<uint64_t>(it->get<uint64_t>(), 1u << 30));
}

}  // namespace

Result<std::unique_ptr<Decoder>> parse_decoder(const json_util::Json& j) {
  using R = Result<std::unique_ptr<Decoder>>;
  if (j.is_null()) return R(std::unique_ptr<Decoder>());
  auto type = json_util::type_of(j, "decoder");
  if (!type.ok()) return type.status();
  const std::string what = "decoder " + *type;
  if (*type == "ByteLevel") return R(std::make_unique<ByteLevelDecoder>());
  if (*type == "Metaspace") {
    auto rep = one_char(j, "replacement", what);
    if (!rep.ok()) return rep.status();
    bool prepend = true;
    if (auto it = j.find("prepend_scheme"); it != j.end() && it->is_string()) {
      const std::string s = it->get<std::string>();
      if (s != "always" && s != "first" && s != "never") {
        return unsupported(what + ": prepend_scheme \"" + s + "\" is not supported");
      }
      prepend = s != "never";
    }
    if (auto it = j.find("add_prefix_space");
        it != j.end() && it->is_boolean() && !it->get<bool>()) {
      prepend = false;
    }
    return R(std::make_unique<MetaspaceDecoder>(*rep, prepend));
  }
  if (*type == "ByteFallback") return R(std::make_unique<ByteFallbackDecoder>());
  if (*type == "Fuse") return R(std::make_unique<FuseDecoder>());
  if (*type == "Strip") {
    auto content = one_char(j, "content", what);
    auto start = get_count(j, "start", what);
    auto stop = get_count(j, "stop", what);
    if (!content.ok()) return content.status();
    if (!start.ok()) return start.status();
    if (!stop.ok()) return stop.status();
    return R(std::make_unique<StripDecoder>(*content, *start, *stop));
  }
  if (*type == "Replace") {
    auto pattern = json_util::get_pattern(j, what);
    if (!pattern.ok()) return pattern.status();
    auto content = json_util::get_string(j, "content", what);
    if (!content.ok()) return content.status();
    auto re = Regex::compile(
        pattern->text, pattern->is_regex ? Regex::Syntax::kOniguruma : Regex::Syntax::kLiteral);
    if (!re.ok()) return re.status().with_context(what);
    return R(std::make_unique<ReplaceDecoder>(*re, *content));
  }
  if (*type == "Sequence") {
    auto arr = json_util::get_array(j, "decoders", what);
    if (!arr.ok()) return arr.status();
    std::vector<std::unique_ptr<Decoder>> parts;
    for (const auto& item : **arr) {
      auto part = parse_decoder(item);
      if (!part.ok()) return part.status();
      if (*part) parts.push_back(std::move(*part));
    }
    return R(std::make_unique<SequenceDecoder>(std::move(parts)));
  }
  return unsupported("decoder type \"" + *type +
                     "\" is not supported (ByteLevel, Metaspace, ByteFallback, Fuse, Strip, "
                     "Replace, Sequence)");
}

Result<std::string> run_decoder(const Decoder* decoder, std::vector<std::string> tokens) {
  std::string out;
  if (!decoder) {
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (i) out += ' ';
      out += tokens[i];
    }
    return out;
  }
  MLASPEC_RETURN_IF_ERROR(decoder->decode_chain(tokens));
  for (const std::string& t : tokens) out += t;
  return out;
}

}  // namespace mlaspec::tokenizer
