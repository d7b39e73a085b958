#include "mlaspec/tokenizer/tokenizer.h"

#include <filesystem>

#include "tokenizer/json_util.h"
#include "tokenizer/read_file.h"
#include "tokenizer/tokenizer_impl.h"
#include "tokenizer/utf8.h"

namespace mlaspec::tokenizer {
namespace {

using json_util::Json;

// bos_token / eos_token of tokenizer_config.json: a string or {"content": ...}.
std::optional<std::string> config_token(const Json& config, const char* key) {
  auto it = config.find(key);
  if (it == config.end()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object() && it->contains("content") && (*it)["content"].is_string()) {
    return (*it)["content"].get<std::string>();
  }
  return std::nullopt;
}

Status load_added_tokens(const Json& root, TokenizerImpl& t) {
  auto it = root.find("added_tokens");
  if (it == root.end() || it->is_null()) return Status::Ok();
  if (!it->is_array()) return data_loss("\"added_tokens\" must be an array");
  t.added.reserve(it->size());
  // tokenizers re-derives the ids on load (the model's id, else the next free one from the
  // vocab size) and only warns when the file disagrees; a disagreement is refused here.
  auto next_id = static_cast<int64_t>(t.model->entry_count());
  for (const Json& item : *it) {
    if (!item.is_object()) return data_loss("an added token is not an object");
    AddedToken tok;
    auto content = json_util::get_string(item, "content", "added token");
    if (!content.ok()) return content.status();
    tok.content = *content;
    const std::string what = "added token \"" + tok.content + "\"";
    if (utf8::first_invalid(tok.content) != std::string::npos) {
      return data_loss(what + " is not valid UTF-8");
    }
    auto id = item.find("id");
    if (id == item.end() || !id->is_number_unsigned()) {
      return data_loss(what + ": \"id\" must be a non-negative integer");
    }
    for (auto [key, flag, fallback] :
         {std::tuple{"single_word", &tok.single_word, false},
          std::tuple{"lstrip", &tok.lstrip, false}, std::tuple{"rstrip", &tok.rstrip, false},
          std::tuple{"normalized", &tok.normalized, true},
          std::tuple{"special", &tok.special, false}}) {
      auto v = json_util::get_bool(item, key, fallback, what);
      if (!v.ok()) return v.status();
      *flag = *v;
    }
    if (tok.content.empty()) continue;
    if (t.added_by_content.count(tok.content)) {
      return unsupported(what + " is listed twice");
    }
    int64_t assigned;
    if (auto model_id = t.model->token_to_id(tok.content)) {
      assigned = *model_id;
    } else {
      assigned = next_id++;
    }
    if (static_cast<uint64_t>(assigned) != id->get<uint64_t>()) {
      return unsupported(what + " has id " + id->dump() + " in the file, but tokenizers assigns " +
                         std::to_string(assigned) +
                         " (the vocab's id, else the next id after the vocab)");
    }
    tok.id = static_cast<int32_t>(assigned);
    tok.pattern = tok.content;
    if (tok.normalized && t.normalizer) {
      MLASPEC_RETURN_IF_ERROR(t.normalizer->normalize(tok.pattern).with_context(what));
    }
    t.added_by_content[tok.content] = tok.id;
    t.added.push_back(std::move(tok));
  }
  for (size_t i = 0; i < t.added.size(); ++i) {
    const AddedToken& tok = t.added[i];
    t.added_by_id[tok.id] = i;
    (tok.normalized ? t.normalized_matcher : t.raw_matcher).add(&tok);
    t.added_info.push_back({tok.id, tok.content, tok.special});
  }
  return Status::Ok();
}

Result<std::shared_ptr<TokenizerImpl>> load(std::string_view tokenizer_json,
                                            std::string_view config_json) {
  Json root = Json::parse(tokenizer_json, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object()) {
    return data_loss("tokenizer.json is not a JSON object");
  }
  auto t = std::make_shared<TokenizerImpl>();
  for (const char* key : {"truncation", "padding"}) {
    if (auto it = root.find(key); it != root.end() && !it->is_null()) {
      return unsupported(std::string("\"") + key +
                         "\" is not supported (set it to null; mlaspec encodes whole texts)");
    }
  }
  auto model = root.find("model");
  if (model == root.end() || !model->is_object()) return data_loss("\"model\" is missing");
  if (auto type = model->find("type"); type != model->end()) {
    if (!type->is_string() || type->get<std::string>() != "BPE") {
      return unsupported("model type " + type->dump() + " is not supported (BPE)");
    }
  } else if (!model->contains("merges")) {
    return unsupported("a model without \"type\" and without merges is not supported (BPE)");
  }
  auto bpe = Bpe::parse(*model);
  if (!bpe.ok()) return bpe.status();
  t->model = std::move(*bpe);

  auto section = [&](const char* key) -> const Json& {
    static const Json null_json;
    auto it = root.find(key);
    return it == root.end() ? null_json : *it;
  };
  auto normalizer = parse_normalizer(section("normalizer"));
  if (!normalizer.ok()) return normalizer.status();
  t->normalizer = std::move(*normalizer);
  auto pre = parse_pre_tokenizer(section("pre_tokenizer"));
  if (!pre.ok()) return pre.status();
  t->pre_tokenizer = std::move(*pre);
  auto post = parse_post_processor(section("post_processor"));
  if (!post.ok()) return post.status();
  t->post = std::move(*post);
  auto decoder = parse_decoder(section("decoder"));
  if (!decoder.ok()) return decoder.status();
  t->decoder = std::move(*decoder);
  MLASPEC_RETURN_IF_ERROR(load_added_tokens(root, *t));

  t->byte_level = t->pre_tokenizer && t->pre_tokenizer->byte_level();
  t->lossless =
      t->byte_level && !t->pre_tokenizer->removes_text() && !t->pre_tokenizer->adds_text() &&
      (!t->normalizer || !t->normalizer->changes_text()) && t->decoder && t->decoder->byte_level();
  t->vocab_size = t->model->size();
  for (const AddedToken& a : t->added) t->vocab_size = std::max(t->vocab_size, a.id + 1);
  for (int32_t id : t->post.prefix) {
    if (id >= t->vocab_size) {
      return data_loss("post_processor adds id " + std::to_string(id) + " outside the vocab");
    }
  }
  for (int32_t id : t->post.suffix) {
    if (id >= t->vocab_size) {
      return data_loss("post_processor adds id " + std::to_string(id) + " outside the vocab");
    }
  }

  auto lookup = [&](const std::string& token) -> std::optional<int32_t> {
    if (auto it = t->added_by_content.find(token); it != t->added_by_content.end()) {
      return it->second;
    }
    return t->model->token_to_id(token);
  };
  if (!config_json.empty()) {
    Json config = Json::parse(config_json, nullptr, false);
    if (config.is_discarded() || !config.is_object()) {
      return data_loss("tokenizer_config.json is not a JSON object");
    }
    for (auto [key, slot] : {std::pair{"bos_token", &t->bos}, std::pair{"eos_token", &t->eos}}) {
      if (auto name = config_token(config, key)) {
        *slot = lookup(*name);
        if (!*slot) {
          return data_loss(std::string("tokenizer_config.json: ") + key + " \"" + *name +
                           "\" is not a token of tokenizer.json");
        }
      }
    }
  }
  if (!t->bos && !t->post.prefix.empty()) t->bos = t->post.prefix.front();
  return t;
}

}  // namespace

Status TokenizerImpl::encode_text(std::string_view segment, bool at_origin,
                                  std::vector<int32_t>& out) const {
  std::string buf(segment);
  std::vector<Piece> pieces;
  if (!buf.empty()) pieces.push_back({0, static_cast<uint32_t>(buf.size()), at_origin});
  if (pre_tokenizer) MLASPEC_RETURN_IF_ERROR(pre_tokenizer->apply(buf, pieces));
  for (const Piece& p : pieces) {
    MLASPEC_RETURN_IF_ERROR(
        model->tokenize(std::string_view(buf).substr(p.begin, p.end - p.begin), byte_level, out));
  }
  return Status::Ok();
}

Status TokenizerImpl::encode(std::string_view input, const EncodeOptions& options,
                             std::vector<int32_t>& out) const {
  if (input.size() > Tokenizer::kMaxEncodeBytes) {
    return invalid_argument("text of " + std::to_string(input.size()) +
                            " bytes exceeds encode's limit of " +
                            std::to_string(Tokenizer::kMaxEncodeBytes) + " bytes per call");
  }
  std::string replaced;
  std::string_view text = input;
  if (const size_t bad = utf8::first_invalid(input); bad != std::string_view::npos) {
    if (options.invalid_utf8 == InvalidUtf8::kReject) {
      return invalid_argument("text is not valid UTF-8 at byte " + std::to_string(bad) +
                              " (pass InvalidUtf8::kReplace to encode it as U+FFFD)");
    }
    replaced = utf8::lossy(input);
    text = replaced;
  }
  if (options.add_special_tokens) out.insert(out.end(), post.prefix.begin(), post.prefix.end());
  std::vector<Segment> segments;
  if (raw_matcher.empty()) {
    segments.push_back({0, static_cast<uint32_t>(text.size()), -1});
  } else {
    raw_matcher.split(text, 0, static_cast<uint32_t>(text.size()), segments);
  }
  std::vector<Segment> inner;
  for (const Segment& seg : segments) {
    if (seg.id >= 0) {
      out.push_back(seg.id);
      continue;
    }
    if (seg.begin == seg.end) continue;
    std::string_view piece = text.substr(seg.begin, seg.end - seg.begin);
    std::string normalized;
    if (normalizer) {
      normalized.assign(piece);
      MLASPEC_RETURN_IF_ERROR(normalizer->normalize(normalized));
      piece = normalized;
    }
    const bool at_origin = seg.begin == 0;
    if (normalized_matcher.empty()) {
      MLASPEC_RETURN_IF_ERROR(encode_text(piece, at_origin, out));
      continue;
    }
    inner.clear();
    normalized_matcher.split(piece, 0, static_cast<uint32_t>(piece.size()), inner);
    for (const Segment& s : inner) {
      if (s.id >= 0) {
        out.push_back(s.id);
      } else if (s.end > s.begin) {
        MLASPEC_RETURN_IF_ERROR(
            encode_text(piece.substr(s.begin, s.end - s.begin), at_origin && s.begin == 0, out));
      }
    }
  }
  if (options.add_special_tokens) out.insert(out.end(), post.suffix.begin(), post.suffix.end());
  return Status::Ok();
}

Result<std::string> TokenizerImpl::decode(std::span<const int32_t> ids,
                                          const DecodeOptions& options) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (const int32_t id : ids) {
    if (auto it = added_by_id.find(id); it != added_by_id.end()) {
      const AddedToken& a = added[it->second];
      if (options.skip_special_tokens && a.special) continue;
      // tokenizers hands the decoder the normalized form of a normalized added token.
      tokens.push_back(a.pattern);
      continue;
    }
    const std::string* token = model->id_to_token(id);
    if (!token) {
      return out_of_range("token id " + std::to_string(id) + " is not in the vocabulary of " +
                          std::to_string(vocab_size) + " ids");
    }
    tokens.push_back(*token);
  }
  return run_decoder(decoder.get(), std::move(tokens));
}

