// Loading a checkpoint's tensors into ModelWeights (f32), with every shape and dtype checked.
#include "mlaspec/model/weights.h"

#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "mlaspec/core/dtype.h"
#include "mlaspec/core/parallel.h"
#include "row_invariant_gemm.h"
#include "tensor_loader.h"

namespace mlaspec::model {
namespace {

class Loader {
 public:
  Loader(const ModelConfig& config, const Checkpoint& ckpt, WeightsReport* report)
      : config_(config), ckpt_(ckpt), report_(report) {}

  // A projection: deferred (the matrix keeps its source) under load_weights's defer_projections.
  Status projection(const std::string& name, int64_t rows, int64_t cols, Matrix* out) {
    return matrix(name, rows, cols, out, defer_);
  }
  void set_defer(bool defer) { defer_ = defer; }

  Status vector(const std::string& name, int64_t len, std::vector<float>* out) {
    const TensorInfo* t = nullptr;
    MLASPEC_RETURN_IF_ERROR(take(name, {len}, &t));
    if (t->dtype == StDType::kF8E4M3) {
      return unsupported(t->describe() + ": F8_E4M3 is supported for 2-D projection weights " +
                         "only; norms and biases must be BF16, F16 or F32");
    }
    out->resize(static_cast<size_t>(len));
    return convert_to_f32(*t, *out);
  }

  // `defer`: no values, only the source (take_tensor has checked its dtype and shape).
  Status matrix(const std::string& name, int64_t rows, int64_t cols, Matrix* out,
                bool defer = false) {
    const TensorInfo* t = nullptr;
    MLASPEC_RETURN_IF_ERROR(take(name, {rows, cols}, &t));
    out->rows = static_cast<int>(rows);
    out->cols = static_cast<int>(cols);
    if (defer) {
      out->source.tensor = t;
    } else {
      out->data.resize(static_cast<size_t>(rows * cols));
      MLASPEC_RETURN_IF_ERROR(convert_to_f32(*t, out->data));
    }
    if (t->dtype != StDType::kF8E4M3) return Status::Ok();

    // DeepSeek-V3's block-scaled fp8: <name>_scale_inv [ceil(rows/br), ceil(cols/bc)].
    const int64_t br = config_.fp8.block_rows, bc = config_.fp8.block_cols;
    const int64_t srows = (rows + br - 1) / br, scols = (cols + bc - 1) / bc;
    const std::string sname = name + "_scale_inv";
    const TensorInfo* s = ckpt_.find(sname);
    if (s == nullptr) {
      return not_found(t->describe() + " is F8_E4M3 but its block scales \"" + sname +
                       "\" are missing");
    }
    const TensorInfo* st = nullptr;
    MLASPEC_RETURN_IF_ERROR(take(sname, {srows, scols}, &st));
    if (st->dtype == StDType::kF8E4M3) {
      return unsupported(st->describe() + ": block scales must be F32, BF16 or F16");
    }
    if (defer) {
      out->source.scales = st;
      out->source.block_rows = br;
      out->source.block_cols = bc;
    } else {
      std::vector<float> scale(static_cast<size_t>(srows * scols));
      MLASPEC_RETURN_IF_ERROR(convert_to_f32(*st, scale));
      parallel_for(0, rows, [&](int64_t r) {
        for (int64_t c = 0; c < cols; ++c) {
          out->data[static_cast<size_t>(r * cols + c)] *=
              scale[static_cast<size_t>((r / br) * scols + c / bc)];
        }
      });
    }
    report_->parameters -= srows * scols;  // scales are not parameters
    return Status::Ok();
  }

  Status mlp(const std::string& prefix, int64_t inter, MlpWeights* out) {
    const int64_t hidden = config_.hidden_size;
    MLASPEC_RETURN_IF_ERROR(
        projection(prefix + "gate_proj.weight", inter, hidden, &out->gate_proj));
    MLASPEC_RETURN_IF_ERROR(projection(prefix + "up_proj.weight", inter, hidden, &out->up_proj));
    return projection(prefix + "down_proj.weight", hidden, inter, &out->down_proj);
  }

