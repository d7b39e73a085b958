// cuda_fold and cuda_rowwise: validation, planning and launch around the shared verify kernel.
//
// run() is CUDA-graph capturable after prepare(): planning reads only the host copies of
// block_table / seq_lens, the plan travels in the kernel parameters, and the partial workspace is
// allocated up front (it grows inside run() only when the stream is not being captured).
#include <cuda.h>  // CUtensorMap and its enums only; the encoder comes through the runtime
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>

#include "cuda_backend.h"
#include "launch.h"
#include "mlaspec/attention/backend.h"
#include "mlaspec/core/cuda_device.h"
#include "mlaspec/core/fp8_tile.h"
#include "mlaspec/core/log.h"
#include "plan.h"
#include "traits.h"

namespace mlaspec::attn {
namespace cuda {

namespace {
std::atomic<int> g_forced_group_size{0};
}  // namespace

void force_deterministic_group_size(int group_size) {
  g_forced_group_size.store(std::max(group_size, 0));
}

Status cuda_status(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return Status::Ok();
  return internal_error(std::string(what) + ": " + cudaGetErrorString(err));
}

namespace {

// Raises the shared-memory limit of every instantiation once per process (not a stream
// operation, but kept out of run() so a first call inside a capture is clean).
Status init_kernels_once() {
  static std::once_flag flag;
  static cudaError_t err = cudaSuccess;
  std::call_once(flag, [] {
    const cudaError_t errs[] = {
        init_verify_kernel<uint16_t, 16>(),  init_verify_kernel<uint16_t, 32>(),
        init_verify_kernel<uint16_t, 64>(),  init_verify_kernel<uint8_t, 16>(),
        init_verify_kernel<uint8_t, 32>(),   init_verify_kernel<uint8_t, 64>(),
        init_verify_kernel<Fp8TileKv, 16>(), init_verify_kernel<Fp8TileKv, 32>(),
        init_verify_kernel<Fp8TileKv, 64>(), init_verify_kernel<Fp8MathKv, 16>(),
        init_verify_kernel<Fp8MathKv, 32>(), init_verify_kernel<Fp8MathKv, 64>()};
    for (cudaError_t e : errs) {
      if (e != cudaSuccess && err == cudaSuccess) err = e;
    }
  });
  return cuda_status(err, "cudaFuncSetAttribute(verify kernel smem)");
}

// cuTensorMapEncodeTiled through the runtime's driver entry point, so mlaspec does not link
// libcuda directly.
using EncodeTiledFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                   const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                   const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                   CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

EncodeTiledFn encode_tiled_fn() {
  static EncodeTiledFn fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault,
                                         &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess) {
      return static_cast<EncodeTiledFn>(nullptr);
    }
    return reinterpret_cast<EncodeTiledFn>(f);
  }();
  return fn;
}

// A 2D tensor map over `rows` rows of `cols` columns (default 576) from t's data, `row_bytes`
// apart, one box = `box_cols` (default 64) columns x `box_rows` rows. `what` and t's description
// name the tensor in an error; nothing is formatted on success (this runs on every call).
Status encode_rows_tensor_map(CUtensorMapDataType type, const TensorView& t, int64_t rows,
                              int64_t row_bytes, uint32_t box_rows, CUtensorMapSwizzle swizzle,
                              const char* what, unsigned char (&out)[128],
                              int64_t cols = kHeadDimQK, uint32_t box_cols = 64) {
  static_assert(sizeof(CUtensorMap) == 128);
  EncodeTiledFn fn = encode_tiled_fn();
  if (fn == nullptr)
    return internal_error("cuTensorMapEncodeTiled is not available from the driver");
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(row_bytes)};
  const cuuint32_t box[2] = {box_cols, box_rows};
  const cuuint32_t elem_strides[2] = {1, 1};
  CUtensorMap map{};  // every byte defined: replay_key compares them
  const CUresult r =
      fn(&map, type, 2, t.data(), dims, strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
         swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    return internal_error("cuTensorMapEncodeTiled failed (" + std::to_string(static_cast<int>(r)) +
                          ") for " + what + " " + t.describe());
  }
  std::memcpy(out, &map, sizeof map);
  return Status::Ok();
}

