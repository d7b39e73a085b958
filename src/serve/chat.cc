#include "mlaspec/serve/chat.h"

#if __has_include("mlaspec/tokenizer/chat_template.h")
#include "mlaspec/tokenizer/chat_template.h"
#define MLASPEC_HAVE_CHAT_TEMPLATE 1
#else
#define MLASPEC_HAVE_CHAT_TEMPLATE 0
#endif

namespace mlaspec::serve {

#if MLASPEC_HAVE_CHAT_TEMPLATE
struct ChatFormatter::Impl {
  tokenizer::ChatTemplate tmpl;
};

Result<ChatFormatter> ChatFormatter::load(const std::string& model_dir) {
  Result<tokenizer::ChatTemplate> t = tokenizer::ChatTemplate::load(model_dir);
  if (!t.ok()) return t.status().with_context("chat template of " + model_dir);
  ChatFormatter f;
  f.impl_ = std::make_shared<const Impl>(Impl{std::move(*t)});
  Result<std::string> probe = f.render({{"user", "hello"}});
  if (!probe.ok()) return probe.status().with_context("chat template of " + model_dir);
  return f;
}

Result<std::string> ChatFormatter::render(const std::vector<Message>& messages) const {
  std::vector<tokenizer::ChatMessage> chat;
  chat.reserve(messages.size());
  for (const Message& m : messages) chat.push_back({m.role, m.content});
  return impl_->tmpl.render(chat, /*add_generation_prompt=*/true);
}
#else
struct ChatFormatter::Impl {};

Result<ChatFormatter> ChatFormatter::load(const std::string&) {
  return unsupported("chat templates are not in this build (tokenizer/chat_template.h)");
}

Result<std::string> ChatFormatter::render(const std::vector<Message>&) const {
  return unsupported("chat templates are not in this build");
}
#endif

}  // namespace mlaspec::serve
