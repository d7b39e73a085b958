// Fp8BlockGemm: cuBLASLt's block-scaled fp8 GEMM (fp8_gemm.h) and the weight scales' layout.
#include "fp8_gemm.h"

#include <cublasLt.h>

#include <cstdint>
#include <string>
#include <utility>

namespace mlaspec::model::gpu {
namespace {

std::string shape_name(int64_t T, int64_t N, int64_t K) {
  return "fp8 block GEMM T " + std::to_string(T) + ", N " + std::to_string(N) + ", K " +
         std::to_string(K);
}

std::string status_name(cublasStatus_t st) {
  return std::string(cublasLtGetStatusName(st)) + " (" + std::to_string(static_cast<int>(st)) + ")";
}

Status lt_ok(cublasStatus_t st, const std::string& what) {
  if (st == CUBLAS_STATUS_SUCCESS) return Status::Ok();
  return internal_error(what + ": " + status_name(st));
}

cublasLtHandle_t lt(void* h) {
  return static_cast<cublasLtHandle_t>(h);
}

}  // namespace

std::vector<float> fp8_weight_scales_for_cublaslt(const float* checkpoint, int64_t N, int64_t K) {
  const int64_t nb = fp8_blocks(N), kb = fp8_blocks(K), ld = fp8_weight_scale_ld(K);
  std::vector<float> out(static_cast<size_t>(nb * ld), 0.0f);
  for (int64_t i = 0; i < nb; ++i) {
    for (int64_t j = 0; j < kb; ++j) out[static_cast<size_t>(i * ld + j)] = checkpoint[i * kb + j];
  }
  return out;
}

Result<Fp8Weight> make_fp8_weight(const uint8_t* codes, const float* checkpoint_scales, int64_t N,
                                  int64_t K) {
  if (codes == nullptr || checkpoint_scales == nullptr || N <= 0 || K <= 0) {
    return invalid_argument("make_fp8_weight: N " + std::to_string(N) + ", K " + std::to_string(K) +
                            " need N, K >= 1 and non-null codes and scales");
  }
  const std::vector<float> s = fp8_weight_scales_for_cublaslt(checkpoint_scales, N, K);
  Result<Buffer> b = Buffer::allocate(s.size() * sizeof(float), Device::kCUDA);
  if (!b.ok()) return b.status();
  MLASPEC_RETURN_IF_ERROR(b->copy_from_host(s.data(), s.size() * sizeof(float)));
  Fp8Weight w;
  w.codes = codes;
  w.scales = std::move(*b);
  w.N = N;
  w.K = K;
  return w;
}

struct Fp8BlockGemm::Plan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};

  ~Plan() {
    if (d != nullptr) cublasLtMatrixLayoutDestroy(d);
    if (b != nullptr) cublasLtMatrixLayoutDestroy(b);
    if (a != nullptr) cublasLtMatrixLayoutDestroy(a);
    if (op != nullptr) cublasLtMatmulDescDestroy(op);
  }
};

Result<std::unique_ptr<Fp8BlockGemm>> Fp8BlockGemm::create(size_t workspace_bytes) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    cudaGetLastError();
    return unsupported("fp8 block GEMM: no CUDA device is visible");
  }
  std::unique_ptr<Fp8BlockGemm> g(new Fp8BlockGemm());
  cublasLtHandle_t h = nullptr;
  MLASPEC_RETURN_IF_ERROR(lt_ok(cublasLtCreate(&h), "cublasLtCreate"));
  g->handle_ = h;
  Result<Buffer> ws = Buffer::allocate(workspace_bytes, Device::kCUDA);
  if (!ws.ok()) return ws.status();
  g->workspace_ = std::move(*ws);
  return g;
}

Fp8BlockGemm::~Fp8BlockGemm() {
  plans_.clear();
  if (handle_ != nullptr) cublasLtDestroy(lt(handle_));
}

std::string Fp8BlockGemm::describe() const {
  int dev = 0;
  cudaDeviceProp p{};
  std::string gpu = "?";
  if (cudaGetDevice(&dev) == cudaSuccess && cudaGetDeviceProperties(&p, dev) == cudaSuccess) {
    gpu = "sm_" + std::to_string(p.major) + std::to_string(p.minor) + " (" + p.name + ")";
  }
  return "cuBLASLt " + std::to_string(cublasLtGetVersion()) + " on " + gpu;
}