  // Tensors neither loaded nor known to be skippable.
  Status check_leftovers() {
    for (const auto& [name, t] : ckpt_.tensors()) {
      if (used_.count(name) != 0) continue;
      if (is_mtp(name)) {
        report_->skipped_mtp_tensors += 1;
        report_->skipped_mtp_bytes += static_cast<int64_t>(t->bytes.size());
        continue;
      }
      if (name.ends_with("rotary_emb.inv_freq")) continue;
      return data_loss(t->describe() + ": unexpected tensor (not part of a " + config_.model_type +
                       " model with this config.json)");
    }
    return Status::Ok();
  }

 private:
  Status take(const std::string& name, std::initializer_list<int64_t> shape,
              const TensorInfo** out) {
    MLASPEC_RETURN_IF_ERROR(take_tensor(ckpt_, name, shape, /*allow_fp8=*/true, used_, out));
    report_->parameters += (*out)->numel;
    report_->bytes_by_dtype[std::string(st_dtype_name((*out)->dtype))] +=
        static_cast<int64_t>((*out)->bytes.size());
    return Status::Ok();
  }

  // model.layers.{i}.* with i >= num_hidden_layers: DeepSeek-V3's multi-token-prediction modules.
  bool is_mtp(const std::string& name) const {
    static constexpr std::string_view kPrefix = "model.layers.";
    if (!name.starts_with(kPrefix)) return false;
    const char* p = name.c_str() + kPrefix.size();
    char* end = nullptr;
    const long layer = std::strtol(p, &end, 10);
    return end != p && *end == '.' && layer >= config_.num_hidden_layers;
  }

