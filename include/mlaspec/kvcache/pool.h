// KvPool: the paged KV storage of one model — all its layers, one dtype, one page size.
//
// Memory layout (one allocation, host or CUDA):  [num_layers][num_pages][page_size][row_elems]
// A page id names the same token slots in every layer, so one page table per request serves all
// layers of the pool. A "slot" is page_id * page_size + offset_in_page (a flat token index).
//
// Row layouts:
//   MLA (absorbed):  576 values per token per layer (512 latent + 64 rope); K = all 576, V = the
//                    first 512. layer_view(l) is the attn::KvCacheView the verify op reads.
//   GQA:             K then V in one row: [kv_heads * head_dim of K | kv_heads * head_dim of V].
//                    k_view(l) / v_view(l) are strided [num_pages, page_size, kv_heads, head_dim].
// Dtypes: bf16 (scale fixed at 1), fp8_e4m3 with one float scale per layer (value = code *
// scale), or fp8_tile (MLA only): 656-byte rows of 512 e4m3 latent values with one f32 scale per
// 128 of them, stored in the row, and the 64 rope values in bf16 (core/fp8_tile.h); its layer
// scales are fixed at 1. Writes go through write_rows() (kvcache/writer.h), which quantizes bf16
// rows on write.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mlaspec/attention/verify.h"
#include "mlaspec/core/dtype.h"
#include "mlaspec/core/status.h"
#include "mlaspec/core/tensor.h"

namespace mlaspec::kv {

struct KvLayout {
  enum class Kind : uint8_t { kMLA, kGQA };
  Kind kind = Kind::kMLA;
  int kv_heads = 1;    // GQA only
  int head_dim = 576;  // GQA: per head; MLA: 576

  static constexpr KvLayout mla() { return KvLayout{Kind::kMLA, 1, attn::kHeadDimQK}; }
  static constexpr KvLayout gqa(int kv_heads, int head_dim) {
    return KvLayout{Kind::kGQA, kv_heads, head_dim};
  }
  // Values per token per layer: 576 for MLA, 2 * kv_heads * head_dim for GQA (K and V).
  constexpr int64_t row_elems() const {
    return kind == Kind::kMLA ? attn::kHeadDimQK : 2 * int64_t{kv_heads} * head_dim;
  }
  std::string to_string() const;  // "mla(576)" / "gqa(kv_heads=8,head_dim=128)"
};

// Bytes of one token's row in one layer: row_elems * dtype_size, or 656 for fp8_tile.
int64_t kv_row_bytes(const KvLayout& layout, DType dtype);
// Bytes one token occupies in a pool: num_layers * kv_row_bytes.
int64_t kv_bytes_per_token(const KvLayout& layout, int num_layers, DType dtype);

struct KvPoolSpec {
  std::string name = "kv";  // appears in errors and logs ("target", "draft")
  KvLayout layout = KvLayout::mla();
  int num_layers = 1;
  int num_pages = 1;
  int page_size = 64;
  DType dtype = DType::kBF16;  // kBF16, kFP8E4M3 or kFP8Tile (MLA only)
  Device device = Device::kCPU;
  // Per-layer fp8 scale (value = code * scale); empty = 1 for every layer. Must be 1 for bf16 and
  // fp8_tile.
  std::vector<float> layer_scales;
  bool zero_fill = true;  // fill the pool with zero bytes at creation
};

class KvPool {
 public:
  // Validates the spec and allocates; kResourceExhausted if the allocation fails.
  static Result<KvPool> create(KvPoolSpec spec);

  KvPool(KvPool&&) noexcept = default;
  KvPool& operator=(KvPool&&) noexcept = default;

  const KvPoolSpec& spec() const { return spec_; }
  const std::string& name() const { return spec_.name; }
  DType dtype() const { return spec_.dtype; }
  Device device() const { return buffer_.device(); }
  int num_layers() const { return spec_.num_layers; }
  int num_pages() const { return spec_.num_pages; }
  int page_size() const { return spec_.page_size; }
  int64_t num_slots() const { return int64_t{spec_.num_pages} * spec_.page_size; }
  int64_t row_elems() const { return spec_.layout.row_elems(); }  // values (576 for MLA)
  int64_t row_bytes() const;        // bytes of one row: row_elems * dtype_size, or 656 for fp8_tile
  int64_t bytes_per_token() const;  // all layers
  int64_t layer_bytes() const;      // one layer: num_pages * page_size * row_bytes
  size_t bytes() const { return buffer_.bytes(); }

  float layer_scale(int layer) const { return scales_.at(static_cast<size_t>(layer)); }
  // Sets layer `layer`'s fp8 scale (finite, > 0). Rows already written keep their codes, so set
  // scales before writing (calibration). For bf16 pools only 1 is accepted.
  Status set_layer_scale(int layer, float scale);

  // One layer as [num_pages, page_size, row_elems] in the pool's dtype ([.., .., 656] bytes for
  // fp8_tile). Throws Error if `layer` is out of range.
  TensorView layer_tensor(int layer) const;
  // MLA pools: the verify op's KV view for one layer (pages + kv_scale). Throws Error for a GQA
  // pool or a bad layer.
  attn::KvCacheView layer_view(int layer) const;
  // GQA pools: strided [num_pages, page_size, kv_heads, head_dim] views of K and V. Throws Error
  // for an MLA pool or a bad layer.
  TensorView k_view(int layer) const;
  TensorView v_view(int layer) const;

  // Raw access for tests and the writer.
  void* data() const { return buffer_.data(); }
  const Buffer& buffer() const { return buffer_; }
  Buffer& buffer() { return buffer_; }

  std::string describe() const;  // "target: mla(576) fp8_e4m3 cuda, 61 layers x 4096 pages x 64"

 private:
  KvPool() = default;
  KvPoolSpec spec_;
  std::vector<float> scales_;
  Buffer buffer_;
};

}  // namespace mlaspec::kv
