#include "mlaspec/core/dtype.h"

namespace mlaspec {

bool parse_dtype(std::string_view text, DType* out) {
  if (text == "bf16")
    *out = DType::kBF16;
  else if (text == "fp8" || text == "fp8_e4m3" || text == "e4m3")
    *out = DType::kFP8E4M3;
  else if (text == "fp8_tile" || text == "fp8tile")
    *out = DType::kFP8Tile;
  else if (text == "f32" || text == "fp32")
    *out = DType::kF32;
  else if (text == "i32" || text == "int32")
    *out = DType::kI32;
  else
    return false;
  return true;
}

}  // namespace mlaspec
