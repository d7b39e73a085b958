#include "mlaspec/kvcache/writer.h"

#include "mlaspec/core/fp8_tile.h"
#include "write_params.h"

namespace mlaspec::kv {
namespace detail {

void write_rows_host(const KvWriteParams& p) {
  for (int64_t i = 0; i < p.n; ++i) {
    const int32_t slot = p.slots[i];
    if (slot < 0 || slot >= p.num_slots) continue;
    const uint16_t* src = p.rows + i * p.row_stride;
    if (p.fp8_tile) {
      encode_fp8_tile_row(src,
                          static_cast<uint8_t*>(p.layer_base) + int64_t{slot} * kFp8TileRowBytes);
    } else if (p.fp8) {
      uint8_t* dst = static_cast<uint8_t*>(p.layer_base) + int64_t{slot} * p.row_elems;
      for (int64_t e = 0; e < p.row_elems; ++e) dst[e] = encode_fp8_kv_value(src[e], p.scale);
    } else {
      uint16_t* dst = static_cast<uint16_t*>(p.layer_base) + int64_t{slot} * p.row_elems;
      for (int64_t e = 0; e < p.row_elems; ++e) dst[e] = src[e];
    }
  }
}

}  // namespace detail

namespace {
std::string str(int64_t v) {
  return std::to_string(v);
}

Status check_slot_values(const KvPool& pool, const TensorView& slots) {
  const auto* s = slots.data_as<const int32_t>();
  for (int64_t i = 0; i < slots.size(0); ++i) {
    if (s[i] >= pool.num_slots()) {
      return out_of_range(pool.name() + ": write_rows slot " + str(s[i]) + " (row " + str(i) +
                          ") is outside the pool's " + str(pool.num_slots()) + " slots (" +
                          str(pool.num_pages()) + " pages of " + str(pool.page_size()) + ")");
    }
  }
  return Status::Ok();
}
}  // namespace

Status write_rows(KvPool& pool, int layer, TensorView slots, TensorView rows,
                  const WriteOptions& options) {
  const std::string ctx = pool.name() + ": write_rows";
  if (layer < 0 || layer >= pool.num_layers()) {
    return out_of_range(ctx + " layer " + str(layer) + " is outside [0, " + str(pool.num_layers()) +
                        ")");
  }
  // An empty batch is a no-op (its views may have no storage at all).
  if (slots.ndim() == 1 && slots.size(0) == 0 && rows.ndim() == 2 && rows.size(0) == 0) {
    return Status::Ok();
  }
  MLASPEC_RETURN_IF_ERROR(
      slots.expect("slots", DType::kI32, {-1}, pool.device()).with_context(ctx));
  const int64_t n = slots.size(0);
  MLASPEC_RETURN_IF_ERROR(
      rows.expect("rows", DType::kBF16, {n, pool.row_elems()}, pool.device()).with_context(ctx));
  if (n > 1 && slots.stride(0) != 1) return invalid_argument(ctx + ": slots must be contiguous");
  if (n == 0) return Status::Ok();
  if (pool.device() == Device::kCPU) {
    MLASPEC_RETURN_IF_ERROR(check_slot_values(pool, slots));
  } else if (!options.slots_host.empty()) {
    MLASPEC_RETURN_IF_ERROR(
        options.slots_host.expect("slots_host", DType::kI32, {n}, Device::kCPU).with_context(ctx));
    MLASPEC_RETURN_IF_ERROR(check_slot_values(pool, options.slots_host));
  }

  detail::KvWriteParams p;
  p.rows = rows.data_as<const uint16_t>();
  p.row_stride = n > 1 ? rows.stride(0) : pool.row_elems();
  p.slots = slots.data_as<const int32_t>();
  p.n = n;
  p.layer_base = pool.layer_tensor(layer).data();
  p.row_elems = pool.row_elems();
  p.num_slots = pool.num_slots();
  p.fp8 = pool.dtype() == DType::kFP8E4M3;
  p.fp8_tile = pool.dtype() == DType::kFP8Tile;
  p.scale = pool.layer_scale(layer);

  if (pool.device() == Device::kCPU) {
    detail::write_rows_host(p);
    return Status::Ok();
  }
#if defined(MLASPEC_WITH_CUDA)
  return detail::run_kv_write_rows(p, options.stream).with_context(ctx);
#else
  return unsupported(ctx + ": the pool is on cuda but this build has no CUDA support");
#endif
}

}  // namespace mlaspec::kv
