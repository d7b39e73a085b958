// SwiGLU MLPs and MoE on the GPU (the CPU runtime's mlp.cc / moe.cc). Routing: the router
// logits (f32: cuBLAS, or the row-invariant kernel in deterministic mode) go to the route kernel
// (cpu::route_token's rule, ties and groups broken as on the CPU) and the plan kernel
// (plan_moe_groups, ../gpu_plan.h) on the device. Then a gather of the routed rows (none on the
// GEMV path, whose gate_up pass reads them in place and applies the SwiGLU) and the experts'
// SwiGLU GEMMs: for calls of up to kGroupedMoeMaxTokens tokens (and always in deterministic mode)
// two grouped GEMMs over every touched expert, nothing coming back to the host (in default mode
// tensor cores from kGroupedTcMinTokens tokens, gemm_grouped_tc, and the grouped GEMV below that;
// the CUDA-core row-invariant kernel in deterministic mode); for longer chunks (default mode) the
// experts' row counts come back and the host makes one cuBLAS grouped GEMM for gate_up over every
// touched expert, one SwiGLU over every routed row, one grouped GEMM for down
// (cublasGemmGroupedBatchedEx: bf16 outputs, f32 accumulation; cuBLAS refuses bf16 x bf16 -> f32
// grouped), or with MLASPEC_CUDA_EXPERTS=per_expert a GEMM per touched expert with f32 outputs.
// Last, a combine that sums each token's experts in ascending expert order, then the shared
// experts.
#include <algorithm>
#include <string>
#include <vector>

#include "mlaspec/core/log.h"
#include "runtime_impl.h"

