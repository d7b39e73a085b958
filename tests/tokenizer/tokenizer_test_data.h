// Where the committed tokenizer files and goldens live (tests/data/tokenizers), found from the
// environment (MLASPEC_SOURCE_DIR), this file's path, or the working directory upwards.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace mlaspec::testing {

inline std::filesystem::path tokenizer_data_dir() {
  namespace fs = std::filesystem;
  const fs::path rel = fs::path("tests") / "data" / "tokenizers";
  if (const char* env = std::getenv("MLASPEC_SOURCE_DIR")) {
    if (fs::is_directory(fs::path(env) / rel)) return fs::path(env) / rel;
  }
  const fs::path here = fs::path(__FILE__).parent_path().parent_path().parent_path();
  if (here.is_absolute() && fs::is_directory(here / rel)) return here / rel;
  for (fs::path p = fs::current_path(); !p.empty(); p = p.parent_path()) {
    if (fs::is_directory(p / rel)) return p / rel;
    if (p == p.parent_path()) break;
  }
  return {};
}

inline std::vector<std::string> tokenizer_names() {
  std::vector<std::string> names;
  const auto dir = tokenizer_data_dir();
  if (dir.empty()) return names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.is_directory()) names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string from_hex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

}  // namespace mlaspec::testing
