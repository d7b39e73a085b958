// Option parsing shared by several subcommands.
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

}  // namespace mlaspec::tools