// The pool as a 2D tensor [num_pages * page_size rows, 576 columns]; one box = 64 columns x one
// page of rows. bf16: 128 B per box row, 128B-swizzled as the kernel's wgmma expects; fp8: 64 B
// of raw codes per box row, unswizzled (the kernel dequantises them into the swizzled layout).
// fp8_tile: three maps over the pool's bytes [num_pages * page_size rows, 656 columns], one page
// of rows per box: `out` 64 columns of codes (as fp8's), `scales` the 16 scale bytes (column 512,
// plain), `rope` the 128 rope bytes (column 528, 128B-swizzled as bf16's rope block).
// fp8 in fp8 math: the fp8 boxes 64B-swizzled, the layout e4m3 wgmma reads as its K-major operand.
Status encode_kv_tensor_map(const TensorView& pages, DType kv_dtype, bool fp8_math,
                            unsigned char (&out)[128], unsigned char (&scales)[128],
                            unsigned char (&rope)[128]) {
  const int64_t rows = pages.size(0) * pages.size(1);
  const auto box_rows = static_cast<uint32_t>(pages.size(1));
  if (kv_dtype == DType::kFP8Tile) {
    constexpr auto u8 = CU_TENSOR_MAP_DATA_TYPE_UINT8;
    constexpr int64_t w = kFp8TileRowBytes;
    MLASPEC_RETURN_IF_ERROR(encode_rows_tensor_map(u8, pages, rows, w, box_rows,
                                                   CU_TENSOR_MAP_SWIZZLE_NONE, "KV codes", out, w));
    MLASPEC_RETURN_IF_ERROR(encode_rows_tensor_map(u8, pages, rows, w, box_rows,
                                                   CU_TENSOR_MAP_SWIZZLE_NONE, "KV scales", scales,
                                                   w, 4 * kFp8TileBlocks));
    return encode_rows_tensor_map(u8, pages, rows, w, box_rows, CU_TENSOR_MAP_SWIZZLE_128B,
                                  "KV rope", rope, w, 2 * kFp8TileRope);
  }
  const bool fp8 = kv_dtype == DType::kFP8E4M3;
  const CUtensorMapSwizzle swizzle = !fp8       ? CU_TENSOR_MAP_SWIZZLE_128B
                                     : fp8_math ? CU_TENSOR_MAP_SWIZZLE_64B
                                                : CU_TENSOR_MAP_SWIZZLE_NONE;
  return encode_rows_tensor_map(
      fp8 ? CU_TENSOR_MAP_DATA_TYPE_UINT8 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, pages, rows,
      int64_t{kHeadDimQK} * (fp8 ? 1 : 2), box_rows, swizzle, "KV pages", out);
}

// Whether Q's B * q_len * H rows (576 bf16 each) are one evenly spaced sequence, so that a 2D
// tensor map can address them. The API edge (validate_verify_inputs) already holds each request's
// rows contiguous; only the request stride is free. Row indices must also fit the kernels' int
// coordinates. Any other Q keeps the kernels' plain loads.
bool q_rows_uniform(const TensorView& q) {
  const int64_t request = q.size(1) * q.size(2) * kHeadDimQK;
  if (q.size(0) * q.size(1) * q.size(2) > std::numeric_limits<int32_t>::max() - 64) return false;
  return q.stride(3) == 1 && q.stride(2) == kHeadDimQK && q.stride(1) == q.size(2) * kHeadDimQK &&
         (q.size(0) == 1 || q.stride(0) == request);
}

// Q as a 2D tensor [B * q_len * H rows, 576 columns], boxes of 64 columns x 64 rows, 128B-swizzled
// like the KV tiles (the layout the kernel's wgmma reads); rows past the last are zero-filled.
Status encode_q_tensor_map(const TensorView& q, unsigned char (&out)[128]) {
  return encode_rows_tensor_map(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, q,
                                q.size(0) * q.size(1) * q.size(2), q.stride(2) * 2, 64,
                                CU_TENSOR_MAP_SWIZZLE_128B, "Q", out);
}

