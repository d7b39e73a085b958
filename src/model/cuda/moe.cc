// SwiGLU MLPs and MoE on the GPU (the CPU runtime's mlp.cc / moe.cc). Routing: the router
// logits (f32, the row-invariant kernel) come back to the host and cpu::route_token picks the
// experts, so ties and groups break as on the CPU; then per touched expert a gather -> SwiGLU
// GEMMs, and a combine that sums each token's experts in ascending expert order, then the shared
// experts (../gpu_plan.h).
#include "../gpu_plan.h"
#include "runtime_impl.h"

namespace mlaspec::model::gpu {

Status Runtime::mlp(const DMlp& m, const uint16_t* x, int64_t T, float* out) {
  MLASPEC_RETURN_IF_ERROR(linear(x, T, m.gate_up, at<float>(gu_), GemmType::kF32));
  MLASPEC_RETURN_IF_ERROR(silu_mul(at<float>(gu_), T, m.inter, at<uint16_t>(act_), nullptr));
  return linear(at<uint16_t>(act_), T, m.down, out, GemmType::kF32);
}

Status Runtime::moe(int layer, int64_t T) {
  const DLayer& d = layers_[static_cast<size_t>(layer)];
  const MoeWeights& hw = host_.layers[static_cast<size_t>(layer)].moe;
  const int64_t hidden = c_.hidden_size;
  const int E = c_.n_routed_experts, k = c_.num_experts_per_tok;

  // Router in f32 (transformers computes it in f32), routing on the host.
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
  std::vector<float> logits(static_cast<size_t>(T * E));
  MLASPEC_RETURN_IF_ERROR(
      cuda_status(cudaMemcpy(logits.data(), router_logits_.data(), logits.size() * sizeof(float),
                             cudaMemcpyDeviceToHost),
                  "router logits download"));
  std::vector<int> chosen(static_cast<size_t>(T * k));
  std::vector<float> weight(static_cast<size_t>(T * k));
  for (int64_t t = 0; t < T; ++t) {
    cpu::route_token(c_, hw, logits.data() + t * E, chosen.data() + t * k, weight.data() + t * k);
  }

  const MoeGroupPlan plan = plan_moe_groups(chosen, weight, T, k, E);
  const std::vector<int32_t>& gidx = plan.rows;
  const std::vector<int64_t>& begin = plan.expert_begin;
  const std::vector<int32_t>& cpos = plan.combine_row;
  const std::vector<float>& cw = plan.combine_weight;
  const int64_t N = static_cast<int64_t>(gidx.size());
  MLASPEC_RETURN_IF_ERROR(cuda_status(
      cudaMemcpy(gidx_.data(), gidx.data(), gidx.size() * sizeof(int32_t), cudaMemcpyHostToDevice),
      "expert rows upload"));
  MLASPEC_RETURN_IF_ERROR(cuda_status(
      cudaMemcpy(cpos_.data(), cpos.data(), cpos.size() * sizeof(int32_t), cudaMemcpyHostToDevice),
      "combine rows upload"));
  MLASPEC_RETURN_IF_ERROR(cuda_status(
      cudaMemcpy(cw_.data(), cw.data(), cw.size() * sizeof(float), cudaMemcpyHostToDevice),
      "combine weights upload"));
  MLASPEC_RETURN_IF_ERROR(
      gather_rows(at<uint16_t>(hb_), at<int32_t>(gidx_), N, hidden, at<uint16_t>(xs_), nullptr));
  for (int e = 0; e < E; ++e) {
    const int64_t b = begin[static_cast<size_t>(e)], n = begin[static_cast<size_t>(e) + 1] - b;
    if (n == 0) continue;
    MLASPEC_RETURN_IF_ERROR(mlp(d.experts[static_cast<size_t>(e)], at<uint16_t>(xs_, b * hidden), n,
                                at<float>(ys_, b * hidden)));
  }
  const float* shared = nullptr;
  if (!d.shared.empty()) {
    MLASPEC_RETURN_IF_ERROR(mlp(d.shared, at<uint16_t>(hb_), T, at<float>(shared_)));
    shared = at<float>(shared_);
  }
  return moe_combine(at<float>(ys_), at<int32_t>(cpos_), at<float>(cw_), k, shared, T, hidden,
                     at<float>(delta_), nullptr);
}

}  // namespace mlaspec::model::gpu
