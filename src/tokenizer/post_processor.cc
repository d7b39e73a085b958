#include "tokenizer/post_processor.h"

namespace mlaspec::tokenizer {
namespace {

Status parse_template(const json_util::Json& j, PostProcessor& pp) {
  const std::string what = "post_processor TemplateProcessing";
  auto single = json_util::get_array(j, "single", what);
  if (!single.ok()) return single.status();
  auto specials = j.find("special_tokens");
  if (specials == j.end() || !specials->is_object()) {
    return data_loss(what + ": \"special_tokens\" must be an object");
  }
  bool seen_sequence = false;
  for (const auto& item : **single) {
    if (!item.is_object() || item.size() != 1) {
      return data_loss(what + ": a template item must be {\"SpecialToken\"|\"Sequence\": ...}");
    }
    const auto first = item.begin();
    if (first.key() == "Sequence") {
      const auto& seq = first.value();
      if (!seq.is_object() || seq.value("id", "") != "A") {
        return unsupported(what + ": the single template may only hold sequence A");
      }
      if (seen_sequence) return unsupported(what + ": sequence A twice in the single template");
      seen_sequence = true;
      continue;
    }
    if (first.key() != "SpecialToken") {
      return unsupported(what + ": template item \"" + first.key() + "\" is not supported");
    }
    const auto& st = first.value();
    if (!st.is_object() || !st.contains("id") || !st["id"].is_string()) {
      return data_loss(what + ": SpecialToken needs a string \"id\"");
    }
    const std::string name = st["id"].get<std::string>();
    auto sp = specials->find(name);
    if (sp == specials->end() || !sp->is_object() || !sp->contains("ids") ||
        !(*sp)["ids"].is_array()) {
      return data_loss(what + ": special token \"" + name + "\" has no ids in special_tokens");
    }
    for (const auto& id : (*sp)["ids"]) {
      if (!id.is_number_unsigned() || id.get<uint64_t>() >= (1u << 30)) {
        return data_loss(what + ": special token \"" + name + "\" has an invalid id");
      }
      (seen_sequence ? pp.suffix : pp.prefix).push_back(static_cast<int32_t>(id.get<uint64_t>()));
    }
  }
  if (!seen_sequence) return data_loss(what + ": the single template has no sequence A");
  return Status::Ok();
}

// ["<s>", 0] pairs of BertProcessing / RobertaProcessing.
Result<int32_t> token_pair_id(const json_util::Json& j, const char* key, const std::string& what) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_array() || it->size() != 2 || !(*it)[1].is_number_unsigned() ||
      (*it)[1].get<uint64_t>() >= (1u << 30)) {
    return data_loss(what + ": \"" + key + "\" must be [token, id]");
  }
  return static_cast<int32_t>((*it)[1].get<uint64_t>());
}

Status parse_into(const json_util::Json& j, PostProcessor& pp, bool& have_template) {
  auto type = json_util::type_of(j, "post_processor");
  if (!type.ok()) return type.status();
  const std::string what = "post_processor " + *type;
  if (*type == "ByteLevel") return Status::Ok();
  if (*type == "TemplateProcessing" || *type == "BertProcessing" || *type == "RobertaProcessing") {
    if (have_template) return unsupported(what + ": two processors that add tokens");
    have_template = true;
    if (*type == "TemplateProcessing") return parse_template(j, pp);
    // Bert and Roberta differ only for pairs and offsets; one sequence is cls A sep in both.
    auto cls = token_pair_id(j, "cls", what);
    auto sep = token_pair_id(j, "sep", what);
    if (!cls.ok()) return cls.status();
    if (!sep.ok()) return sep.status();
    pp.prefix = {*cls};
    pp.suffix = {*sep};
    return Status::Ok();
  }
  if (*type == "Sequence") {
    auto arr = json_util::get_array(j, "processors", what);
    if (!arr.ok()) return arr.status();
    for (const auto& item : **arr) MLASPEC_RETURN_IF_ERROR(parse_into(item, pp, have_template));
    return Status::Ok();
  }
  return unsupported("post_processor type \"" + *type +
                     "\" is not supported (TemplateProcessing, BertProcessing, "
                     "RobertaProcessing, ByteLevel, Sequence)");
}

}  // namespace

Result<PostProcessor> parse_post_processor(const json_util::Json& j) {
  PostProcessor pp;
  if (j.is_null()) return pp;
  bool have_template = false;
  MLASPEC_RETURN_IF_ERROR(parse_into(j, pp, have_template));
  return pp;
}

}  // namespace mlaspec::tokenizer
