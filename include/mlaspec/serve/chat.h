// Chat prompts: messages rendered with the model's chat_template (tokenizer_config.json) into
// the text the model was trained on, with the generation prompt appended.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "mlaspec/core/status.h"
#include "mlaspec/serve/api.h"

namespace mlaspec::serve {

class ChatFormatter {
 public:
  // A template that cannot be loaded or rendered is an error here (at server start), never a
  // wrong prompt later: a probe conversation is rendered once.
  static Result<ChatFormatter> load(const std::string& model_dir);
  Result<std::string> render(const std::vector<Message>& messages) const;

  struct Impl;

 private:
  std::shared_ptr<const Impl> impl_;
};

}  // namespace mlaspec::serve