Result<Fp8BlockGemm::Plan*> Fp8BlockGemm::plan(int64_t T, int64_t N, int64_t K) {
  const auto key = std::make_tuple(T, N, K);
  if (auto it = plans_.find(key); it != plans_.end()) return it->second.get();
  const std::string who = shape_name(T, N, K);
  auto p = std::make_unique<Plan>();
  MLASPEC_RETURN_IF_ERROR(
      lt_ok(cublasLtMatmulDescCreate(&p->op, CUBLAS_COMPUTE_32F, CUDA_R_32F), who + ": desc"));
  const cublasOperation_t op_t = CUBLAS_OP_T, op_n = CUBLAS_OP_N;
  const int32_t a_mode = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
  const int32_t b_mode = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
  // The heuristic refuses block scale modes without scale pointers; any device address serves
  // for planning, run() sets the real ones.
  const void* placeholder = workspace_.data();
  const std::pair<cublasLtMatmulDescAttributes_t, std::pair<const void*, size_t>> attrs[] = {
      {CUBLASLT_MATMUL_DESC_TRANSA, {&op_t, sizeof op_t}},
      {CUBLASLT_MATMUL_DESC_TRANSB, {&op_n, sizeof op_n}},
      {CUBLASLT_MATMUL_DESC_A_SCALE_MODE, {&a_mode, sizeof a_mode}},
      {CUBLASLT_MATMUL_DESC_B_SCALE_MODE, {&b_mode, sizeof b_mode}},
      {CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, {&placeholder, sizeof placeholder}},
      {CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, {&placeholder, sizeof placeholder}},
  };
  for (const auto& [attr, v] : attrs) {
    const cublasStatus_t st = cublasLtMatmulDescSetAttribute(p->op, attr, v.first, v.second);
    if (st != CUBLAS_STATUS_SUCCESS) {
      return unsupported(who + ": cuBLASLt refuses matmul attribute " +
                         std::to_string(static_cast<int>(attr)) + ": " + status_name(st) +
                         " (the 128-block scale modes need cuBLAS >= 12.9)");
    }
  }
  const auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
  MLASPEC_RETURN_IF_ERROR(
      lt_ok(cublasLtMatrixLayoutCreate(&p->a, CUDA_R_8F_E4M3, u(K), u(N), K), who + ": layout A"));
  MLASPEC_RETURN_IF_ERROR(
      lt_ok(cublasLtMatrixLayoutCreate(&p->b, CUDA_R_8F_E4M3, u(K), u(T), K), who + ": layout B"));
  MLASPEC_RETURN_IF_ERROR(
      lt_ok(cublasLtMatrixLayoutCreate(&p->d, CUDA_R_16BF, u(N), u(T), N), who + ": layout D"));

  cublasLtMatmulPreference_t pref = nullptr;
  MLASPEC_RETURN_IF_ERROR(lt_ok(cublasLtMatmulPreferenceCreate(&pref), who + ": preference"));
  const uint64_t ws = workspace_.bytes();
  const Status set_ws = lt_ok(cublasLtMatmulPreferenceSetAttribute(
                                  pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
                              who + ": workspace preference");
  if (!set_ws.ok()) {
    cublasLtMatmulPreferenceDestroy(pref);
    return set_ws;
  }
  cublasLtMatmulHeuristicResult_t result{};
  int returned = 0;
  const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(lt(handle_), p->op, p->a, p->b, p->d,
                                                           p->d, pref, 1, &result, &returned);
  cublasLtMatmulPreferenceDestroy(pref);
  if (st != CUBLAS_STATUS_SUCCESS || returned == 0) {
    // What we know of cuBLASLt's limits for this GEMM: sm_90 only (not sm_100+), cuBLAS >= 12.9,
    // fp8 rows 16-byte aligned (K % 16 == 0) and 16-byte aligned bf16 output rows (N % 8 == 0);
    // the GPU test's odd shapes measure which others it serves.
    return unsupported(
        who + ": cuBLASLt has no algorithm (cublasLtMatmulAlgoGetHeuristic: " + status_name(st) +
        ", " + std::to_string(returned) + " results) on " + describe() +
        "; its block-scaled fp8 GEMM needs sm_90, cuBLAS >= 12.9, K % 16 == 0 "
        "and N % 8 == 0 at least");
  }
  p->algo = result.algo;
  Plan* raw = p.get();
  plans_.emplace(key, std::move(p));
  return raw;
}

Status Fp8BlockGemm::run(const uint8_t* x_codes, const float* x_scales, int64_t T,
                         const Fp8Weight& w, uint16_t* y, cudaStream_t stream) {
  if (T <= 0 || w.N <= 0 || w.K <= 0 || x_codes == nullptr || x_scales == nullptr ||
      w.codes == nullptr || w.scales.data() == nullptr || y == nullptr) {
    return invalid_argument(shape_name(T, w.N, w.K) +
                            ": needs T, N, K >= 1 and non-null operands and scales");
  }
  if (T > INT32_MAX || w.N > INT32_MAX || w.K > INT32_MAX) {
    return invalid_argument(shape_name(T, w.N, w.K) + ": dimensions must fit in int32");
  }
  Result<Plan*> p = plan(T, w.N, w.K);
  if (!p.ok()) return p.status();
  // Per call only the scale pointers change (the plan holds the rest); messages are formatted
  // on failure only.
  const void* a_scale = w.scales.data();
  const void* b_scale = x_scales;
  cublasStatus_t st = cublasLtMatmulDescSetAttribute((*p)->op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                                                     &a_scale, sizeof a_scale);
  if (st == CUBLAS_STATUS_SUCCESS) {
    st = cublasLtMatmulDescSetAttribute((*p)->op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &b_scale,
                                        sizeof b_scale);
  }
  if (st != CUBLAS_STATUS_SUCCESS) return lt_ok(st, shape_name(T, w.N, w.K) + ": scale pointers");
  const float alpha = 1.0f, beta = 0.0f;
  st = cublasLtMatmul(lt(handle_), (*p)->op, &alpha, w.codes, (*p)->a, x_codes, (*p)->b, &beta, y,
                      (*p)->d, y, (*p)->d, &(*p)->algo, workspace_.data(), workspace_.bytes(),
                      stream);
  if (st != CUBLAS_STATUS_SUCCESS) {
    return unsupported(shape_name(T, w.N, w.K) + ": cublasLtMatmul refused: " + status_name(st) +
                       " on " + describe());
  }
  return Status::Ok();
}

}  // namespace mlaspec::model::gpu
