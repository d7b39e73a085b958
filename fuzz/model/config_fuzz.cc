// Fuzz target: config.json text. Parsing returns a config or a Status for any input; an accepted
// config describes itself and yields a finite softmax scale.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "mlaspec/model/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mlaspec::model;
  auto c = parse_model_config({reinterpret_cast<const char*>(data), size}, "fuzz/config.json");
  if (!c.ok()) return 0;
  if (!std::isfinite(c->softmax_scale())) __builtin_trap();
  (void)c->describe();
  return 0;
}
