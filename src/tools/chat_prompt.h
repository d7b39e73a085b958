// `--chat` of generate and tokenize: the prompt text as one user message, rendered with the
// model directory's chat template (tokenizer_config.json) and add_generation_prompt.
#pragma once

#include <string>

namespace mlaspec::tools {

// The rendered prompt. Encode it without the post-processor's special tokens: the template
// writes BOS itself (Hugging Face's apply_chat_template(tokenize=True) does the same). A model
// without a chat template, or one that cannot be parsed or rendered, throws InputError (exit 2).
// `model_dir` may also be a file in the directory (a tokenizer.json).
std::string chat_prompt(const std::string& model_dir, const std::string& text);

}  // namespace mlaspec::tools