bool aligned16(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

// What the kernels assume beyond the contract checks of validate_verify_args.
Status check_layout(const VerifyArgs& a) {
  // out is empty for DCP rank partials (they write only the partial workspace).
  const bool has_out = !a.out.empty();
  for (int d = 0; d < 3; ++d) {
    if (a.q.stride(d) % 8 != 0 || (has_out && a.out.stride(d) % 8 != 0)) {
      return unsupported(
          "q and out rows must start 16-byte aligned (strides multiples of 8 "
          "elements); got q " +
          a.q.describe() + ", out " + a.out.describe());
    }
  }
  if (!aligned16(a.q.data()) || (has_out && !aligned16(a.out.data())) ||
      !aligned16(a.kv.pages.data())) {
    return unsupported("q, out and the KV pages must be 16-byte aligned");
  }
  const TensorView& pg = a.kv.pages;
  const int64_t width = kv_row_width(pg.dtype());
  if (pg.stride(2) != 1 || pg.stride(1) != width || pg.stride(0) != pg.size(1) * width) {
    return unsupported("KV pages must be contiguous [num_pages, page_size, " +
                       std::to_string(width) + "]; got " + pg.describe());
  }
  if (a.block_table.stride(1) != 1 || a.seq_lens.stride(0) != 1) {
    return unsupported("block_table rows and seq_lens must be contiguous");
  }
  return Status::Ok();
}

// One (KV dtype, page size): the narrow kernel (no clusters; its grid has one CTA per row tile) or
// the 64-row one (fp8 math: always; it has no narrow kernel).
template <typename KvT, int PAGE>
cudaError_t launch_kernel(bool narrow, const VerifyParams& p, int cluster, int grid_y,
                          cudaStream_t stream) {
  if constexpr (std::is_same_v<KvT, Fp8MathKv>) {
    return narrow ? cudaErrorInvalidValue
                  : run_verify_kernel<KvT, PAGE>(p, cluster, grid_y, stream);
  } else {
    return narrow ? run_verify_narrow_kernel<KvT, PAGE>(p, grid_y, stream)
                  : run_verify_kernel<KvT, PAGE>(p, cluster, grid_y, stream);
  }
}
// One KV type at the call's page size (16, 32 or 64; the caller checked).
template <typename KvT>
cudaError_t launch_for_page(int page_size, bool narrow, const VerifyParams& p, int cluster,
                            int grid_y, cudaStream_t stream) {
  switch (page_size) {
    case 16:
      return launch_kernel<KvT, 16>(narrow, p, cluster, grid_y, stream);
    case 32:
      return launch_kernel<KvT, 32>(narrow, p, cluster, grid_y, stream);
    case 64:
      return launch_kernel<KvT, 64>(narrow, p, cluster, grid_y, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

class CudaVerifyBackend final : public Backend {
 public:
  explicit CudaVerifyBackend(bool rowwise) : rowwise_(rowwise) {}
  ~CudaVerifyBackend() override {
    if (workspace_ != nullptr) cudaFree(workspace_);
  }

  const BackendCaps& caps() const override { return rowwise_ ? kRowwiseCaps : kFoldCaps; }

  Status prepare(const VerifyShape& max_shape) override {
    MLASPEC_RETURN_IF_ERROR(init_device());
    return ensure_workspace(partial_bytes_bound(max_shape, num_sms_), /*capturing=*/false);
  }

  Status run(const VerifyArgs& args, const VerifyOptions& options) override {
    if (args.block_table_host.empty() || args.seq_lens_host.empty()) {
      return invalid_argument(std::string(caps().name) +
                              " needs block_table_host and seq_lens_host: split planning and "
                              "page-id validation run on the host");
    }
    MLASPEC_RETURN_IF_ERROR(validate_verify_args(args, Device::kCUDA));
    const VerifyShape shape = shape_of(args, options);
    MLASPEC_RETURN_IF_ERROR(can_serve(caps(), shape));
    if (args.ragged()) {
      // The whole call is valid and served (above): one uniform launch per run of equal q_len,
      // each a view of the call's rows, so no run can fail validation after another has written.
      return for_each_uniform_run(args, [&](const VerifyArgs& u) { return run(u, options); });
    }
    auto stream = static_cast<cudaStream_t>(options.stream);
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    MLASPEC_RETURN_IF_ERROR(
        cuda_status(cudaStreamIsCapturing(stream, &capture), "cudaStreamIsCapturing"));
    Call c;
    MLASPEC_RETURN_IF_ERROR(build_call(
        args, options, shape,
        capture == cudaStreamCaptureStatusNone ? Workspace::kGrow : Workspace::kMustFit, &c));
    MLASPEC_RETURN_IF_ERROR(submit(c, stream));
    if (!c.combine) return Status::Ok();
    CombineParams cp = {};
    cp.o_part = c.p.o_part;
    cp.lse_part = c.p.lse_part;
    cp.out = c.p.out;
    cp.lse = c.p.lse;
    for (int d = 0; d < 3; ++d) {
      cp.out_stride[d] = c.p.out_stride[d];
      cp.lse_stride[d] = c.p.lse_stride[d];
    }
    cp.batch = shape.batch;
    cp.q_len = shape.q_len;
    cp.num_heads = shape.num_heads;
    cp.rows = c.p.rows;
    cp.plan = c.p.plan;
    return cuda_status(run_combine(cp, stream), "combine kernel launch");
  }

  // What run() would launch, as bytes: the kernel's parameters (every byte of them set, padding
  // zeroed), the launch shape, the kernel and the combine's use. The combine's parameters follow
  // from the kernel's. Empty where run() would grow the split workspace first (a pointer that
  // is about to change) or the call is ragged.
  Result<std::string> replay_key(const VerifyArgs& args, const VerifyOptions& options) override {
    if (args.block_table_host.empty() || args.seq_lens_host.empty() || args.ragged()) {
      return std::string();
    }
    MLASPEC_RETURN_IF_ERROR(validate_verify_args(args, Device::kCUDA));
    const VerifyShape shape = shape_of(args, options);
    MLASPEC_RETURN_IF_ERROR(can_serve(caps(), shape));
    Call c;
    MLASPEC_RETURN_IF_ERROR(build_call(args, options, shape, Workspace::kKeyOnly, &c));
    if (!c.fits) return std::string();
    const int32_t tail[] = {c.cluster,
                            c.grid_y,
                            c.narrow ? 1 : 0,
                            c.combine ? 1 : 0,
                            static_cast<int32_t>(shape.kv_dtype),
                            shape.fp8_math ? 1 : 0,
                            static_cast<int32_t>(shape.page_size)};
    std::string key(reinterpret_cast<const char*>(&c.p), sizeof(c.p));
    key.append(reinterpret_cast<const char*>(tail), sizeof(tail));
    return key;
  }

  // DCP rank partials (attention/dcp.h): every world-th fixed chunk starting at `rank`, all
  // written as partials [B, cpr, rows] to o_part / lse_part; no combine.
  Status run_rank_partials(const VerifyArgs& args, int world, int rank, int chunk, int64_t cpr,
                           float* o_part, float* lse_part, cudaStream_t stream) {
    if (args.block_table_host.empty() || args.seq_lens_host.empty()) {
      return invalid_argument("DCP rank partials need block_table_host and seq_lens_host");
    }
    MLASPEC_RETURN_IF_ERROR(validate_verify_inputs(args, Device::kCUDA));
    // Rank partials sit at fixed chunk positions, as a deterministic call's splits do.
    VerifyOptions fixed_chunks;
    fixed_chunks.deterministic = true;
    const VerifyShape shape = shape_of(args, fixed_chunks);
    MLASPEC_RETURN_IF_ERROR(can_serve(caps(), shape));
    MLASPEC_RETURN_IF_ERROR(check_layout(args));
    MLASPEC_RETURN_IF_ERROR(init_device());
    if (chunk % kKvTile != 0 || chunk <= 0) {
      return invalid_argument("DCP chunk of " + std::to_string(chunk) +
                              " tokens is not a positive multiple of the kernel's KV tile " +
                              std::to_string(kKvTile));
    }
    if (cpr * shape.batch > (int64_t{1} << 30)) {
      return invalid_argument("DCP plan of " + std::to_string(cpr) + " chunks per rank x batch " +
                              std::to_string(shape.batch) + " is too large");
    }
    Call c;
    c.p.plan.chunk = chunk;
    c.p.plan.split_step = world;
    c.p.plan.split_first = rank;
    c.p.plan.partials_only = 1;
    for (int b = 0; b <= shape.batch; ++b) {
      c.p.plan.split_begin[b] = static_cast<int32_t>(b * cpr);
    }
    c.p.plan.total_splits = static_cast<int32_t>(shape.batch * cpr);
    c.p.plan.max_splits = static_cast<int32_t>(cpr);
    set_split_groups(&c.p.plan, shape.batch, 1);  // slots: b * cpr + k (partials_only)
    c.p.o_part = o_part;
    c.p.lse_part = lse_part;
    MLASPEC_RETURN_IF_ERROR(
        fill_launch(args, shape, geometry(shape.q_len * shape.num_heads, shape.kv_dtype), &c));
    return submit(c, stream);
  }

 private:
  // bf16 shares each KV tile between two row tiles (kMaxCluster); fp8 does not: each CTA of a
  // split copies its own raw codes (the second read mostly hits L2, and fp8 moves half the bytes),
  // so no CTA waits for its partner's release of a stage before the next copy. Measured on an
  // H200 without clusters: fp8 fold 4-5% faster on every compute row, bf16 up to 5% slower.
  // fp8_tile too (its kernels load each CTA's rope themselves, as fp8's raw codes).
  static int max_cluster(DType kv) {
    return kv == DType::kFP8E4M3 || kv == DType::kFP8Tile ? std::min(kMaxCluster, kMaxClusterFp8)
                                                          : kMaxCluster;
  }
  // Fold geometry: plan.h's fold_geometry (clusters of kPreferredCluster, or another size up to
  // max_cluster(kv) where that runs strictly more splits at once). Rowwise runs the same plan.
  FoldGeometry geometry(int rows, DType kv) const {
    return fold_geometry(rows, max_cluster(kv), kPreferredCluster,
                         std::span<const int>(active_clusters_));
  }

  // One uniform call's launch: the kernel's parameters, its launch shape and kernel, and whether
  // the combine follows. Every byte of `p` is set (padding zeroed) so that replay_key() can
  // compare them.
  struct Call {
    VerifyParams p;
    VerifyShape shape;
    int cluster = 1, grid_y = 0;
    bool narrow = false, combine = false;
    bool fits = true;  // the split workspace holds the plan's partials (Workspace::kKeyOnly)
    Call() {
      std::memset(static_cast<void*>(&p), 0, sizeof(p));
      p.plan = SplitPlan{};
    }
  };
  // How build_call treats the split workspace: grow it to the plan's need (an eager run), require
  // that it fits already (a run being captured: an error otherwise), or neither (replay_key: a
  // workspace too small leaves Call::fits false).
  enum class Workspace { kGrow, kMustFit, kKeyOnly };

  // The plan, the workspace pointers and the launch of a validated uniform call.
  Status build_call(const VerifyArgs& args, const VerifyOptions& options, const VerifyShape& shape,
                    Workspace ws, Call* c) {
    MLASPEC_RETURN_IF_ERROR(check_layout(args));
    MLASPEC_RETURN_IF_ERROR(init_device());
    const int rows = shape.q_len * shape.num_heads;
    const FoldGeometry g = geometry(rows, shape.kv_dtype);
    const TensorView& sl = args.seq_lens_host;
    MLASPEC_RETURN_IF_ERROR(make_split_plan(
        std::span<const int32_t>(sl.data_as<const int32_t>(), static_cast<size_t>(shape.batch)),
        shape.num_heads, options, g.concurrent, &c->p.plan));
    if (ws != Workspace::kKeyOnly && log_level() <= LogLevel::kDebug) {
      log_debug(std::string(caps().name) + ": plan: " + std::to_string(c->p.plan.total_splits) +
                " splits of " + std::to_string(c->p.plan.chunk) + " tokens (at most " +
                std::to_string(c->p.plan.max_splits) + " per request) in " +
                std::to_string(c->p.plan.total_groups) + " groups; " +
                std::to_string(g.concurrent) + " concurrent, cluster " + std::to_string(g.cluster));
    }
    const int64_t need = partial_bytes(c->p.plan, rows);
    if (ws == Workspace::kKeyOnly) {
      if (need > static_cast<int64_t>(workspace_bytes_)) {
        c->fits = false;
        return Status::Ok();
      }
    } else {
      MLASPEC_RETURN_IF_ERROR(ensure_workspace(need, ws == Workspace::kMustFit));
    }
    c->p.o_part = static_cast<float*>(workspace_);
    c->p.lse_part =
        c->p.o_part + static_cast<int64_t>(c->p.plan.total_part_slots) * rows * kHeadDimV;
    MLASPEC_RETURN_IF_ERROR(fill_launch(args, shape, g, c));
    for (int b = 0; b < shape.batch; ++b) c->combine = c->combine || combine_needed(c->p.plan, b);
    return Status::Ok();
  }

  // Fills everything but the plan and the partial pointers into c->p, and c's launch shape.
  Status fill_launch(const VerifyArgs& args, const VerifyShape& shape, const FoldGeometry& g,
                     Call* c) {
    VerifyParams& p = c->p;
    c->shape = shape;
    const int batch = shape.batch, q_len = shape.q_len, heads = shape.num_heads;
    const int rows = q_len * heads;
    MLASPEC_RETURN_IF_ERROR(encode_kv_tensor_map(args.kv.pages, shape.kv_dtype, shape.fp8_math,
                                                 p.kv_tmap, p.kv_scale_tmap, p.kv_rope_tmap));
    // The 64-row bf16 kernel copies Q with TMA where its rows are uniformly spaced.
    p.q_tma = 0;
    if (shape.kv_dtype == DType::kBF16 && q_rows_uniform(args.q)) {
      MLASPEC_RETURN_IF_ERROR(encode_q_tensor_map(args.q, p.q_tmap));
      p.q_tma = 1;
    }
    p.kv_pages = args.kv.pages.data();
    p.q = args.q.data();
    p.block_table = args.block_table.data_as<const int32_t>();
    p.seq_lens = args.seq_lens.data_as<const int32_t>();
    p.out = args.out.empty() ? nullptr : args.out.data();
    p.lse = args.lse.empty() ? nullptr : args.lse.data_as<float>();
    for (int d = 0; d < 3; ++d) {
      p.q_stride[d] = args.q.stride(d);
      p.out_stride[d] = args.out.empty() ? 0 : args.out.stride(d);
      p.lse_stride[d] = args.lse.empty() ? 0 : args.lse.stride(d);
    }
    p.bt_stride = args.block_table.stride(0);
    p.batch = batch;
    p.q_len = q_len;
    p.num_heads = heads;
    p.rows = rows;
    p.rowwise = rowwise_ ? 1 : 0;
    p.tiles_per_token = (heads + 63) / 64;
    int cluster = 1, grid_y;
    if (rowwise_) {
      p.row_tiles = q_len * p.tiles_per_token;
      grid_y = p.row_tiles;
    } else {
      p.row_tiles = g.tiles;
      cluster = g.cluster;
      grid_y = g.groups * cluster;
    }
    // Row tiles of at most kNarrowRows rows (decode and rowwise at H <= 16) take the narrow
    // kernel: a quarter of the tensor work and a streaming KV ring; bitwise the 64-row kernel's
    // arithmetic, so which kernel serves a call never changes a result. fp8 math runs the 64-row
    // kernel for every shape (both backends: fold == rowwise holds as for the other dtypes).
    const bool narrow = uses_narrow_kernel(rowwise_, q_len, heads, shape.fp8_math);
    // Deterministic mode's chunks are short and fixed: the 64-row kernel takes several
    // consecutive splits per CTA (SplitPlan::group_size) where that saves waves of prologues, and
    // with groups of whole merge blocks also folds them (set_split_groups), so that one partial
    // per block goes to the combine. The result is the same for every group size; DCP ranks
    // (split_step > 1) keep one split per CTA. The kernel needs a whole chunk to be an even
    // number of tile pairs (its barrier phases).
    if (shape.deterministic && !narrow && p.plan.split_step <= 1 && !p.plan.partials_only &&
        p.plan.chunk % (4 * kKvTile) == 0) {
      const int concurrent = std::max(1, active_clusters_[cluster] / (grid_y / cluster));
      const int forced = g_forced_group_size.load();
      set_split_groups(&p.plan, batch,
                       forced > 0
                           ? forced
                           : deterministic_group_size(p.plan, batch, concurrent, kMaxSplitGroup));
    }
    if (static_cast<int64_t>(p.plan.total_groups) * grid_y > std::numeric_limits<int32_t>::max()) {
      return unsupported("the verify grid (" + std::to_string(p.plan.total_groups) +
                         " split groups x " + std::to_string(grid_y) +
                         " row tiles) exceeds 2^31 - 1 CTAs");
    }
    const float kv_scale = args.kv.kv_scale;
    p.score_scale_log2 = args.sm_scale * kv_scale * 1.4426950408889634f;
    p.out_scale = kv_scale;

    if (shape.page_size != 16 && shape.page_size != 32 && shape.page_size != 64) {
      return internal_error("page size " + std::to_string(shape.page_size) +
                            " passed the guard but has no kernel instantiation");
    }
    c->cluster = cluster;
    c->grid_y = grid_y;
    c->narrow = narrow;
    return Status::Ok();
  }

  Status submit(const Call& c, cudaStream_t stream) const {
    const VerifyShape& shape = c.shape;
    const VerifyParams& p = c.p;
    const bool narrow = c.narrow;
    const int cluster = c.cluster, grid_y = c.grid_y;
    cudaError_t err = cudaErrorInvalidValue;
    switch (shape.kv_dtype) {
      case DType::kBF16:
        err = launch_for_page<uint16_t>(shape.page_size, narrow, p, cluster, grid_y, stream);
        break;
      case DType::kFP8E4M3:
        err = shape.fp8_math
                  ? launch_for_page<Fp8MathKv>(shape.page_size, narrow, p, cluster, grid_y, stream)
                  : launch_for_page<uint8_t>(shape.page_size, narrow, p, cluster, grid_y, stream);
        break;
      case DType::kFP8Tile:
        err = launch_for_page<Fp8TileKv>(shape.page_size, narrow, p, cluster, grid_y, stream);
        break;
      default:
        return internal_error("kv dtype " + std::string(dtype_name(shape.kv_dtype)) +
                              " passed the guard but has no kernel instantiation");
    }
    return cuda_status(err, "verify kernel launch");
  }

  Status init_device() {
    if (num_sms_ > 0) return Status::Ok();
    MLASPEC_RETURN_IF_ERROR(cuda_device_available());  // "no CUDA GPU found" on such a machine
    int dev = 0;
    MLASPEC_RETURN_IF_ERROR(cuda_status(cudaGetDevice(&dev), "cudaGetDevice"));
    MLASPEC_RETURN_IF_ERROR(
        cuda_status(cudaDeviceGetAttribute(&num_sms_, cudaDevAttrMultiProcessorCount, dev),
                    "cudaDeviceGetAttribute(multiprocessor count)"));
    int major = 0;
    MLASPEC_RETURN_IF_ERROR(
        cuda_status(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev),
                    "cudaDeviceGetAttribute(compute capability)"));
    if (major != 9) {
      num_sms_ = 0;
      return unsupported(std::string(caps().name) + " needs a Hopper GPU (sm_90a); device " +
                         std::to_string(dev) + " has compute capability " + std::to_string(major) +
                         ".x");
    }
    MLASPEC_RETURN_IF_ERROR(init_kernels_once());
    // Clusters co-resident on this device, per cluster size (GPC packing decides, not SM count).
    for (int c = 1; c <= kMaxCluster; ++c) {
      int n = 0;
      MLASPEC_RETURN_IF_ERROR(
          cuda_status(max_active_clusters<uint16_t, 64>(c, &n), "cudaOccupancyMaxActiveClusters"));
      active_clusters_[c] = std::max(n, 1);
    }
    if (log_level() <= LogLevel::kDebug) {
      // The split plan follows from these facts, and fold == rowwise bitwise needs the same plan
      // in both: MLASPEC_LOG=debug shows what each backend instance found.
      std::string m = std::string(caps().name) + ": device " + std::to_string(dev) + ", " +
                      std::to_string(num_sms_) + " SMs, co-resident clusters of 1.." +
                      std::to_string(kMaxCluster) + " CTAs:";
      for (int c = 1; c <= kMaxCluster; ++c) m += " " + std::to_string(active_clusters_[c]);
      log_debug(m);
    }
    return Status::Ok();
  }

  Status ensure_workspace(int64_t bytes, bool capturing) {
    if (bytes <= static_cast<int64_t>(workspace_bytes_)) return Status::Ok();
    if (capturing) {
      return resource_exhausted(std::string(caps().name) + " needs " + std::to_string(bytes) +
                                " bytes of split workspace but prepare() reserved " +
                                std::to_string(workspace_bytes_) +
                                "; call prepare() with the largest shape before capturing");
    }
    if (workspace_ != nullptr) {
      MLASPEC_RETURN_IF_ERROR(cuda_status(cudaFree(workspace_), "cudaFree(workspace)"));
      workspace_ = nullptr;
      workspace_bytes_ = 0;
    }
    MLASPEC_RETURN_IF_ERROR(
        cuda_status(cudaMalloc(&workspace_, static_cast<size_t>(bytes)), "cudaMalloc(workspace)"));
    workspace_bytes_ = static_cast<size_t>(bytes);
    return Status::Ok();
  }

#ifndef MLASPEC_VERIFY_MAX_CLUSTER
#define MLASPEC_VERIFY_MAX_CLUSTER 3
#endif
  // Largest fold cluster for bf16 (up to 8, the portable limit), and for fp8 (max_cluster).
  // Bigger clusters read the KV from HBM fewer times but couple more CTAs through each stage's
  // empty barrier and pack worse into GPCs: measured on an H200, a cap of 2 beats 8 by up to 2.4x
  // at H = 128, q_len = 8 and ties elsewhere, and beats 1 for bf16 but not for fp8. Row tiles
  // beyond the cap re-read the KV (mostly from L2).
  static constexpr int kMaxCluster = MLASPEC_VERIFY_MAX_CLUSTER;
  static_assert(kMaxCluster >= 1 && kMaxCluster <= 8);
  // The cluster the geometry prefers (2, the best cap above); up to kMaxCluster only where it
  // runs more splits.
  static constexpr int kPreferredCluster = 2;
  static constexpr int kMaxClusterFp8 = 1;
  // Most consecutive deterministic splits one CTA computes (deterministic_group_size).
  static constexpr int kMaxSplitGroup = 16;
  bool rowwise_;
  int num_sms_ = 0;
  int active_clusters_[kMaxCluster + 1] = {};
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
};

}  // namespace

Status run_dcp_rank_partials(const VerifyArgs& args, int world, int rank, int chunk, int64_t cpr,
                             float* o_part, float* lse_part, cudaStream_t stream) {
  // One fold backend per process serves every rank call (it holds no per-call state).
  static std::mutex mu;
  static CudaVerifyBackend* fold = new CudaVerifyBackend(false);
  std::lock_guard<std::mutex> lock(mu);
  return fold->run_rank_partials(args, world, rank, chunk, cpr, o_part, lse_part, stream);
}

}  // namespace cuda

Result<std::unique_ptr<Backend>> make_cuda_fold_backend() {
  return std::unique_ptr<Backend>(std::make_unique<cuda::CudaVerifyBackend>(false));
}

Result<std::unique_ptr<Backend>> make_cuda_rowwise_backend() {
  return std::unique_ptr<Backend>(std::make_unique<cuda::CudaVerifyBackend>(true));
}

}  // namespace mlaspec::attn
