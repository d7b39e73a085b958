// MoE: the router (noaux_tc for the V3 family; softmax greedy / group-limited greedy for V2),
// routed experts grouped per expert, and the shared experts.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>

#include "gpu_plan.h"
#include "layers.h"
#include "mlaspec/core/parallel.h"

namespace mlaspec::model::cpu {
namespace {

// Indices of the k largest scores (larger first; equal scores: lower index first).
void top_k(const float* scores, int n, int k, int* out) {
  std::vector<int> idx(static_cast<size_t>(n));
  std::iota(idx.begin(), idx.end(), 0);
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](int a, int b) {
    return scores[a] != scores[b] ? scores[a] > scores[b] : a < b;
  });
  std::copy(idx.begin(), idx.begin() + k, out);
}

// Keeps the topk_group groups with the best group scores; the others' experts get `masked`.
void mask_groups(const ModelConfig& c, const std::vector<float>& group_score, float masked,
                 std::vector<float>& choice) {
  const int per_group = c.n_routed_experts / c.n_group;
  std::vector<int> keep(static_cast<size_t>(c.topk_group));
  top_k(group_score.data(), c.n_group, c.topk_group, keep.data());
  std::vector<bool> kept(static_cast<size_t>(c.n_group), false);
  for (int g : keep) kept[static_cast<size_t>(g)] = true;
  for (int e = 0; e < c.n_routed_experts; ++e) {
    if (!kept[static_cast<size_t>(e / per_group)]) choice[static_cast<size_t>(e)] = masked;
  }
}

}  // namespace

void route_token(const ModelConfig& c, const MoeWeights& w, const float* logits, int* experts,
                 float* weights) {
  const int E = c.n_routed_experts, k = c.num_experts_per_tok;
  const int per_group = E / c.n_group;
  std::vector<float> scores(static_cast<size_t>(E)), choice(static_cast<size_t>(E));
  if (c.router == RouterKind::kSigmoidNoauxTc) {
    // Sigmoid scores; the correction bias steers the choice only, the weights are unbiased.
    for (int e = 0; e < E; ++e) {
      scores[static_cast<size_t>(e)] = 1.0f / (1.0f + std::exp(-logits[e]));
      choice[static_cast<size_t>(e)] =
          scores[static_cast<size_t>(e)] + w.e_score_correction_bias[static_cast<size_t>(e)];
    }
    std::vector<float> group_score(static_cast<size_t>(c.n_group));
    for (int g = 0; g < c.n_group; ++g) {
      const size_t first = static_cast<size_t>(g) * static_cast<size_t>(per_group);
      int best[2];
      top_k(choice.data() + first, per_group, 2, best);
      group_score[static_cast<size_t>(g)] = choice[first + static_cast<size_t>(best[0])] +
                                            choice[first + static_cast<size_t>(best[1])];
    }
    mask_groups(c, group_score, -std::numeric_limits<float>::infinity(), choice);
    top_k(choice.data(), E, k, experts);
    float sum = 0.0f;
    for (int i = 0; i < k; ++i) {
      weights[i] = scores[static_cast<size_t>(experts[i])];
      sum += weights[i];
    }
    for (int i = 0; i < k; ++i) {
      if (c.norm_topk_prob) weights[i] /= sum + 1e-20f;
      weights[i] *= static_cast<float>(c.routed_scaling_factor);
    }
    return;
  }
  // Softmax scores (V2).
  const float mx = *std::max_element(logits, logits + E);
  float sum = 0.0f;
  for (int e = 0; e < E; ++e) {
    scores[static_cast<size_t>(e)] = std::exp(logits[e] - mx);
    sum += scores[static_cast<size_t>(e)];
  }
  for (float& s : scores) s /= sum;
  choice = scores;
  if (c.router == RouterKind::kSoftmaxGroupLimitedGreedy) {
    std::vector<float> group_score(static_cast<size_t>(c.n_group));
    for (int g = 0; g < c.n_group; ++g) {
      const auto first = choice.begin() + static_cast<std::ptrdiff_t>(g) * per_group;
      group_score[static_cast<size_t>(g)] = *std::max_element(first, first + per_group);
    }
    mask_groups(c, group_score, 0.0f, choice);
  }
  top_k(choice.data(), E, k, experts);
  for (int i = 0; i < k; ++i) {
    weights[i] =
        choice[static_cast<size_t>(experts[i])] * static_cast<float>(c.routed_scaling_factor);
  }
}

void moe_combine(const float* ys, const int32_t* rows, const float* w, int k, const float* shared,
                 int64_t T, int64_t hidden, float* out) {
  parallel_for(0, T, T * hidden * (k + 2), [&](int64_t t) {
    float* o = out + t * hidden;
    std::fill(o, o + hidden, 0.0f);
    for (int i = 0; i < k; ++i) {
      const float* y = ys + int64_t{rows[t * k + i]} * hidden;
      const float wi = w[t * k + i];
      for (int64_t j = 0; j < hidden; ++j) o[j] += y[j] * wi;
    }
    if (shared != nullptr) {
      for (int64_t j = 0; j < hidden; ++j) o[j] += shared[t * hidden + j];
    }
  });
}

void moe_forward(const ModelConfig& c, const MoeWeights& w, const float* x, int64_t T, float* out) {
  const int64_t hidden = c.hidden_size;
  const int E = c.n_routed_experts, k = c.num_experts_per_tok;
  std::vector<float> logits(static_cast<size_t>(T * E));
  linear(x, T, w.gate, logits.data());
  std::vector<int> chosen(static_cast<size_t>(T * k));
  std::vector<float> weight(static_cast<size_t>(T * k));
  parallel_for(0, T, T * E * 16, [&](int64_t t) {
    route_token(c, w, logits.data() + t * E, chosen.data() + t * k, weight.data() + t * k);
  });

  // Tokens per expert (plan_moe_groups, the CUDA runtime's plan too), one GEMM per touched
  // expert, then the combine: each token sums its experts' outputs in ascending expert order (as
  // transformers' index_add loop does), then the shared experts.
  const MoeGroupPlan plan = plan_moe_groups(chosen, weight, T, k, E);
  const int64_t rows = static_cast<int64_t>(plan.rows.size());
  std::vector<float> xs(static_cast<size_t>(rows * hidden)), ys(xs.size());
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t t = plan.rows[static_cast<size_t>(r)];
    std::copy(x + t * hidden, x + (t + 1) * hidden, xs.begin() + r * hidden);
  }
  for (int e = 0; e < E; ++e) {
    const int64_t b = plan.expert_begin[static_cast<size_t>(e)];
    const int64_t n = plan.expert_begin[static_cast<size_t>(e) + 1] - b;
    if (n == 0) continue;
    mlp_forward(w.experts[static_cast<size_t>(e)], xs.data() + b * hidden, n,
                ys.data() + b * hidden);
  }
  std::vector<float> shared;
  if (!w.shared_experts.gate_proj.empty()) {
    shared.resize(static_cast<size_t>(T * hidden));
    mlp_forward(w.shared_experts, x, T, shared.data());
  }
  moe_combine(ys.data(), plan.combine_row.data(), plan.combine_weight.data(), k,
              shared.empty() ? nullptr : shared.data(), T, hidden, out);
}

}  // namespace mlaspec::model::cpu
