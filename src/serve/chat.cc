#include "mlaspec/serve/chat.h"

#include "mlaspec/tokenizer/chat_template.h"

namespace mlaspec::serve {

struct ChatFormatter::Impl {
  tokenizer::ChatTemplate tmpl;
};

Result<ChatFormatter> ChatFormatter::load(const std::string& model_dir) {
  Result<tokenizer::ChatTemplate> t = tokenizer::ChatTemplate::load(model_dir);
  if (!t.ok()) return t.status().with_context("chat template of " + model_dir);
  ChatFormatter f;
  f.impl_ = std::make_shared<const Impl>(Impl{std::move(*t)});
  // A template that parses but cannot render a plain conversation fails here, not per request.
  Result<std::string> probe = f.render({{"system", "probe"}, {"user", "probe"}});
  if (!probe.ok()) probe = f.render({{"user", "probe"}});
  if (!probe.ok()) return probe.status().with_context("chat template of " + model_dir);
  return f;
}

Result<std::string> ChatFormatter::render(const std::vector<Message>& messages) const {
  std::vector<tokenizer::ChatMessage> chat;
  chat.reserve(messages.size());
  for (const Message& m : messages) chat.push_back({m.role, m.content});
  return impl_->tmpl.render(chat, /*add_generation_prompt=*/true);
}

}  // namespace mlaspec::serve
