// Fuzz target: a safetensors file's bytes. The parser must return a Status for any input, and
// every tensor it accepts must lie inside the input (converting it reads every byte).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "mlaspec/model/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mlaspec::model;
  auto f = SafetensorsFile::parse({data, size}, "fuzz.safetensors");
  if (!f.ok()) return 0;
  std::vector<float> out;
  for (const TensorInfo& t : f->tensors()) {
    if (t.bytes.data() < data || t.bytes.data() + t.bytes.size() > data + size) __builtin_trap();
    if (!st_dtype_is_float_weight(t.dtype) || t.numel > (1 << 20)) continue;
    out.resize(static_cast<size_t>(t.numel));
    (void)convert_to_f32(t, out);
  }
  return 0;
}
