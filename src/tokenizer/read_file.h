// A whole file as bytes, or not_found naming it (tokenizer.json, tokenizer_config.json,
// chat_template.jinja).
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "mlaspec/core/status.h"

namespace mlaspec::tokenizer {

inline Result<std::string> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found("cannot open " + path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace mlaspec::tokenizer