bool tokenizer_available() {
  return true;
}

Tokenizer::Tokenizer(std::shared_ptr<const TokenizerImpl> impl) : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(const Tokenizer&) = default;
Tokenizer& Tokenizer::operator=(const Tokenizer&) = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

Result<Tokenizer> Tokenizer::from_json(std::string_view tokenizer_json,
                                       std::string_view config_json) {
  try {
    auto impl = load(tokenizer_json, config_json);
    if (!impl.ok()) return impl.status();
    return Tokenizer(std::shared_ptr<const TokenizerImpl>(std::move(*impl)));
  } catch (const nlohmann::json::exception& e) {
    return data_loss(std::string("tokenizer.json: ") + e.what());
  }
}

Result<Tokenizer> Tokenizer::from_path(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path file = path;
  std::string config;
  if (fs::is_directory(file, ec)) {
    if (auto c = read_file(file / "tokenizer_config.json"); c.ok()) config = std::move(*c);
    file /= "tokenizer.json";
  }
  auto text = read_file(file);
  if (!text.ok()) return text.status();
  auto tok = from_json(*text, config);
  if (!tok.ok()) return tok.status().with_context(file.string());
  return tok;
}

Result<std::vector<int32_t>> Tokenizer::encode(std::string_view text,
                                               const EncodeOptions& options) const {
  std::vector<int32_t> ids;
  MLASPEC_RETURN_IF_ERROR(impl_->encode(text, options, ids));
  return ids;
}

