// Option parsing shared by several subcommands.
#include <CLI/CLI.hpp>

#include "mlaspec/core/status.h"
#include "tools/commands.h"

namespace mlaspec::tools {

std::vector<DType> kv_dtypes_option(const std::string& kv) {
  if (kv == "bf16") return {DType::kBF16};
  if (kv == "fp8") return {DType::kFP8E4M3};
  if (kv == "fp8tile" || kv == "fp8_tile") return {DType::kFP8Tile};
  if (kv == "both") return {DType::kBF16, DType::kFP8E4M3};
  throw Error(invalid_argument("--kv " + kv + " is not bf16, fp8, fp8tile or both"));
}

void add_verify_width_option(CLI::App& cmd, std::string* value) {
  cmd.add_option("--verify-width", *value,
                 "With --draft dspark: fixed (verify every draft) or adaptive (per request and "
                 "step, the widths with the most expected tokens per verify cost from the "
                 "confidences and the batch; docs/dspark.md)")
      ->check(CLI::IsMember({"fixed", "adaptive"}))
      ->capture_default_str();
}

spec::VerifyWidthPolicy::Mode verify_width_mode(const std::string& value) {
  return value == "adaptive" ? spec::VerifyWidthPolicy::Mode::kAdaptive
                             : spec::VerifyWidthPolicy::Mode::kFixed;
}

}  // namespace mlaspec::tools
