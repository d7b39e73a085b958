// SwiGLU MLPs and MoE on the GPU (the CPU runtime's mlp.cc / moe.cc). Routing: the router
// logits (f32: cuBLAS, or the row-invariant kernel in deterministic mode) go to the route kernel
// (cpu::route_token's rule, ties and groups broken as on the CPU) and the plan kernel
// (plan_moe_groups, ../gpu_plan.h) on the device. Then a gather of the routed rows and the experts'
// SwiGLU GEMMs: for calls of up to kGroupedMoeMaxTokens tokens (and always in deterministic mode)
// two grouped GEMMs over every touched expert, nothing coming back to the host (in default mode
// tensor cores from kGroupedTcMinTokens tokens, gemm_grouped_tc, and the grouped GEMV below that;
// the CUDA-core row-invariant kernel in deterministic mode); for longer chunks the experts' row
// counts come back and the host launches gate_up per touched expert, one SwiGLU over every routed
// row, then down per expert (cublasGemmGroupedBatchedEx, which would take each GEMM of every
// expert in one call, refuses bf16 x bf16 -> f32 on the H100's cuBLAS). Last, a combine that sums
// each token's experts in ascending expert order, then the shared experts.
#include <algorithm>
#include <vector>

#include "runtime_impl.h"

namespace mlaspec::model::gpu {

Status Runtime::mlp(const DMlp& m, const uint16_t* x, int64_t T, float* out) {
  MLASPEC_RETURN_IF_ERROR(linear(x, T, m.gate_up, at<float>(gu_), GemmType::kF32));
  MLASPEC_RETURN_IF_ERROR(silu_mul(at<float>(gu_), T, m.inter, at<uint16_t>(act_), stream_));
  return linear(at<uint16_t>(act_), T, m.down, out, GemmType::kF32);
}

Status Runtime::moe(int layer, int64_t T) {
  const DLayer& d = layers_[static_cast<size_t>(layer)];
  const int64_t hidden = c_.hidden_size;
  const int E = c_.n_routed_experts, k = c_.num_experts_per_tok;

  const PhaseEnd phase_end(phases_);
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
  MLASPEC_RETURN_IF_ERROR(
      route(at<float>(router_logits_), T, ra, at<int32_t>(chosen_), at<float>(rweights_), stream_));
  const bool grouped = deterministic_ || T <= grouped_max_tokens_;
  MLASPEC_RETURN_IF_ERROR(plan_moe(at<int32_t>(chosen_), at<float>(rweights_), T, k, E,
                                   at<int32_t>(gidx_), at<int32_t>(begin_), at<int32_t>(cpos_),
                                   at<float>(cw_), at<int32_t>(row_of_),
                                   grouped ? at<int32_t>(touched_) : nullptr, stream_));
  // The shared experts first: on the host-launched path the GPU runs them while the host waits
  // for the counts below.
  const float* shared = nullptr;
  phases_.begin_if_on("moe shared");
  if (!d.shared.empty()) {
    MLASPEC_RETURN_IF_ERROR(mlp(d.shared, at<uint16_t>(hb_), T, at<float>(shared_)));
    shared = at<float>(shared_);
  }
  phases_.begin_if_on("moe experts");
  const int64_t N = T * k;  // routed rows: each token's k experts
  MLASPEC_RETURN_IF_ERROR(
      gather_rows(at<uint16_t>(hb_), at<int32_t>(gidx_), N, hidden, at<uint16_t>(xs_), stream_));
  if (grouped) {
    // Every touched expert at once, counts and pointers read on the device.
    const int64_t inter = c_.moe_intermediate_size;
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
    // Default mode: tensor cores (row-invariant too, in another order) from
    // kGroupedTcMinTokens tokens. Below that, and at every size in deterministic mode, the
    // grouped GEMV, bitwise the row-invariant kernel's sums (the order every pass of a
    // deterministic model shares) at 1.4-2.7x its speed; the row-invariant kernel where K % 8 != 0.
    const bool tc = !deterministic_ && T >= grouped_tc_min_tokens_ &&
                    grouped_tc_fits(2 * inter, hidden) && grouped_tc_fits(hidden, inter);
    const bool gemv =
        !tc && grouped_gemv_fits(2 * inter, hidden) && grouped_gemv_fits(hidden, inter);
    auto grouped_gemm = [&](const GroupedGemm& gg) {
      if (tc) return gemm_grouped_tc(gg, stream_);
      if (gemv) return gemm_grouped_gemv(gg, stream_);
      return gemm_grouped_row_invariant(gg, stream_);
    };
    MLASPEC_RETURN_IF_ERROR(grouped_gemm(g));
    MLASPEC_RETURN_IF_ERROR(silu_mul(at<float>(gu_), N, inter, at<uint16_t>(act_), stream_));
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
    MLASPEC_RETURN_IF_ERROR(experts_long(d, begin));
  }
  phases_.begin_if_on("moe combine");
  return moe_combine(at<float>(ys_), at<int32_t>(cpos_), at<float>(cw_), k, shared, T, hidden,
                     at<float>(delta_), stream_);
}

Status Runtime::experts_long(const DLayer& d, const std::vector<int32_t>& begin) {
  const int64_t hidden = c_.hidden_size, inter = c_.moe_intermediate_size;
  const int E = c_.n_routed_experts;
  // gate_up per touched expert, one SwiGLU over every routed row, then down per touched expert:
  // 2 launches per expert where mlp() took 3 (the host launches are what this path waits on).
  // gemm(e, first row, rows) for each touched expert.
  auto per_expert = [&](const auto& gemm) {
    for (int e = 0; e < E; ++e) {
      const int64_t b = begin[static_cast<size_t>(e)];
      const int64_t n = begin[static_cast<size_t>(e) + 1] - b;
      if (n > 0) MLASPEC_RETURN_IF_ERROR(gemm(d.experts[static_cast<size_t>(e)], b, n));
    }
    return Status::Ok();
  };
  MLASPEC_RETURN_IF_ERROR(per_expert([&](const DMlp& x, int64_t b, int64_t n) {
    return linear(at<uint16_t>(xs_, b * hidden), n, x.gate_up, at<float>(gu_, b * 2 * inter),
                  GemmType::kF32);
  }));
  MLASPEC_RETURN_IF_ERROR(
      silu_mul(at<float>(gu_), begin[static_cast<size_t>(E)], inter, at<uint16_t>(act_), stream_));
  MLASPEC_RETURN_IF_ERROR(per_expert([&](const DMlp& x, int64_t b, int64_t n) {
    return linear(at<uint16_t>(act_, b * inter), n, x.down, at<float>(ys_, b * hidden),
                  GemmType::kF32);
  }));
  return Status::Ok();
}

}  // namespace mlaspec::model::gpu
