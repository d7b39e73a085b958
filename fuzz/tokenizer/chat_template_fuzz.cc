// Fuzz target: chat-template parsing and rendering. Any bytes as a template must parse or fail
// with a Status; a template that parses is rendered against a conversation with tools and
// message fields, with and without the generation prompt, and must give text or a Status, never
// crash, hang or grow without bound (the render bounds end runaway loops and recursion).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mlaspec/tokenizer/chat_template.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mlaspec::tokenizer;
  const std::string_view source(reinterpret_cast<const char*>(data), size);
  auto tmpl = ChatTemplate::parse(source);
  if (!tmpl.ok()) return 0;
  tmpl->set_special_token("bos_token", "<s>");
  tmpl->set_special_token("eos_token", "</s>");
  const std::vector<ChatMessage> chat = {{"system", "Be brief."},
                                         {"user", "Hi {{ x }} 'q' \"d\" 世界 😀"},
                                         {"assistant", "<think>t</think>Hello"},
                                         {"user", ""}};
  (void)tmpl->render(chat, true);
  (void)tmpl->render(chat, false);
  (void)tmpl->render({}, true);
  static constexpr std::string_view kContext = R"({
    "messages": [
      {"role": "system", "content": "sys"},
      {"role": "user", "content": "call a tool"},
      {"role": "assistant", "content": null, "tool_calls": [
        {"type": "function", "function": {"name": "f", "arguments": {"a": 1, "b": [true, null, 2.5]}}}]},
      {"role": "tool", "content": "42", "name": "f"}],
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
    "add_generation_prompt": true, "documents": null})";
  (void)tmpl->render_json(kContext);
  return 0;
}
