// Loading weights: fp8 block dequantization, the kv_b_proj split, tied embeddings, MTP tensors,
// and every refusal (missing, extra, mis-shaped, mis-typed tensors) naming tensor and file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/test_helpers.h"
#include "model/model_test_util.h"

namespace mlaspec::model::testing {
namespace {

// A golden checkpoint copied to a scratch directory with its tensors edited.
class EditedCheckpoint : public ::testing::Test {
 protected:
  TempDir dir;
  StTensors tensors;

  void from(const std::string& name) {
    std::filesystem::copy_file(models_dir() / name / "config.json", dir.path() / "config.json");
    tensors = read_tensors(models_dir() / name / "model.safetensors");
  }
  Result<ModelWeights> load(bool defer = false) {
    write_file(dir.path() / "model.safetensors", safetensors_bytes(tensors));
    Result<ModelConfig> c = load_model_config(dir.path());
    if (!c.ok()) return c.status();
    Result<Checkpoint> ckpt = Checkpoint::open(dir.path());
    if (!ckpt.ok()) return ckpt.status();
    return load_weights(*c, *ckpt, {.defer_projections = defer});
  }
  // The refusal of a full load; a deferred load (the CUDA one) must refuse with the same words.
  std::string error() {
    Result<ModelWeights> w = load();
    EXPECT_FALSE(w.ok());
    Result<ModelWeights> deferred = load(/*defer=*/true);
    EXPECT_FALSE(deferred.ok());
    if (!w.ok() && !deferred.ok()) {
      EXPECT_EQ(deferred.status().to_string(), w.status().to_string());
    }
    return w.ok() ? "" : w.status().to_string();
  }
  std::string file() const { return (dir.path() / "model.safetensors").string(); }
};

TEST_F(EditedCheckpoint, LoadsUnchanged) {
  from("v2_lite_greedy");
  const ModelWeights w = load().value();
  EXPECT_EQ(w.layers.size(), 2u);
  EXPECT_FALSE(w.layers[0].is_moe);
  EXPECT_TRUE(w.layers[1].is_moe);
  EXPECT_EQ(w.layers[1].moe.experts.size(), 8u);
  EXPECT_TRUE(w.layers[1].moe.e_score_correction_bias.empty());  // softmax router: no bias
  EXPECT_EQ(w.report.bytes_by_dtype.count("F16"), 1u);
}

TEST_F(EditedCheckpoint, MissingTensor) {
  from("v2_lite_greedy");
  tensors.erase("model.layers.1.mlp.experts.3.up_proj.weight");
  EXPECT_CONTAINS(error(), "not_found: " + dir.path().string() +
                               ": tensor \"model.layers.1.mlp.experts.3.up_proj.weight\" [32, 64] "
                               "is missing");
}

TEST_F(EditedCheckpoint, UntiedWithoutLmHead) {
  from("v2_lite_greedy");
  tensors.erase("lm_head.weight");
  EXPECT_CONTAINS(error(), "tensor \"lm_head.weight\" [256, 64] is missing");
}

TEST_F(EditedCheckpoint, ExtraTensor) {
  from("v2_lite_greedy");
  tensors["model.layers.0.self_attn.k_proj.weight"] = {"F32", {1}, {0, 0, 0, 0}};
  EXPECT_CONTAINS(error(), "data_loss: model.layers.0.self_attn.k_proj.weight [1] F32 in " +
                               file() +
                               ": unexpected tensor (not part of a deepseek_v2 model with this "
                               "config.json)");
}

TEST_F(EditedCheckpoint, MtpModulesAreSkipped) {
  from("v2_lite_greedy");
  tensors["model.layers.2.eh_proj.weight"] = {"F32", {2}, std::vector<uint8_t>(8, 0)};
  tensors["model.layers.2.self_attn.q_proj.weight"] = {"BF16", {2}, std::vector<uint8_t>(4, 0)};
  const ModelWeights w = load().value();
  EXPECT_EQ(w.report.skipped_mtp_tensors, 2);
  EXPECT_EQ(w.report.skipped_mtp_bytes, 12);
}

TEST_F(EditedCheckpoint, MisShapedTensor) {
  from("v2_lite_greedy");
  tensors["model.norm.weight"].shape = {32, 2};
  EXPECT_CONTAINS(error(), "data_loss: model.norm.weight [32, 2] F16 in " + file() +
                               ": shape does not match the config's [64]");
}

TEST_F(EditedCheckpoint, MisTypedTensor) {
  from("v2_lite_greedy");
  StEntry& e = tensors["model.layers.0.self_attn.o_proj.weight"];
  e.dtype = "I16";
  EXPECT_CONTAINS(error(), "unsupported: model.layers.0.self_attn.o_proj.weight [64, 64] I16 in " +
                               file() +
                               ": dtype I16 is unsupported; supported: BF16, F16, F32, "
                               "F8_E4M3");
}

TEST_F(EditedCheckpoint, Fp8NormIsRefused) {
  from("v2_lite_greedy");
  StEntry& e = tensors["model.layers.0.input_layernorm.weight"];
  e.dtype = "F8_E4M3";
  e.bytes.resize(e.bytes.size() / 2);
  EXPECT_CONTAINS(error(), "F8_E4M3 is supported for 2-D projection weights only");
}

TEST_F(EditedCheckpoint, Fp8WithoutScales) {
  from("kimi_k2_fp8");
  tensors.erase("model.layers.1.self_attn.kv_b_proj.weight_scale_inv");
  EXPECT_CONTAINS(error(), "model.layers.1.self_attn.kv_b_proj.weight [128, 512] F8_E4M3 in " +
                               file() +
                               " is F8_E4M3 but its block scales "
                               "\"model.layers.1.self_attn.kv_b_proj.weight_scale_inv\" "
                               "are missing");
}

TEST_F(EditedCheckpoint, Fp8ScalesMisShaped) {
  from("kimi_k2_fp8");
  StEntry& s = tensors["model.layers.0.self_attn.kv_a_proj_with_mqa.weight_scale_inv"];
  ASSERT_EQ(s.shape, (std::vector<int64_t>{5, 2}));  // 576 x 160 in 128 x 128 blocks
  s.shape = {2, 5};
  EXPECT_CONTAINS(error(),
                  "model.layers.0.self_attn.kv_a_proj_with_mqa.weight_scale_inv [2, 5] "
                  "F32 in " +
                      file() + ": shape does not match the config's [5, 2]");
}

// w = code * scale_inv[r / 128][c / 128], including the ragged last blocks (576 = 4 * 128 + 64
// rows, 160 = 128 + 32 columns).
TEST_F(EditedCheckpoint, Fp8BlocksDequantize) {
  from("kimi_k2_fp8");
  const ModelWeights w = load().value();
  const StEntry& codes = tensors["model.layers.0.self_attn.kv_a_proj_with_mqa.weight"];
  const StEntry& scales = tensors["model.layers.0.self_attn.kv_a_proj_with_mqa.weight_scale_inv"];
  const Matrix& m = w.layers[0].self_attn.kv_a_proj_with_mqa;
  ASSERT_EQ(m.rows, 576);
  ASSERT_EQ(m.cols, 160);
  int checked = 0;
  for (int r : {0, 127, 128, 511, 512, 575}) {
    for (int c : {0, 127, 128, 159}) {
      float s;
      std::memcpy(&s, scales.bytes.data() + 4 * ((r / 128) * 2 + c / 128), 4);
      const float expect = fp8e4m3_bits_to_float(codes.bytes[static_cast<size_t>(r * 160 + c)]) * s;
      EXPECT_EQ(m.data[static_cast<size_t>(r * 160 + c)], expect) << r << "," << c;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 24);
  EXPECT_GT(w.report.bytes_by_dtype.at("F8_E4M3"), 0);
}

// Every projection of every golden checkpoint, loaded deferred (the CUDA load: no f32 copy), gives
// the bf16 bits the full load's f32 values round to, in any row range; the rest loads as before.
void expect_same_bf16(const Matrix& full, const Matrix& deferred, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_TRUE(deferred.deferred());
  EXPECT_FALSE(full.deferred());
  EXPECT_TRUE(deferred.data.empty());
  EXPECT_FALSE(deferred.empty());
  ASSERT_EQ(deferred.rows, full.rows);
  ASSERT_EQ(deferred.cols, full.cols);
  const int64_t rows = full.rows, cols = full.cols;
  std::vector<uint16_t> a(static_cast<size_t>(rows * cols), 0xdead), b(a.size(), 0xbeef);
  matrix_rows_to_bf16(full, 0, rows, a.data());
  matrix_rows_to_bf16(deferred, 0, rows, b.data());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i], bf16::from_float(full.data[i]).bits) << "full, value " << i;
    ASSERT_EQ(b[i], a[i]) << "deferred, value " << i;
  }
  // A range that starts and ends inside the matrix (and inside fp8's 128-row blocks).
  const int64_t r0 = rows / 3, r1 = rows - rows / 5;
  std::vector<uint16_t> part(static_cast<size_t>((r1 - r0) * cols), 0);
  matrix_rows_to_bf16(deferred, r0, r1, part.data());
  EXPECT_TRUE(std::equal(part.begin(), part.end(), a.begin() + r0 * cols));
}

