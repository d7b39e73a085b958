// Chat templates: the Jinja program a Hugging Face checkpoint ships in tokenizer_config.json
// ("chat_template") to turn a conversation into prompt text. The renderer interprets the Jinja
// subset chat templates use with jinja2's semantics under the environment Hugging Face's
// apply_chat_template builds (trim_blocks, lstrip_blocks, loop controls, a tojson that does not
// escape HTML, raise_exception), so the text equals what transformers renders. A construct it
// does not implement (a tag, filter, test, method or function) is an error at parse time naming
// it and its line and column: never a different prompt.
//
//   auto tmpl = ChatTemplate::load("/models/DeepSeek-V3");
//   std::vector<ChatMessage> chat = {{"system", "Be brief."}, {"user", "Hi"}};
//   Result<std::string> prompt = tmpl->render(chat, /*add_generation_prompt=*/true);
//   // Encode the prompt with EncodeOptions{.add_special_tokens = false}: the template already
//   // wrote the BOS text (apply_chat_template(tokenize=True) does the same).
//
// Rendering is bounded (steps, string and list sizes, nesting, macro recursion); passing a bound
// is a resource_exhausted error naming it. A ChatTemplate is immutable and safe to render from
// many threads at once.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "mlaspec/core/status.h"

namespace mlaspec::tokenizer {

struct ChatMessage {
  std::string role;
  std::string content;
};

namespace jinja {
struct Program;
}

class ChatTemplate {
 public:
  // Parses the template text; an unsupported construct is an error naming it and its line/col.
  static Result<ChatTemplate> parse(std::string_view source);
  // Reads dir/tokenizer_config.json: chat_template (a string, or the list of {name, template}
  // whose "default" entry is used; else dir/chat_template.jinja), and the special tokens the
  // template sees as variables (bos_token, eos_token, unk_token, pad_token, sep_token,
  // cls_token, mask_token: a string or an {"content": ...} object). not_found when the model
  // has no chat template.
  static Result<ChatTemplate> load(const std::filesystem::path& model_dir);

  // The variables Hugging Face passes: messages (each {role, content}), add_generation_prompt,
  // tools and documents (None), and the special tokens.
  Result<std::string> render(std::span<const ChatMessage> messages,
                             bool add_generation_prompt) const;
  // The lower level: the variables as one JSON object (e.g. {"messages": [...], "tools": [...],
  // "add_generation_prompt": true}), with any message fields (tool_calls, name, ...). The
  // special tokens are added where the object does not set them. Key order is kept, as tojson
  // prints it.
  Result<std::string> render_json(std::string_view context_json) const;

  const std::string& source() const { return source_; }
  const std::string& bos_token() const;
  const std::string& eos_token() const;
  // Sets a special-token variable (e.g. "bos_token") the template sees.
  void set_special_token(const std::string& name, std::string value);

  ChatTemplate(const ChatTemplate&) = default;
  ChatTemplate& operator=(const ChatTemplate&) = default;
  ChatTemplate(ChatTemplate&&) noexcept = default;
  ChatTemplate& operator=(ChatTemplate&&) noexcept = default;
  ~ChatTemplate();

 private:
  ChatTemplate() = default;
  std::string source_;
  std::shared_ptr<const jinja::Program> program_;
  std::map<std::string, std::string> special_tokens_;
};

}  // namespace mlaspec::tokenizer
