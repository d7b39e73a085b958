// Fuzz target: a drafter's config.json text (DFlash and DSpark). Parsing returns a config or a
// Status for any input, never crashes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "mlaspec/model/dflash.h"
#include "mlaspec/model/dspark.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mlaspec::model;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)parse_dflash_config(text, "fuzz/config.json");
  (void)parse_dspark_config(text, "fuzz/config.json");
  return 0;
}