TEST(Weights, DeferredProjectionsGiveTheFullLoadsBits) {
  int checked = 0;
  for (const char* name : {"kimi_k2_fp8", "v2_group_limited_yarn", "v2_lite_greedy",
                           "v3_generate_bytelevel", "v3_plain_q_tied", "v3_qlora_moe_yarn"}) {
    const std::filesystem::path dir = models_dir() / name;
    const ModelConfig c = load_model_config(dir).value();
    const Checkpoint ckpt = Checkpoint::open(dir).value();
    const ModelWeights full = load_weights(c, ckpt).value();
    const ModelWeights lazy = load_weights(c, ckpt, {.defer_projections = true}).value();
    EXPECT_EQ(lazy.report.parameters, full.report.parameters) << name;
    EXPECT_EQ(lazy.report.bytes_by_dtype, full.report.bytes_by_dtype) << name;
    EXPECT_EQ(lazy.embed_tokens.data, full.embed_tokens.data) << name;
    EXPECT_EQ(lazy.lm_head.data, full.lm_head.data) << name;
    ASSERT_EQ(lazy.layers.size(), full.layers.size());
    for (size_t l = 0; l < full.layers.size(); ++l) {
      const LayerWeights &f = full.layers[l], &d = lazy.layers[l];
      const std::string at = std::string(name) + " layer " + std::to_string(l) + " ";
      const AttentionWeights &fa = f.self_attn, &da = d.self_attn;
      for (auto [fm, dm, n] : {std::tuple{&fa.q_proj, &da.q_proj, "q_proj"},
                               {&fa.q_a_proj, &da.q_a_proj, "q_a_proj"},
                               {&fa.q_b_proj, &da.q_b_proj, "q_b_proj"},
                               {&fa.kv_a_proj_with_mqa, &da.kv_a_proj_with_mqa, "kv_a"},
                               {&fa.o_proj, &da.o_proj, "o_proj"}}) {
        if (fm->empty()) {
          EXPECT_TRUE(dm->empty()) << at << n;
          continue;
        }
        expect_same_bf16(*fm, *dm, at + n);
        ++checked;
      }
      // Loaded in both: W_UK / W_UV (split from kv_b on the host), the router, the norms.
      EXPECT_EQ(da.w_uk.data, fa.w_uk.data) << at;
      EXPECT_EQ(da.w_uv.data, fa.w_uv.data) << at;
      EXPECT_EQ(d.moe.gate.data, f.moe.gate.data) << at;
      EXPECT_EQ(d.input_layernorm, f.input_layernorm) << at;
      std::vector<std::pair<const MlpWeights*, const MlpWeights*>> mlps = {
          {&f.mlp, &d.mlp}, {&f.moe.shared_experts, &d.moe.shared_experts}};
      for (size_t e = 0; e < f.moe.experts.size(); ++e) {
        mlps.emplace_back(&f.moe.experts[e], &d.moe.experts[e]);
      }
      for (const auto& [fm, dm] : mlps) {
        if (fm->gate_proj.empty()) continue;
        expect_same_bf16(fm->gate_proj, dm->gate_proj, at + "gate_proj");
        expect_same_bf16(fm->up_proj, dm->up_proj, at + "up_proj");
        expect_same_bf16(fm->down_proj, dm->down_proj, at + "down_proj");
        checked += 3;
      }
    }
  }
  EXPECT_GT(checked, 100);
}

