// cuda_fold and cuda_rowwise: validation, planning and launch around the shared verify kernel.
//
// run() is CUDA-graph capturable after prepare(): planning reads only the host copies of
// block_table / seq_lens, the plan travels in the kernel parameters, and the partial workspace is
// allocated up front (it grows inside run() only when the stream is not being captured).
#include <cuda.h>  // CUtensorMap and its enums only; the encoder comes through the runtime
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "launch.h"
#include "mlaspec/attention/backend.h"
#include "plan.h"
#include "traits.h"

namespace mlaspec::attn {
namespace cuda {
namespace {

Status cuda_status(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return Status::Ok();
  return internal_error(std::string(what) + ": " + cudaGetErrorString(err));
}

// Raises the shared-memory limit of every instantiation once per process (not a stream
// operation, but kept out of run() so a first call inside a capture is clean).
Status init_kernels_once() {
  static std::once_flag flag;
  static cudaError_t err = cudaSuccess;
  std::call_once(flag, [] {
    const cudaError_t errs[] = {
        init_verify_kernel<uint16_t, 16>(), init_verify_kernel<uint16_t, 32>(),
        init_verify_kernel<uint16_t, 64>(), init_verify_kernel<uint8_t, 16>(),
        init_verify_kernel<uint8_t, 32>(),  init_verify_kernel<uint8_t, 64>()};
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

// The bf16 pool as a 2D tensor [num_pages * page_size rows, 576 columns]; one box = 64 columns
// (128 B, the swizzle width) x one page of rows, 128B-swizzled as the kernel's wgmma expects.
Status encode_kv_tensor_map(const TensorView& pages, unsigned char (&out)[128]) {
  static_assert(sizeof(CUtensorMap) == 128);
  EncodeTiledFn fn = encode_tiled_fn();
  if (fn == nullptr) return internal_error("cuTensorMapEncodeTiled is not available from the driver");
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(kHeadDimQK),
                              static_cast<cuuint64_t>(pages.size(0) * pages.size(1))};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(kHeadDimQK) * 2};
  const cuuint32_t box[2] = {64, static_cast<cuuint32_t>(pages.size(1))};
  const cuuint32_t elem_strides[2] = {1, 1};
  CUtensorMap map;
  const CUresult r = fn(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, pages.data(), dims, strides,
                        box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                        CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    return internal_error("cuTensorMapEncodeTiled failed (" + std::to_string(static_cast<int>(r)) +
                          ") for KV pages " + pages.describe());
  }
  std::memcpy(out, &map, sizeof map);
  return Status::Ok();
}

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

// What the kernels assume beyond the contract checks of validate_verify_args.
Status check_layout(const VerifyArgs& a) {
  for (int d = 0; d < 3; ++d) {
    if (a.q.stride(d) % 8 != 0 || a.out.stride(d) % 8 != 0) {
      return unsupported("q and out rows must start 16-byte aligned (strides multiples of 8 "
                         "elements); got q " + a.q.describe() + ", out " + a.out.describe());
    }
  }
  if (!aligned16(a.q.data()) || !aligned16(a.out.data()) || !aligned16(a.kv.pages.data())) {
    return unsupported("q, out and the KV pages must be 16-byte aligned");
  }
  const TensorView& pg = a.kv.pages;
  if (pg.stride(2) != 1 || pg.stride(1) != kHeadDimQK || pg.stride(0) != pg.size(1) * kHeadDimQK) {
    return unsupported("KV pages must be contiguous [num_pages, page_size, 576]; got " +
                       pg.describe());
  }
  if (a.block_table.stride(1) != 1 || a.seq_lens.stride(0) != 1) {
    return unsupported("block_table rows and seq_lens must be contiguous");
  }
  return Status::Ok();
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
    const VerifyShape shape = shape_of(args);
    MLASPEC_RETURN_IF_ERROR(can_serve(caps(), shape));
    MLASPEC_RETURN_IF_ERROR(check_layout(args));
    MLASPEC_RETURN_IF_ERROR(init_device());

    const int batch = shape.batch, q_len = shape.q_len, heads = shape.num_heads;
    const int rows = q_len * heads;
    VerifyParams p = {};
    // Fold geometry: row tiles of one split share each KV tile through a cluster; balance them
    // over as few clusters of at most kMaxCluster CTAs as possible. Rowwise runs the same plan.
    const int fold_tiles = (rows + 63) / 64;
    const int groups = (fold_tiles + kMaxCluster - 1) / kMaxCluster;
    const int fold_cluster = (fold_tiles + groups - 1) / groups;
    const int concurrent = std::max(1, active_clusters_[fold_cluster] / groups);
    const TensorView& sl = args.seq_lens_host;
    MLASPEC_RETURN_IF_ERROR(make_split_plan(
        std::span<const int32_t>(sl.data_as<const int32_t>(), static_cast<size_t>(batch)), options,
        concurrent, &p.plan));

    auto stream = static_cast<cudaStream_t>(options.stream);
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    MLASPEC_RETURN_IF_ERROR(cuda_status(cudaStreamIsCapturing(stream, &capture),
                                        "cudaStreamIsCapturing"));
    MLASPEC_RETURN_IF_ERROR(
        ensure_workspace(partial_bytes(p.plan, rows), capture != cudaStreamCaptureStatusNone));

    if (shape.kv_dtype == DType::kBF16) {
      MLASPEC_RETURN_IF_ERROR(encode_kv_tensor_map(args.kv.pages, p.kv_tmap));
    }
    p.q = args.q.data();
    p.kv = args.kv.pages.data();
    p.block_table = args.block_table.data_as<const int32_t>();
    p.seq_lens = args.seq_lens.data_as<const int32_t>();
    p.out = args.out.data();
    p.lse = args.lse.data_as<float>();
    p.o_part = static_cast<float*>(workspace_);
    p.lse_part = p.o_part + static_cast<int64_t>(p.plan.total_part_slots) * rows * kHeadDimV;
    for (int d = 0; d < 3; ++d) {
      p.q_stride[d] = args.q.stride(d);
      p.out_stride[d] = args.out.stride(d);
      p.lse_stride[d] = args.lse.stride(d);
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
      p.row_tiles = fold_tiles;
      cluster = fold_cluster;
      grid_y = groups * cluster;
    }
    const float kv_scale = args.kv.kv_scale;
    p.score_scale_log2 = args.sm_scale * kv_scale * 1.4426950408889634f;
    p.out_scale = kv_scale;

    cudaError_t err = cudaErrorInvalidValue;
    const bool fp8 = shape.kv_dtype == DType::kFP8E4M3;
    switch (shape.page_size) {
      case 16:
        err = fp8 ? run_verify_kernel<uint8_t, 16>(p, cluster, grid_y, stream)
                  : run_verify_kernel<uint16_t, 16>(p, cluster, grid_y, stream);
        break;
      case 32:
        err = fp8 ? run_verify_kernel<uint8_t, 32>(p, cluster, grid_y, stream)
                  : run_verify_kernel<uint16_t, 32>(p, cluster, grid_y, stream);
        break;
      case 64:
        err = fp8 ? run_verify_kernel<uint8_t, 64>(p, cluster, grid_y, stream)
                  : run_verify_kernel<uint16_t, 64>(p, cluster, grid_y, stream);
        break;
      default:
        return internal_error("page size " + std::to_string(shape.page_size) +
                              " passed the guard but has no kernel instantiation");
    }
    MLASPEC_RETURN_IF_ERROR(cuda_status(err, "verify kernel launch"));
    if (p.plan.total_part_slots > 0) {
      CombineParams c = {};
      c.o_part = p.o_part;
      c.lse_part = p.lse_part;
      c.out = p.out;
      c.lse = p.lse;
      for (int d = 0; d < 3; ++d) {
        c.out_stride[d] = p.out_stride[d];
        c.lse_stride[d] = p.lse_stride[d];
      }
      c.batch = batch;
      c.q_len = q_len;
      c.num_heads = heads;
      c.rows = rows;
      c.plan = p.plan;
      MLASPEC_RETURN_IF_ERROR(cuda_status(run_combine(c, stream), "combine kernel launch"));
    }
    return Status::Ok();
  }

 private:
  Status init_device() {
    if (num_sms_ > 0) return Status::Ok();
    int dev = 0;
    MLASPEC_RETURN_IF_ERROR(cuda_status(cudaGetDevice(&dev), "cudaGetDevice"));
    MLASPEC_RETURN_IF_ERROR(cuda_status(
        cudaDeviceGetAttribute(&num_sms_, cudaDevAttrMultiProcessorCount, dev),
        "cudaDeviceGetAttribute(multiprocessor count)"));
    int major = 0;
    MLASPEC_RETURN_IF_ERROR(cuda_status(
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev),
        "cudaDeviceGetAttribute(compute capability)"));
    if (major != 9) {
      num_sms_ = 0;
      return unsupported(std::string(caps().name) + " needs a Hopper GPU (sm_90a); device " +
                         std::to_string(dev) + " has compute capability " +
                         std::to_string(major) + ".x");
    }
    MLASPEC_RETURN_IF_ERROR(init_kernels_once());
    // Clusters co-resident on this device, per cluster size (GPC packing decides, not SM count).
    for (int c = 1; c <= kMaxCluster; ++c) {
      int n = 0;
      MLASPEC_RETURN_IF_ERROR(cuda_status(max_active_clusters<uint16_t, 64>(c, &n),
                                          "cudaOccupancyMaxActiveClusters"));
      active_clusters_[c] = std::max(n, 1);
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
#define MLASPEC_VERIFY_MAX_CLUSTER 2
#endif
  // Largest fold cluster (up to 8, the portable limit). Bigger clusters read the KV from HBM
  // fewer times but couple more CTAs through each stage's empty barrier and pack worse into GPCs:
  // measured on the H200 (docs/perf/NOTES.md), a cap of 2 beats 8 by up to 2.4x at H = 128,
  // q_len = 8 and ties elsewhere. Row tiles beyond the cap re-read the KV (mostly from L2).
  static constexpr int kMaxCluster = MLASPEC_VERIFY_MAX_CLUSTER;
  static_assert(kMaxCluster >= 1 && kMaxCluster <= 8);
  bool rowwise_;
  int num_sms_ = 0;
  int active_clusters_[kMaxCluster + 1] = {};
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
};

}  // namespace
}  // namespace cuda

Result<std::unique_ptr<Backend>> make_cuda_fold_backend() {
  return std::unique_ptr<Backend>(std::make_unique<cuda::CudaVerifyBackend>(false));
}

Result<std::unique_ptr<Backend>> make_cuda_rowwise_backend() {
  return std::unique_ptr<Backend>(std::make_unique<cuda::CudaVerifyBackend>(true));
}

}  // namespace mlaspec::attn
