// Batch views: the int32 block_table [B, width] and seq_lens [B] the attention API takes, built
// from a PageTables for a list of requests.
//
// What is and is not copied:
//   * Zero copy: when the requests sit in consecutive slots s, s+1, ..., s+B-1 (in that order)
//     and the full row width is used, block_table is a view of rows s..s+B-1 of the PageTables'
//     own table and seq_lens a view of its seq_lens array: no byte is copied. Such a view is
//     live: it reflects later append/commit/free and stays valid as long as the PageTables does.
//   * Gather: otherwise (slots not consecutive, a compact width asked for, or a sliding window)
//     the builder copies each request's used page ids (pages_for(seq_len) entries) and its
//     seq_len into storage it owns, padding rows with -1. The storage is reused from call to call
//     (no allocation once it has grown to the largest batch); a view is valid until the next
//     build on the same builder.
//   * Device: DeviceBatchTables mirrors a host view into a device (or host) buffer sized once for
//     (max_batch, max_width): one synchronous copy of B*width + B int32 per step, no allocation,
//     stable device pointers (capturable shapes when the width is fixed).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "mlaspec/attention/verify.h"
#include "mlaspec/core/status.h"
#include "mlaspec/core/tensor.h"
#include "mlaspec/kvcache/page_table.h"

namespace mlaspec::kv {

struct BatchView {
  TensorView block_table;  // int32 [B, width]
  TensorView seq_lens;     // int32 [B]
  bool zero_copy = false;  // true: views into the PageTables' memory
  int batch() const { return block_table.empty() ? 0 : static_cast<int>(block_table.size(0)); }
  int width() const { return block_table.empty() ? 0 : static_cast<int>(block_table.size(1)); }
};

struct BatchOptions {
  // Block-table width. 0: the PageTables' max_pages_per_request (zero copy possible).
  // kCompact: the most pages any request of the batch uses (always a gather).
  // Any other value >= that: fixed width (a gather unless it equals max_pages_per_request).
  int width = 0;
  static constexpr int kCompact = -1;
  // Sliding window (drafters): > 0 restricts each request to PageTables::window(req, window);
  // always a gather.
  int64_t window = 0;
};

class BatchTableBuilder {
 public:
  // Views for `reqs` in that order. Errors: unknown request, empty batch, width too small.
  Result<BatchView> build(const PageTables& tables, std::span<const RequestId> reqs,
                          const BatchOptions& options = {});

 private:
  std::vector<int32_t> table_;
  std::vector<int32_t> seq_lens_;
};

// A device (or host) copy of batch views, sized once. `device` kCUDA needs a CUDA build.
class DeviceBatchTables {
 public:
  static Result<DeviceBatchTables> create(int max_batch, int max_width, Device device);

  // Copies `host` (host tensors) into the mirror and returns views of it shaped like `host`.
  // kResourceExhausted if host is larger than (max_batch, max_width).
  Result<BatchView> upload(const BatchView& host);

  int max_batch() const { return max_batch_; }
  int max_width() const { return max_width_; }

 private:
  DeviceBatchTables() = default;
  int max_batch_ = 0;
  int max_width_ = 0;
  Buffer table_;
  Buffer seq_lens_;
};

// Fills args.block_table / args.seq_lens (and, when `device_view` is given, the device views
// with the host views as block_table_host / seq_lens_host) from batch views.
void set_batch_tables(attn::VerifyArgs& args, const BatchView& host_view,
                      const BatchView* device_view = nullptr);

}  // namespace mlaspec::kv