// MLASPEC_CUDA_LOAD picks the CUDA load's form (f32 or deferred); any other value is refused by
// name before any weight is read (the check comes before the device is opened, so it holds
// on a machine without CUDA too).
TEST(Weights, CudaLoadSwitchRefusesUnknownValues) {
  ASSERT_EQ(::setenv("MLASPEC_CUDA_LOAD", "fp16", 1), 0);
  LoadOptions o;
  o.device = Device::kCUDA;
  Result<Model> m = Model::load(models_dir() / "v2_lite_greedy", o);
  ::unsetenv("MLASPEC_CUDA_LOAD");
  ASSERT_FALSE(m.ok());
  EXPECT_CONTAINS(m.status().to_string(),
                  "MLASPEC_CUDA_LOAD=fp16: expected f32 (an f32 host copy first) or deferred");
}

// The CUDA runtime's other switches (MLASPEC_CUDA_GRAPHS, MLASPEC_CUDA_EXPERTS,
// MLASPEC_ATTENTION_SPLITS, MLASPEC_CUDA_SHARED): a value outside
// the accepted ones is refused by name at load, before the device is opened.
TEST(Weights, CudaRuntimeSwitchesRefuseUnknownValues) {
  // A CUDA load with `name`=`value` in the environment: its error, "" if it loaded.
  auto load_error = [](const char* name, const char* value) {
    EXPECT_EQ(::setenv(name, value, 1), 0);
    LoadOptions o;
    o.device = Device::kCUDA;
    Result<Model> m = Model::load(models_dir() / "v2_lite_greedy", o);
    ::unsetenv(name);
    return m.ok() ? std::string() : m.status().to_string();
  };
  const std::pair<const char*, const char*> refused[] = {{"MLASPEC_CUDA_GRAPHS", "segmnets"},
                                                         {"MLASPEC_CUDA_GRAPHS", "off"},
                                                         {"MLASPEC_CUDA_EXPERTS", "perexpert"},
                                                         {"MLASPEC_ATTENTION_SPLITS", "auto"},
                                                         {"MLASPEC_CUDA_SHARED", "parallel"}};
  for (const auto& [name, value] : refused) {
    EXPECT_CONTAINS(load_error(name, value), std::string(name) + "=" + value + ": expected");
  }
  // The accepted values pass this check (without a GPU the load fails later, for that reason).
  const std::pair<const char*, const char*> accepted[] = {{"MLASPEC_CUDA_GRAPHS", "segments"},
                                                          {"MLASPEC_CUDA_GRAPHS", "0"},
                                                          {"MLASPEC_CUDA_EXPERTS", "per_expert"},
                                                          {"MLASPEC_ATTENTION_SPLITS", "fixed"},
                                                          {"MLASPEC_CUDA_SHARED", "serial"}};
  for (const auto& [name, value] : accepted) {
    const std::string error = load_error(name, value);
    EXPECT_EQ(error.find(std::string(name) + "="), std::string::npos) << error;
  }
}

