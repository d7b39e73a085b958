#include "mlaspec/kvcache/pool.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "mlaspec/core/fp8_tile.h"

namespace mlaspec::kv {
namespace {

bool is_kv_dtype(DType t) {
  return t == DType::kBF16 || t == DType::kFP8E4M3 || t == DType::kFP8Tile;
}

Status validate_spec(const KvPoolSpec& s) {
  const std::string& n = s.name;
  if (s.layout.kind == KvLayout::Kind::kGQA && (s.layout.kv_heads < 1 || s.layout.head_dim < 1)) {
    return invalid_argument(n + ": gqa layout needs kv_heads >= 1 and head_dim >= 1, got " +
                            s.layout.to_string());
  }
  if (s.num_layers < 1)
    return invalid_argument(n + ": num_layers " + std::to_string(s.num_layers) +
                            " is below the minimum 1");
  if (s.num_pages < 1)
    return invalid_argument(n + ": num_pages " + std::to_string(s.num_pages) +
                            " is below the minimum 1");
  if (s.page_size < 1)
    return invalid_argument(n + ": page_size " + std::to_string(s.page_size) +
                            " is below the minimum 1");
  if (!is_kv_dtype(s.dtype)) {
    return invalid_argument(n + ": pool dtype " + std::string(dtype_name(s.dtype)) +
                            " is not a KV dtype (bf16, fp8_e4m3 or fp8_tile)");
  }
  if (s.dtype == DType::kFP8Tile && s.layout.kind != KvLayout::Kind::kMLA) {
    return invalid_argument(n + ": fp8_tile is an MLA row format (512 latent + 64 rope); layout " +
                            s.layout.to_string() + " is not mla(576)");
  }
  if (!s.layer_scales.empty() && static_cast<int>(s.layer_scales.size()) != s.num_layers) {
    return invalid_argument(n + ": " + std::to_string(s.layer_scales.size()) +
                            " layer scales given for " + std::to_string(s.num_layers) + " layers");
  }
  // Slots are int32 (the writer's slot ids); element offsets of one layer must fit int64 easily.
  const int64_t slots = int64_t{s.num_pages} * s.page_size;
  if (slots > std::numeric_limits<int32_t>::max()) {
    return invalid_argument(n + ": num_pages * page_size = " + std::to_string(slots) +
                            " slots exceeds the int32 limit " +
                            std::to_string(std::numeric_limits<int32_t>::max()));
  }
  return Status::Ok();
}

Status check_scale(const std::string& name, DType dtype, int layer, float scale) {
  if (dtype == DType::kBF16 || dtype == DType::kFP8Tile) {
    if (scale != 1.0f) {
      return invalid_argument(name + ": layer " + std::to_string(layer) + " scale " +
                              std::to_string(scale) + " must be 1 for a " +
                              std::string(dtype_name(dtype)) + " pool" +
                              (dtype == DType::kFP8Tile ? " (its scales are in the rows)" : ""));
    }
    return Status::Ok();
  }
  if (!std::isfinite(scale) || !(scale > 0.0f)) {
    return invalid_argument(name + ": layer " + std::to_string(layer) + " fp8 scale " +
                            std::to_string(scale) + " must be finite and > 0");
  }
  return Status::Ok();
}

}  // namespace

std::string KvLayout::to_string() const {
  if (kind == Kind::kMLA) return "mla(" + std::to_string(row_elems()) + ")";
  return "gqa(kv_heads=" + std::to_string(kv_heads) + ",head_dim=" + std::to_string(head_dim) + ")";
}

int64_t kv_row_bytes(const KvLayout& layout, DType dtype) {
  if (dtype == DType::kFP8Tile) return kFp8TileRowBytes;
  return layout.row_elems() * dtype_size(dtype);
}

int64_t kv_bytes_per_token(const KvLayout& layout, int num_layers, DType dtype) {
  return int64_t{num_layers} * kv_row_bytes(layout, dtype);
}

Result<KvPool> KvPool::create(KvPoolSpec spec) {
  MLASPEC_RETURN_IF_ERROR(validate_spec(spec));
  std::vector<float> scales = spec.layer_scales;
  if (scales.empty()) scales.assign(static_cast<size_t>(spec.num_layers), 1.0f);
  for (int l = 0; l < spec.num_layers; ++l) {
    MLASPEC_RETURN_IF_ERROR(check_scale(spec.name, spec.dtype, l, scales[static_cast<size_t>(l)]));
  }
  KvPool pool;
  pool.spec_ = std::move(spec);
  pool.scales_ = std::move(scales);
  const int64_t total = pool.layer_bytes() * pool.spec_.num_layers;
  Result<Buffer> buf = Buffer::allocate(static_cast<size_t>(total), pool.spec_.device);
  if (!buf.ok()) {
    return resource_exhausted(pool.spec_.name + ": cannot allocate " + std::to_string(total) +
                              " bytes on " + std::string(device_name(pool.spec_.device)) + " (" +
                              buf.status().message() + ")");
  }
  pool.buffer_ = std::move(buf).value();
  if (pool.spec_.zero_fill) MLASPEC_RETURN_IF_ERROR(pool.buffer_.fill_bytes(0));
  return pool;
}

int64_t KvPool::bytes_per_token() const {
  return kv_bytes_per_token(spec_.layout, spec_.num_layers, spec_.dtype);
}

int64_t KvPool::row_bytes() const {
  return kv_row_bytes(spec_.layout, spec_.dtype);
}

int64_t KvPool::layer_bytes() const {
  return num_slots() * row_bytes();
}

Status KvPool::set_layer_scale(int layer, float scale) {
  if (layer < 0 || layer >= spec_.num_layers) {
    return out_of_range(spec_.name + ": layer " + std::to_string(layer) + " is outside [0, " +
                        std::to_string(spec_.num_layers) + ")");
  }
  MLASPEC_RETURN_IF_ERROR(check_scale(spec_.name, spec_.dtype, layer, scale));
  scales_[static_cast<size_t>(layer)] = scale;
  return Status::Ok();
}

TensorView KvPool::layer_tensor(int layer) const {
  if (layer < 0 || layer >= spec_.num_layers) {
    throw Error(out_of_range(spec_.name + ": layer " + std::to_string(layer) + " is outside [0, " +
                             std::to_string(spec_.num_layers) + ")"));
  }
  auto* base = static_cast<uint8_t*>(buffer_.data()) + layer_bytes() * layer;
  return TensorView(base, spec_.dtype,
                    {spec_.num_pages, spec_.page_size, row_bytes() / dtype_size(spec_.dtype)},
                    buffer_.device());
}

attn::KvCacheView KvPool::layer_view(int layer) const {
  if (spec_.layout.kind != KvLayout::Kind::kMLA) {
    throw Error(invalid_argument(spec_.name + ": layer_view needs an MLA pool, this one is " +
                                 spec_.layout.to_string()));
  }
  attn::KvCacheView v;
  v.pages = layer_tensor(layer);
  v.kv_scale = scales_[static_cast<size_t>(layer)];
  return v;
}

TensorView KvPool::k_view(int layer) const {
  if (spec_.layout.kind != KvLayout::Kind::kGQA) {
    throw Error(invalid_argument(spec_.name + ": k_view needs a GQA pool, this one is " +
                                 spec_.layout.to_string()));
  }
  const TensorView t = layer_tensor(layer);
  const int64_t r = row_elems(), hd = spec_.layout.head_dim;
  return TensorView(t.data(), spec_.dtype,
                    {spec_.num_pages, spec_.page_size, spec_.layout.kv_heads, hd},
                    {spec_.page_size * r, r, hd, 1}, buffer_.device());
}

TensorView KvPool::v_view(int layer) const {
  if (spec_.layout.kind != KvLayout::Kind::kGQA) {
    throw Error(invalid_argument(spec_.name + ": v_view needs a GQA pool, this one is " +
                                 spec_.layout.to_string()));
  }
  const TensorView t = layer_tensor(layer);
  const int64_t r = row_elems(), hd = spec_.layout.head_dim;
  const int64_t v_off = int64_t{spec_.layout.kv_heads} * hd * dtype_size(spec_.dtype);
  return TensorView(static_cast<uint8_t*>(t.data()) + v_off, spec_.dtype,
                    {spec_.num_pages, spec_.page_size, spec_.layout.kv_heads, hd},
                    {spec_.page_size * r, r, hd, 1}, buffer_.device());
}

std::string KvPool::describe() const {
  std::ostringstream os;
  os << spec_.name << ": " << spec_.layout.to_string() << " " << dtype_name(spec_.dtype) << " "
     << device_name(device()) << ", " << spec_.num_layers << " layers x " << spec_.num_pages
     << " pages x " << spec_.page_size << " tokens, " << bytes() << " bytes";
  return os.str();
}

}  // namespace mlaspec::kv
