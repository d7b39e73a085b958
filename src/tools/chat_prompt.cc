#include "tools/chat_prompt.h"

#include <filesystem>
#include <vector>

#include "mlaspec/tokenizer/chat_template.h"
#include "tools/commands.h"

namespace mlaspec::tools {

std::string chat_prompt(const std::string& model_dir, const std::string& text) {
  // A tokenizer.json path names its directory (tokenize --tokenizer takes either).
  const std::filesystem::path dir = std::filesystem::is_regular_file(model_dir)
                                        ? std::filesystem::path(model_dir).parent_path()
                                        : std::filesystem::path(model_dir);
  Result<tokenizer::ChatTemplate> tmpl = tokenizer::ChatTemplate::load(dir);
  if (!tmpl.ok()) throw InputError(tmpl.status().with_context("--chat"));
  const std::vector<tokenizer::ChatMessage> chat = {{"user", text}};
  Result<std::string> prompt = tmpl->render(chat, /*add_generation_prompt=*/true);
  if (!prompt.ok()) throw InputError(prompt.status().with_context("--chat"));
  return std::move(*prompt);
}

}  // namespace mlaspec::tools