// W_UK / W_UV are kv_b_proj's rows per head: [h*(nope+v), +nope) and [+nope, +nope+v).
TEST_F(EditedCheckpoint, KvBProjSplitsPerHead) {
  from("v3_qlora_moe_yarn");
  const ModelWeights w = load().value();
  const StEntry& kv_b = tensors["model.layers.2.self_attn.kv_b_proj.weight"];
  ASSERT_EQ(kv_b.dtype, "BF16");
  auto at = [&](int64_t r, int64_t c) {
    uint16_t b;
    std::memcpy(&b, kv_b.bytes.data() + 2 * (r * 512 + c), 2);
    return bf16_bits_to_float(b);
  };
  const AttentionWeights& a = w.layers[2].self_attn;
  const int nope = 8, v = 8;
  for (int h : {0, 5, 7}) {
    for (int d : {0, 7}) {
      for (int c : {0, 300, 511}) {
        EXPECT_EQ(a.w_uk.data[static_cast<size_t>((h * nope + d) * 512 + c)],
                  at(h * (nope + v) + d, c));
        EXPECT_EQ(a.w_uv.data[static_cast<size_t>((h * v + d) * 512 + c)],
                  at(h * (nope + v) + nope + d, c));
      }
    }
  }
}

TEST(Weights, TiedEmbeddingsShareTheHead) {
  const Model& m = cached_model("v3_plain_q_tied");
  EXPECT_TRUE(m.weights().lm_head.empty());
  EXPECT_EQ(&m.weights().head(), &m.weights().embed_tokens);
}

TEST(Weights, CpuPanelsAreBf16ExactlyWhenEveryValueIsBf16) {
  // A bf16 checkpoint's weights stream as bf16 panels (half the bytes, the same products); one
  // value that bf16 cannot hold keeps the whole matrix in f32.
  Matrix m{std::vector<float>{1.0f, -2.5f, 0.15625f, 3.0f, 0.0f, -0.0f}, 2, 3, {}, {}, {}, {}};
  pack_for_cpu(m);
  EXPECT_TRUE(m.panels.empty());
  ASSERT_EQ(m.panels_bf16.size(), 16u * 2u);  // pairs (k 0, 1) and (k 2, padding)
  EXPECT_EQ(m.panels_bf16[0], float_to_bf16_bits(1.0f) | uint32_t{float_to_bf16_bits(-2.5f)} << 16);
  EXPECT_EQ(m.panels_bf16[1], float_to_bf16_bits(3.0f));  // row 1: k 0 = 3, k 1 = +0
  EXPECT_EQ(m.panels_bf16[16 + 1], uint32_t{float_to_bf16_bits(-0.0f)});  // row 1, k 2; padding
  EXPECT_EQ(m.panels_bf16[2], 0u);                                        // rows past N: zeros
  m.data[4] = 0.1f;                                                       // not a bf16 value
  pack_for_cpu(m);
  EXPECT_TRUE(m.panels_bf16.empty());
  ASSERT_EQ(m.panels.size(), 16u * 3u);
  EXPECT_EQ(m.panels[1 * 16 + 1], 0.1f);
}

}  // namespace
}  // namespace mlaspec::model::testing