namespace mlaspec::model::gpu {

Status Runtime::mlp(const DMlp& m, const uint16_t* x, int64_t T, float* out) {
  return mlp_on(m, x, T, out, at<float>(gu_), at<uint16_t>(act_), stream_, blas_);
}

Status Runtime::mlp_on(const DMlp& m, const uint16_t* x, int64_t T, float* out, float* gu,
                       uint16_t* act, cudaStream_t stream, cublasHandle_t blas) {
  MLASPEC_RETURN_IF_ERROR(gpu::linear(blas, deterministic_, x, T, m.gate_up, gu, GemmType::kF32));
  MLASPEC_RETURN_IF_ERROR(silu_mul(gu, T, m.inter, act, stream));
  return gpu::linear(blas, deterministic_, act, T, m.down, out, GemmType::kF32);
}

Status Runtime::moe(int layer, int64_t T, MoeCombineArgs* deferred) {
  const DLayer& d = layers_[static_cast<size_t>(layer)];
  const int64_t hidden = c_.hidden_size;
  const int E = c_.n_routed_experts, k = c_.num_experts_per_tok;

  const PhaseEnd phase_end(phases_);
  // The shared experts first, on side_ beside everything below (the router, routing, the routed
  // experts; at decode those are small kernels that leave the GPU mostly idle), joined back before
  // the combine. Their inputs (hb_) are not written before the join; their outputs are their own.
  const bool overlap = shared_overlap_ && !phases_.on() && !d.shared.empty();
  const float* shared = d.shared.empty() ? nullptr : at<float>(shared_);
  if (overlap) {
    MLASPEC_RETURN_IF_ERROR(cuda_status(cudaEventRecord(fork_, stream_), "fork record"));
    MLASPEC_RETURN_IF_ERROR(cuda_status(cudaStreamWaitEvent(side_, fork_), "fork wait"));
    MLASPEC_RETURN_IF_ERROR(mlp_on(d.shared, at<uint16_t>(hb_), T, at<float>(shared_),
                                   at<float>(sgu_), at<uint16_t>(sact_), side_, blas_side_));
    MLASPEC_RETURN_IF_ERROR(cuda_status(cudaEventRecord(join_, side_), "join record"));
  }
  // The combine waits for them (a no-op without the side stream).
  const auto join = [&]() {
    return overlap ? cuda_status(cudaStreamWaitEvent(stream_, join_), "join wait") : Status::Ok();
  };
  phases_.begin_if_on("moe router");
  // Router in f32 (transformers computes it in f32), routing and its plan on the device.
  RowInvariantGemm rg;
  rg.x = hf_.data();
  rg.x_type = GemmType::kF32;
  rg.ldx = hidden;
  rg.w = d.router.data();
  rg.w_type = GemmType::kF32;
  rg.ldw = hidden;
  rg.y = router_logits_.data();
  rg.ldy = E;
  rg.T = T;
  rg.N = E;
  rg.K = hidden;
  MLASPEC_RETURN_IF_ERROR(gemm(rg));
  RouteArgs ra;
  ra.kind = c_.router;
  ra.E = E;
  ra.k = k;
  ra.n_group = std::max(1, c_.n_group);
  ra.topk_group = std::max(1, c_.topk_group);
  ra.norm_topk_prob = c_.norm_topk_prob;
  ra.routed_scaling_factor = static_cast<float>(c_.routed_scaling_factor);
  ra.bias = d.router_bias.size > 0 ? d.router_bias.ptr() : nullptr;
  const bool grouped = deterministic_ || T <= grouped_max_tokens_;
  MoePlanOut plan;
  plan.rows = at<int32_t>(gidx_);
  plan.expert_begin = at<int32_t>(begin_);
  plan.combine_row = at<int32_t>(cpos_);
  plan.combine_weight = at<float>(cw_);
  plan.row_of = at<int32_t>(row_of_);
  plan.touched = grouped ? at<int32_t>(touched_) : nullptr;
  if (fused_route_) {  // one launch for a few tokens (route_and_plan)
    MLASPEC_RETURN_IF_ERROR(route_and_plan(at<float>(router_logits_), T, ra, at<int32_t>(chosen_),
                                           at<float>(rweights_), plan, stream_));
  } else {
    MLASPEC_RETURN_IF_ERROR(route(at<float>(router_logits_), T, ra, at<int32_t>(chosen_),
                                  at<float>(rweights_), stream_));
    MLASPEC_RETURN_IF_ERROR(plan_moe(at<int32_t>(chosen_), at<float>(rweights_), T, k, E, plan.rows,
                                     plan.expert_begin, plan.combine_row, plan.combine_weight,
                                     plan.row_of, plan.touched, stream_));
  }
  // Serially (MLASPEC_CUDA_SHARED=serial, the phase timer): the shared experts now, so that on
  // the host-launched path the GPU runs them while the host waits for the counts below.
  phases_.begin_if_on("moe shared");
  if (!d.shared.empty() && !overlap) {
    MLASPEC_RETURN_IF_ERROR(mlp(d.shared, at<uint16_t>(hb_), T, at<float>(shared_)));
  }
  phases_.begin_if_on("moe experts");
  const int64_t N = T * k;  // routed rows: each token's k experts
  const int64_t inter = c_.moe_intermediate_size;
  // Default mode: tensor cores (row-invariant too, in another order) from kGroupedTcMinTokens
  // tokens. Below that, and at every size in deterministic mode, the grouped GEMV, bitwise the
  // row-invariant kernel's sums (the order every pass of a deterministic model shares) at
  // 1.4-2.7x its speed; the row-invariant kernel where K % 8 != 0. The GEMV's gate_up pass reads
  // the token rows in place and applies the SwiGLU (one launch for gather, GEMM and silu_mul).
  const bool tc = grouped && !deterministic_ && T >= grouped_tc_min_tokens_ &&
                  grouped_tc_fits(2 * inter, hidden) && grouped_tc_fits(hidden, inter);
  const bool gemv =
      grouped && !tc && grouped_gemv_fits(2 * inter, hidden) && grouped_gemv_fits(hidden, inter);
  const bool fused = gemv && fused_swiglu_;
  if (!fused) {
    MLASPEC_RETURN_IF_ERROR(
        gather_rows(at<uint16_t>(hb_), at<int32_t>(gidx_), N, hidden, at<uint16_t>(xs_), stream_));
  }
  if (grouped) {
    // Every touched expert at once, counts and pointers read on the device.
    GroupedGemm g;
    g.x = at<uint16_t>(xs_);
    g.w = static_cast<const uint16_t* const*>(d.expert_gate_up.data());
    g.begin = at<int32_t>(begin_);
    g.touched = at<int32_t>(touched_);
    g.y = gu_.data();
    g.max_rows = T;
    g.N = 2 * inter;
    g.K = hidden;
    g.k = k;
    g.experts = E;
    auto grouped_gemm = [&](const GroupedGemm& gg) {
      if (tc) return gemm_grouped_tc(gg, stream_);
      if (gemv) return gemm_grouped_gemv(gg, stream_);
      return gemm_grouped_row_invariant(gg, stream_);
    };
    if (fused) {
      g.x = at<uint16_t>(hb_);
      g.y = act_.data();
      g.y_type = GemmType::kBF16;
      MLASPEC_RETURN_IF_ERROR(gemm_grouped_gemv_swiglu(g, at<int32_t>(gidx_), stream_));
      g.y_type = GemmType::kF32;
    } else {
      MLASPEC_RETURN_IF_ERROR(grouped_gemm(g));
      MLASPEC_RETURN_IF_ERROR(silu_mul(at<float>(gu_), N, inter, at<uint16_t>(act_), stream_));
    }
    g.x = at<uint16_t>(act_);
    g.w = static_cast<const uint16_t* const*>(d.expert_down.data());
    g.y = ys_.data();
    g.N = hidden;
    g.K = inter;
    MLASPEC_RETURN_IF_ERROR(grouped_gemm(g));
  } else {
    // The expert GEMMs are launched from the host, which needs each expert's row count: the one
    // device -> host copy (and sync) of the layer, E + 1 int32.
    std::vector<int32_t> begin(static_cast<size_t>(E) + 1);
    MLASPEC_RETURN_IF_ERROR(
        cuda_status(cudaMemcpyAsync(begin.data(), begin_.data(), begin.size() * sizeof(int32_t),
                                    cudaMemcpyDeviceToHost, stream_),
                    "expert row counts download"));
    MLASPEC_RETURN_IF_ERROR(cuda_status(cudaStreamSynchronize(stream_), "expert row counts"));
    bool bf16_out = false;
    MLASPEC_RETURN_IF_ERROR(experts_long(d, begin, &bf16_out));
    if (bf16_out) {
      phases_.begin_if_on("moe combine");
      MLASPEC_RETURN_IF_ERROR(join());
      if (deferred != nullptr) {
        *deferred = {xs_.data(), true, at<int32_t>(cpos_), at<float>(cw_), k, shared};
        return Status::Ok();
      }
      return moe_combine(at<uint16_t>(xs_), at<int32_t>(cpos_), at<float>(cw_), k, shared, T,
                         hidden, at<float>(delta_), stream_);
    }
  }
  phases_.begin_if_on("moe combine");
  MLASPEC_RETURN_IF_ERROR(join());
  if (deferred != nullptr) {  // the norm after the layer combines (add_rms_norm_combine)
    *deferred = {ys_.data(), false, at<int32_t>(cpos_), at<float>(cw_), k, shared};
    return Status::Ok();
  }
  return moe_combine(at<float>(ys_), at<int32_t>(cpos_), at<float>(cw_), k, shared, T, hidden,
                     at<float>(delta_), stream_);
}

Status Runtime::experts_long(const DLayer& d, const std::vector<int32_t>& begin, bool* bf16_out) {
  const int64_t hidden = c_.hidden_size, inter = c_.moe_intermediate_size;
  const int E = c_.n_routed_experts;
  std::vector<int> touched;
  for (int e = 0; e < E; ++e) {
    if (begin[static_cast<size_t>(e) + 1] > begin[static_cast<size_t>(e)]) touched.push_back(e);
  }
  *bf16_out = false;
  if (grouped_cublas_ && !touched.empty()) {
    const Status st = experts_grouped(d, begin, touched);
    if (st.ok()) {
      *bf16_out = true;
      return Status::Ok();
    }
    grouped_cublas_ = false;
    log_warn("MoE experts of long passes: cuBLAS's grouped GEMM failed (" + st.message() +
             "); launching a GEMM per expert from now on");
    // The down call writes into xs_: gather the routed rows again before starting over.
    MLASPEC_RETURN_IF_ERROR(gather_rows(at<uint16_t>(hb_), at<int32_t>(gidx_),
                                        begin[static_cast<size_t>(E)], hidden, at<uint16_t>(xs_),
                                        stream_));
  }
  // gate_up per touched expert, one SwiGLU over every routed row, then down per touched expert:
  // 2 launches per expert where mlp() took 3 (the host launches are what this path waits on).
  for (int e : touched) {
    const int64_t b = begin[static_cast<size_t>(e)];
    const int64_t n = begin[static_cast<size_t>(e) + 1] - b;
    MLASPEC_RETURN_IF_ERROR(linear(at<uint16_t>(xs_, b * hidden), n,
                                   d.experts[static_cast<size_t>(e)].gate_up,
                                   at<float>(gu_, b * 2 * inter), GemmType::kF32));
  }
  MLASPEC_RETURN_IF_ERROR(
      silu_mul(at<float>(gu_), begin[static_cast<size_t>(E)], inter, at<uint16_t>(act_), stream_));
  for (int e : touched) {
    const int64_t b = begin[static_cast<size_t>(e)];
    const int64_t n = begin[static_cast<size_t>(e) + 1] - b;
    MLASPEC_RETURN_IF_ERROR(linear(at<uint16_t>(act_, b * inter), n,
                                   d.experts[static_cast<size_t>(e)].down,
                                   at<float>(ys_, b * hidden), GemmType::kF32));
  }
  return Status::Ok();
}

Status Runtime::experts_grouped(const DLayer& d, const std::vector<int32_t>& begin,
                                const std::vector<int>& touched) {
  const int64_t hidden = c_.hidden_size, inter = c_.moe_intermediate_size;
  const int E = c_.n_routed_experts;
  const int n = static_cast<int>(touched.size());
  // The device pointer arrays cuBLAS reads, for both GEMMs, in one upload: gate_up's A (the
  // experts' weights), B (their rows of xs_), C (bf16 [rows, 2 * inter] in gu_'s memory); down's
  // A, B (their rows of act_), C (bf16 [rows, hidden] in xs_'s memory, free once gate_up has read
  // it). The caller synchronized the stream to read `begin`, so the pinned staging is free.
  const size_t n_ptrs = static_cast<size_t>(6 * n);
  MLASPEC_RETURN_IF_ERROR(host_ptrs_.reserve(n_ptrs * sizeof(void*)));
  MLASPEC_RETURN_IF_ERROR(ensure(expert_ptrs_, n_ptrs * sizeof(void*)));
  const void** h = host_ptrs_.as<const void*>();
  std::vector<int> rows(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const int e = touched[static_cast<size_t>(i)];
    const int64_t b = begin[static_cast<size_t>(e)];
    rows[static_cast<size_t>(i)] =
        begin[static_cast<size_t>(e) + 1] - begin[static_cast<size_t>(e)];
    const DMlp& x = d.experts[static_cast<size_t>(e)];
    h[i] = x.gate_up.ptr();
    h[n + i] = at<uint16_t>(xs_, b * hidden);
    h[2 * n + i] = at<uint16_t>(gu_, b * 2 * inter);
    h[3 * n + i] = x.down.ptr();
    h[4 * n + i] = at<uint16_t>(act_, b * inter);
    h[5 * n + i] = at<uint16_t>(xs_, b * hidden);
  }
  MLASPEC_RETURN_IF_ERROR(
      cuda_status(cudaMemcpyAsync(expert_ptrs_.data(), h, n_ptrs * sizeof(void*),
                                  cudaMemcpyHostToDevice, stream_),
                  "expert pointers upload"));
  const void* const* dev = static_cast<const void* const*>(expert_ptrs_.data());
  // Per touched expert y[rows, N] = bf16(x[rows, K] @ W^T), f32 accumulation, as linear() runs
  // it in column-major terms (C[N x rows] = W^T[N x K] @ x^T[K x rows]), all in one call.
  const std::vector<cublasOperation_t> ta(static_cast<size_t>(n), CUBLAS_OP_T);
  const std::vector<cublasOperation_t> tb(static_cast<size_t>(n), CUBLAS_OP_N);
  const std::vector<int> one(static_cast<size_t>(n), 1);
  const std::vector<float> alpha(static_cast<size_t>(n), 1.0f), beta(static_cast<size_t>(n), 0.0f);
  auto grouped = [&](int64_t N, int64_t K, int base) {
    const std::vector<int> m(static_cast<size_t>(n), static_cast<int>(N));
    const std::vector<int> k(static_cast<size_t>(n), static_cast<int>(K));
    return cublas_status(
        cublasGemmGroupedBatchedEx(blas_, ta.data(), tb.data(), m.data(), rows.data(), k.data(),
                                   alpha.data(), dev + base * n, CUDA_R_16BF, k.data(),
                                   dev + (base + 1) * n, CUDA_R_16BF, k.data(), beta.data(),
                                   const_cast<void* const*>(dev + (base + 2) * n), CUDA_R_16BF,
                                   m.data(), n, one.data(), CUBLAS_COMPUTE_32F),
        "cublasGemmGroupedBatchedEx [" + str(N) + " x " + str(K) + "] x " + str(n) + " experts");
  };
  MLASPEC_RETURN_IF_ERROR(grouped(2 * inter, hidden, 0));
  MLASPEC_RETURN_IF_ERROR(silu_mul(at<uint16_t>(gu_), begin[static_cast<size_t>(E)], inter,
                                   at<uint16_t>(act_), stream_));
  return grouped(hidden, inter, 3);
}

}  // namespace mlaspec::model::gpu
