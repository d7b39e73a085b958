// Loading weights: fp8 block dequantization, the kv_b_proj split, tied embeddings, MTP tensors,
// and every refusal (missing, extra, mis-shaped, mis-typed tensors) naming tensor and file.
#include <gtest/gtest.h>

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
  Result<ModelWeights> load() {
    write_file(dir.path() / "model.safetensors", safetensors_bytes(tensors));
    Result<ModelConfig> c = load_model_config(dir.path());
    if (!c.ok()) return c.status();
    Result<Checkpoint> ckpt = Checkpoint::open(dir.path());
    if (!ckpt.ok()) return ckpt.status();
    return load_weights(*c, *ckpt);
  }
  std::string error() {
    Result<ModelWeights> w = load();
    EXPECT_FALSE(w.ok());
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
  Matrix m{std::vector<float>{1.0f, -2.5f, 0.15625f, 3.0f, 0.0f, -0.0f}, 2, 3, {}, {}, {}};
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
