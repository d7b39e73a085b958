#include "mlaspec/kvcache/batch_view.h"

#include <algorithm>
#include <cstring>

namespace mlaspec::kv {
namespace {
std::string str(int64_t v) {
  return std::to_string(v);
}
}  // namespace

Result<BatchView> BatchTableBuilder::build(const PageTables& tables,
                                           std::span<const RequestId> reqs,
                                           const BatchOptions& options) {
  const PageTablesSpec& spec = tables.spec();
  if (reqs.empty()) return invalid_argument(spec.name + ": batch view of an empty batch");
  if (options.window < 0)
    return invalid_argument(spec.name + ": window " + str(options.window) + " is negative");
  const int B = static_cast<int>(reqs.size());

  // Resolve slots and what each row needs.
  int first_slot = -1;
  bool consecutive = true;
  int max_used = 0;
  for (int b = 0; b < B; ++b) {
    Result<int> slot = tables.slot_of(reqs[static_cast<size_t>(b)]);
    if (!slot.ok()) return slot.status().with_context("batch row " + str(b));
    if (b == 0) first_slot = *slot;
    consecutive = consecutive && *slot == first_slot + b;
    int used = 0;
    if (options.window > 0) {
      Result<WindowView> w = tables.window(reqs[static_cast<size_t>(b)], options.window);
      if (!w.ok()) return w.status();
      used = static_cast<int>(w->pages.size());
    } else {
      used = static_cast<int>(tables.pages(reqs[static_cast<size_t>(b)]).size());
    }
    max_used = std::max(max_used, used);
  }

  int width = options.width;
  if (width < 0 && width != BatchOptions::kCompact) {
    return invalid_argument(spec.name + ": block-table width " + str(width) + " is invalid");
  }
  if (width == 0) {
    width = spec.max_pages_per_request;
  } else if (width == BatchOptions::kCompact) {
    width = std::max(max_used, 1);
  } else if (width < max_used) {
    return invalid_argument(spec.name + ": block-table width " + str(width) + " is below the " +
                            str(max_used) + " pages a request of the batch uses");
  }

  BatchView v;
  if (consecutive && options.window == 0 && width == spec.max_pages_per_request) {
    // Zero copy: rows first_slot.. of the tables' own memory. TensorView holds a non-const
    // pointer; the attention API only reads block_table / seq_lens.
    auto* table = const_cast<int32_t*>(tables.table_row(first_slot));
    auto* lens = const_cast<int32_t*>(tables.seq_lens_data() + first_slot);
    v.block_table = TensorView(table, DType::kI32, {B, width});
    v.seq_lens = TensorView(lens, DType::kI32, {B});
    v.zero_copy = true;
    return v;
  }

  // Gather into reused storage.
  table_.resize(static_cast<size_t>(B) * width);
  seq_lens_.resize(static_cast<size_t>(B));
  for (int b = 0; b < B; ++b) {
    const RequestId req = reqs[static_cast<size_t>(b)];
    std::span<const int32_t> pages;
    int32_t len = 0;
    if (options.window > 0) {
      WindowView w = tables.window(req, options.window).value();
      pages = w.pages;
      len = w.seq_len;
    } else {
      pages = tables.pages(req);
      len = static_cast<int32_t>(tables.length(req));
    }
    int32_t* dst = table_.data() + static_cast<size_t>(b) * width;
    std::copy(pages.begin(), pages.end(), dst);
    std::fill(dst + pages.size(), dst + width, -1);
    seq_lens_[static_cast<size_t>(b)] = len;
  }
  v.block_table = TensorView(table_.data(), DType::kI32, {B, width});
  v.seq_lens = TensorView(seq_lens_.data(), DType::kI32, {B});
  v.zero_copy = false;
  return v;
}

Result<DeviceBatchTables> DeviceBatchTables::create(int max_batch, int max_width, Device device) {
  if (max_batch < 1 || max_width < 1) {
    return invalid_argument("device batch tables: max_batch " + str(max_batch) + " and max_width " +
                            str(max_width) + " must be >= 1");
  }
  DeviceBatchTables d;
  d.max_batch_ = max_batch;
  d.max_width_ = max_width;
  Result<Buffer> t = Buffer::allocate(static_cast<size_t>(max_batch) * max_width * 4, device);
  if (!t.ok()) return t.status();
  Result<Buffer> s = Buffer::allocate(static_cast<size_t>(max_batch) * 4, device);
  if (!s.ok()) return s.status();
  d.table_ = std::move(t).value();
  d.seq_lens_ = std::move(s).value();
  return d;
}

Result<BatchView> DeviceBatchTables::upload(const BatchView& host) {
  const int B = host.batch(), W = host.width();
  if (B < 1) return invalid_argument("device batch tables: empty batch view");
  if (host.block_table.device() != Device::kCPU || host.seq_lens.device() != Device::kCPU) {
    return invalid_argument("device batch tables: upload needs host views");
  }
  if (B > max_batch_ || W > max_width_) {
    return resource_exhausted("device batch tables: batch " + str(B) + " x width " + str(W) +
                              " exceeds the mirror's " + str(max_batch_) + " x " + str(max_width_));
  }
  if (!host.block_table.is_contiguous() || !host.seq_lens.is_contiguous()) {
    return invalid_argument("device batch tables: host views must be contiguous");
  }
  MLASPEC_RETURN_IF_ERROR(
      table_.copy_from_host(host.block_table.data(), static_cast<size_t>(B) * W * 4));
  MLASPEC_RETURN_IF_ERROR(
      seq_lens_.copy_from_host(host.seq_lens.data(), static_cast<size_t>(B) * 4));
  BatchView v;
  v.block_table = TensorView(table_.data(), DType::kI32, {B, W}, table_.device());
  v.seq_lens = TensorView(seq_lens_.data(), DType::kI32, {B}, seq_lens_.device());
  v.zero_copy = false;
  return v;
}

void set_batch_tables(attn::VerifyArgs& args, const BatchView& host_view,
                      const BatchView* device_view) {
  if (device_view != nullptr) {
    args.block_table = device_view->block_table;
    args.seq_lens = device_view->seq_lens;
    args.block_table_host = host_view.block_table;
    args.seq_lens_host = host_view.seq_lens;
  } else {
    args.block_table = host_view.block_table;
    args.seq_lens = host_view.seq_lens;
    args.block_table_host = TensorView();
    args.seq_lens_host = TensorView();
  }
}

}  // namespace mlaspec::kv