  const ModelConfig& config_;
  const Checkpoint& ckpt_;
  WeightsReport* report_;
  std::set<std::string, std::less<>> used_;
  bool defer_ = false;
};

Status load_attention(Loader& ld, const ModelConfig& c, const std::string& p, AttentionWeights* a) {
  const int64_t H = c.num_attention_heads, hidden = c.hidden_size;
  const int64_t qk = c.qk_head_dim(), nope = c.qk_nope_head_dim, v = c.v_head_dim;
  const int64_t latent = c.kv_lora_rank;
  if (c.has_q_lora()) {
    MLASPEC_RETURN_IF_ERROR(
        ld.projection(p + "q_a_proj.weight", c.q_lora_rank, hidden, &a->q_a_proj));
    MLASPEC_RETURN_IF_ERROR(
        ld.vector(p + "q_a_layernorm.weight", c.q_lora_rank, &a->q_a_layernorm));
    MLASPEC_RETURN_IF_ERROR(
        ld.projection(p + "q_b_proj.weight", H * qk, c.q_lora_rank, &a->q_b_proj));
  } else {
    MLASPEC_RETURN_IF_ERROR(ld.projection(p + "q_proj.weight", H * qk, hidden, &a->q_proj));
  }
  MLASPEC_RETURN_IF_ERROR(ld.projection(p + "kv_a_proj_with_mqa.weight",
                                        latent + c.qk_rope_head_dim, hidden,
                                        &a->kv_a_proj_with_mqa));
  MLASPEC_RETURN_IF_ERROR(ld.vector(p + "kv_a_layernorm.weight", latent, &a->kv_a_layernorm));
  Matrix kv_b;
  MLASPEC_RETURN_IF_ERROR(ld.matrix(p + "kv_b_proj.weight", H * (nope + v), latent, &kv_b));
  // Head h's rows of kv_b_proj are [h*(nope+v), h*(nope+v) + nope) for k and the next v for V.
  a->w_uk = Matrix{std::vector<float>(static_cast<size_t>(H * nope * latent)),
                   static_cast<int>(H * nope),
                   static_cast<int>(latent),
                   {},
                   {},
                   {},
                   {}};
  a->w_uv = Matrix{std::vector<float>(static_cast<size_t>(H * v * latent)),
                   static_cast<int>(H * v),
                   static_cast<int>(latent),
                   {},
                   {},
                   {},
                   {}};
  for (int64_t h = 0; h < H; ++h) {
    const float* src = kv_b.row(h * (nope + v));
    std::copy(src, src + nope * latent, a->w_uk.data.begin() + h * nope * latent);
    std::copy(src + nope * latent, src + (nope + v) * latent,
              a->w_uv.data.begin() + h * v * latent);
  }
  return ld.projection(p + "o_proj.weight", hidden, H * v, &a->o_proj);
}

Status load_moe(Loader& ld, const ModelConfig& c, const std::string& p, MoeWeights* m) {
  const int64_t E = c.n_routed_experts;
  MLASPEC_RETURN_IF_ERROR(ld.matrix(p + "gate.weight", E, c.hidden_size, &m->gate));
  if (c.router == RouterKind::kSigmoidNoauxTc) {
    MLASPEC_RETURN_IF_ERROR(
        ld.vector(p + "gate.e_score_correction_bias", E, &m->e_score_correction_bias));
  }
  m->experts.resize(static_cast<size_t>(E));
  for (int64_t e = 0; e < E; ++e) {
    MLASPEC_RETURN_IF_ERROR(ld.mlp(p + "experts." + std::to_string(e) + ".",
                                   c.moe_intermediate_size, &m->experts[static_cast<size_t>(e)]));
  }
  if (c.n_shared_experts > 0) {
    MLASPEC_RETURN_IF_ERROR(ld.mlp(p + "shared_experts.",
                                   int64_t{c.moe_intermediate_size} * c.n_shared_experts,
                                   &m->shared_experts));
  }
  return Status::Ok();
}

}  // namespace

Result<ModelWeights> load_weights(const ModelConfig& c, const Checkpoint& ckpt,
                                  const LoadWeightsOptions& options) {
  ModelWeights w;
  Loader ld(c, ckpt, &w.report);
  ld.set_defer(options.defer_projections);
  MLASPEC_RETURN_IF_ERROR(
      ld.matrix("model.embed_tokens.weight", c.vocab_size, c.hidden_size, &w.embed_tokens));
  w.layers.resize(static_cast<size_t>(c.num_hidden_layers));
  for (int l = 0; l < c.num_hidden_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    LayerWeights& layer = w.layers[static_cast<size_t>(l)];
    MLASPEC_RETURN_IF_ERROR(
        ld.vector(p + "input_layernorm.weight", c.hidden_size, &layer.input_layernorm));
    MLASPEC_RETURN_IF_ERROR(ld.vector(p + "post_attention_layernorm.weight", c.hidden_size,
                                      &layer.post_attention_layernorm));
    MLASPEC_RETURN_IF_ERROR(load_attention(ld, c, p + "self_attn.", &layer.self_attn));
    layer.is_moe = c.is_moe_layer(l);
    if (layer.is_moe) {
      MLASPEC_RETURN_IF_ERROR(load_moe(ld, c, p + "mlp.", &layer.moe));
    } else {
      MLASPEC_RETURN_IF_ERROR(ld.mlp(p + "mlp.", c.intermediate_size, &layer.mlp));
    }
  }
  MLASPEC_RETURN_IF_ERROR(ld.vector("model.norm.weight", c.hidden_size, &w.norm));
  if (!c.tie_word_embeddings) {
    MLASPEC_RETURN_IF_ERROR(ld.matrix("lm_head.weight", c.vocab_size, c.hidden_size, &w.lm_head));
  } else if (ckpt.find("lm_head.weight") != nullptr) {
    // Tied: transformers uses the embedding; a stored copy must at least have its shape.
    Matrix unused;
    MLASPEC_RETURN_IF_ERROR(ld.matrix("lm_head.weight", c.vocab_size, c.hidden_size, &unused));
  }
  MLASPEC_RETURN_IF_ERROR(ld.check_leftovers());
  return w;
}

void matrix_rows_to_bf16(const Matrix& m, int64_t r0, int64_t r1, uint16_t* out) {
  const int64_t cols = m.cols;
  if (!m.deferred()) {
    const float* src = m.data.data() + r0 * cols;
    for (int64_t i = 0; i < (r1 - r0) * cols; ++i) out[i] = bf16::from_float(src[i]).bits;
    return;
  }
  // Row by row through a row of f32, as load_weights computes it: widened, then (fp8) times the
  // block scale in f32.
  const Matrix::Source& s = m.source;
  std::vector<float> row(static_cast<size_t>(cols));
  std::vector<float> scale;
  const int64_t scols = s.scales != nullptr ? (cols + s.block_cols - 1) / s.block_cols : 0;
  if (s.scales != nullptr) scale.resize(static_cast<size_t>(scols));
  for (int64_t r = r0; r < r1; ++r) {
    convert_range_to_f32(*s.tensor, r * cols, (r + 1) * cols, row.data());
    if (s.scales != nullptr) {
      const int64_t sr = r / s.block_rows;
      convert_range_to_f32(*s.scales, sr * scols, (sr + 1) * scols, scale.data());
      for (int64_t c = 0; c < cols; ++c) row[c] *= scale[static_cast<size_t>(c / s.block_cols)];
    }
    uint16_t* o = out + (r - r0) * cols;
    for (int64_t c = 0; c < cols; ++c) o[c] = bf16::from_float(row[c]).bits;
  }
}

static bool cpu_weights_f32_forced() {
  // MLASPEC_CPU_WEIGHTS=f32 keeps f32 panels for bf16 weights too (A/B of the two streams; the
  // results are the same bit for bit).
  static const bool forced = [] {
    const char* env = std::getenv("MLASPEC_CPU_WEIGHTS");
    return env != nullptr && std::string_view(env) == "f32";
  }();
  return forced;
}

void pack_for_cpu(Matrix& m) {
  m.panels.clear();
  m.panels_bf16.clear();
  if (m.empty()) return;
  if (!cpu_weights_f32_forced() && cpu::exactly_bf16(m.ptr(), int64_t{m.rows} * m.cols)) {
    m.panels_bf16.assign(static_cast<size_t>(cpu::panel_pair_words(m.rows, m.cols)), 0);
    cpu::pack_panels(m.ptr(), m.rows, m.cols, m.panels_bf16.data());
  } else {
    m.panels.assign(static_cast<size_t>(cpu::panel_floats(m.rows, m.cols)), 0.0f);
    cpu::pack_panels(m.ptr(), m.rows, m.cols, m.panels.data());
  }
}

// W_UK: no panels (gemm_nn reads its rows as they are); a bf16 copy of the rows when exact.
static void keep_rows_bf16(Matrix& m) {
  m.data_bf16.clear();
  if (m.empty() || cpu_weights_f32_forced() ||
      !cpu::exactly_bf16(m.ptr(), int64_t{m.rows} * m.cols))
    return;
  m.data_bf16.resize(m.data.size());
  for (size_t i = 0; i < m.data.size(); ++i) m.data_bf16[i] = float_to_bf16_bits(m.data[i]);
}

void pack_for_cpu(ModelWeights& w) {
  auto mlp = [](MlpWeights& m) {
    for (Matrix* x : {&m.gate_proj, &m.up_proj, &m.down_proj}) pack_for_cpu(*x);
  };
  for (LayerWeights& l : w.layers) {
    AttentionWeights& a = l.self_attn;
    for (Matrix* x :
         {&a.q_proj, &a.q_a_proj, &a.q_b_proj, &a.kv_a_proj_with_mqa, &a.w_uv, &a.o_proj})
      pack_for_cpu(*x);
    keep_rows_bf16(a.w_uk);
    mlp(l.mlp);
    pack_for_cpu(l.moe.gate);
    for (MlpWeights& e : l.moe.experts) mlp(e);
    mlp(l.moe.shared_experts);
  }
  pack_for_cpu(w.lm_head.empty() ? w.embed_tokens : w.lm_head);
}

}  // namespace mlaspec::model