Result<std::string> Tokenizer::decode(std::span<const int32_t> ids,
                                      const DecodeOptions& options) const {
  return impl_->decode(ids, options);
}

int32_t Tokenizer::vocab_size() const {
  return impl_->vocab_size;
}

std::optional<int32_t> Tokenizer::token_to_id(std::string_view token) const {
  if (auto it = impl_->added_by_content.find(token); it != impl_->added_by_content.end()) {
    return it->second;
  }
  return impl_->model->token_to_id(token);
}

std::optional<std::string> Tokenizer::id_to_token(int32_t id) const {
  if (auto it = impl_->added_by_id.find(id); it != impl_->added_by_id.end()) {
    return impl_->added[it->second].content;
  }
  if (const std::string* t = impl_->model->id_to_token(id)) return *t;
  return std::nullopt;
}

bool Tokenizer::is_special(int32_t id) const {
  auto it = impl_->added_by_id.find(id);
  return it != impl_->added_by_id.end() && impl_->added[it->second].special;
}

const std::vector<AddedTokenInfo>& Tokenizer::added_tokens() const {
  return impl_->added_info;
}
std::optional<int32_t> Tokenizer::bos_id() const {
  return impl_->bos;
}
std::optional<int32_t> Tokenizer::eos_id() const {
  return impl_->eos;
}
bool Tokenizer::lossless() const {
  return impl_->lossless;
}

}  // namespace mlaspec::tokenizer
