// ModelWeights: the tensors of a DeepSeek-V3-family checkpoint, named as in the checkpoint and
// converted to f32 at load (the CPU runtime's math), or, for the GPU upload, with the
// projections deferred: left in the checkpoint and converted to bf16 on their way to the device
// (LoadWeightsOptions; the CPU runtime needs a full load).
//
// At load, kv_b_proj [H * (qk_nope + v), 512] is split per head into W_UK (the qk_nope rows) and
// W_UV (the v rows) for the absorbed attention (ARCHITECTURE.md §3.5). fp8 e4m3 weights are
// dequantized with their 128x128 block scales: w[r][c] = fp8[r][c] * <name>_scale_inv[r/128][c/128]
// (block size from quantization_config.weight_block_size).
//
// Checked: every tensor the config implies is present with the expected shape and a float dtype
// (BF16, F16, F32, F8_E4M3; fp8 only for 2-D projections, with its scale_inv); no tensor is left
// over except the MTP modules (model.layers.{i >= num_hidden_layers}.*, DeepSeek-V3 ships one) and
// rotary_emb.inv_freq buffers. Every error names the tensor and its file.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mlaspec/core/status.h"
#include "mlaspec/model/config.h"
#include "mlaspec/model/safetensors.h"

namespace mlaspec::model {

// Row-major [rows, cols] f32: the checkpoint's [out_features, in_features].
struct Matrix {
  std::vector<float> data;
  int rows = 0;
  int cols = 0;
  // The CPU runtime's copy for the row-invariant GEMM: 16-row column panels, k-major
  // (src/model/row_invariant_gemm.h, pack_panels), in bf16 when every value is one (a bf16
  // checkpoint: exact, half the bytes to stream), else in f32. At most one is filled, by
  // pack_for_cpu (GPU runtime: both empty).
  std::vector<float> panels;
  std::vector<uint32_t> panels_bf16;  // bf16 pairs (row_invariant_gemm.h)
  // W_UK's row-major copy in bf16 when every value is one (its GEMM reads rows, not panels).
  std::vector<uint16_t> data_bf16;
  // A deferred matrix (load_weights with defer_projections, the CUDA load) holds no values: the
  // checkpoint tensor (and, for fp8, its block scales) they come from, converted straight to
  // bf16 by matrix_rows_to_bf16 when the GPU runtime uploads it. Valid while the Checkpoint is.
  struct Source {
    const TensorInfo* tensor = nullptr;
    const TensorInfo* scales = nullptr;  // fp8 e4m3: <name>_scale_inv [ceil(rows / br), ...]
    int64_t block_rows = 0, block_cols = 0;
  };
  Source source;
  bool deferred() const { return source.tensor != nullptr; }
  bool packed() const { return !panels.empty() || !panels_bf16.empty(); }
  bool empty() const { return data.empty() && !deferred(); }
  const float* ptr() const { return data.data(); }
  const float* row(int64_t r) const { return data.data() + r * cols; }
};

struct MlpWeights {  // SwiGLU: down(silu(gate(x)) * up(x))
  Matrix gate_proj, up_proj, down_proj;
};

struct AttentionWeights {
  Matrix q_proj;  // without q LoRA
  Matrix q_a_proj;
  std::vector<float> q_a_layernorm;
  Matrix q_b_proj;
  Matrix kv_a_proj_with_mqa;  // [512 + 64, hidden]
  std::vector<float> kv_a_layernorm;
  Matrix w_uk;  // [H * qk_nope, 512]: head h's rows h*qk_nope .. of kv_b_proj's k part
  Matrix w_uv;  // [H * v, 512]
  Matrix o_proj;
};

struct MoeWeights {
  Matrix gate;                                 // router [n_routed_experts, hidden]
  std::vector<float> e_score_correction_bias;  // noaux_tc only
  std::vector<MlpWeights> experts;
  MlpWeights shared_experts;  // empty when n_shared_experts == 0
};

struct LayerWeights {
  std::vector<float> input_layernorm;
  std::vector<float> post_attention_layernorm;
  AttentionWeights self_attn;
  bool is_moe = false;
  MlpWeights mlp;  // dense layers
  MoeWeights moe;  // MoE layers
};

// What the checkpoint held, for `inspect-model`.
struct WeightsReport {
  int64_t parameters = 0;                         // loaded values (fp8 scales not counted)
  std::map<std::string, int64_t> bytes_by_dtype;  // "BF16" -> bytes in the files
  int64_t skipped_mtp_tensors = 0;
  int64_t skipped_mtp_bytes = 0;
};

struct ModelWeights {
  Matrix embed_tokens;  // [vocab, hidden]
  std::vector<LayerWeights> layers;
  std::vector<float> norm;
  Matrix lm_head;  // empty when tie_word_embeddings
  const Matrix& head() const { return lm_head.empty() ? embed_tokens : lm_head; }
  WeightsReport report;
};

struct LoadWeightsOptions {
  // The projections (q, kv_a, o, the MLPs and experts) stay in the checkpoint (Matrix::source):
  // no f32 host copy, four bytes per parameter. Every shape, dtype and scale is checked as for a
  // full load. The embedding, head, router, kv_b's W_UK / W_UV and the norms are loaded.
  bool defer_projections = false;
};
Result<ModelWeights> load_weights(const ModelConfig& config, const Checkpoint& checkpoint,
                                  const LoadWeightsOptions& options = {});

// Rows [r0, r1) of `m` as bf16 bits (row-major, (r1 - r0) * cols values into out): bf16 of the
// f32 value a full load would hold (from Matrix::data, or a deferred matrix's source converted as
// load_weights converts it: widened, fp8 times its block scale in f32), so both give the same
// bits. On the calling thread.
void matrix_rows_to_bf16(const Matrix& m, int64_t r0, int64_t r1, uint16_t* out);

// Fills every projection's Matrix::panels or panels_bf16 (the CPU runtime's deterministic GEMM
// layout): bf16 when every value of the matrix is a bf16 value (a bf16 checkpoint), else f32.
// MLASPEC_CPU_WEIGHTS=f32 keeps f32 panels for all (the same results; for A/B timing). W_UK stays
// unpacked (its GEMM reads the rows as they are), with a row-major bf16 copy when exact.
void pack_for_cpu(ModelWeights& weights);
void pack_for_cpu(Matrix& m);

}  // namespace mlaspec::model
