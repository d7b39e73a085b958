// Helpers for the DFlash and DSpark tests: the golden drafter of
// tests/data/models/v3_qlora_moe_yarn-dflash (python/golden/make_dflash_goldens.py) and its target.
#pragma once

#include <string>
#include <vector>

#include "mlaspec/model/dflash.h"
#include "model/model_test_util.h"

namespace mlaspec::model::testing {

inline constexpr const char* kDFlashTarget = "v3_qlora_moe_yarn";
inline std::filesystem::path dflash_dir() {
  return models_dir() / "v3_qlora_moe_yarn-dflash";
}

// The DSpark golden (python/dspark/make_golden.py): the same target, sequence and backbone.
inline std::filesystem::path dspark_dir() {
  return models_dir() / "v3_qlora_moe_yarn-dspark";
}

struct DFlashCase {
  int64_t context_len = 0;
  int64_t draft_window = 0;
  int32_t anchor = 0;
  std::vector<int32_t> drafts;
  std::vector<float> logits_bf16kv, logits_f32;  // [num_draft, vocab]
};

struct DFlashGolden {
  std::vector<int32_t> sequence;
  int num_draft = 0;
  int64_t seq_len = 0, hidden = 0;
  std::vector<std::vector<float>> target_hidden;  // per capture layer: [S, hidden]
  std::vector<DFlashCase> cases;
};

inline const DFlashGolden& dflash_golden() {
  static const DFlashGolden g = [] {
    DFlashGolden g;
    std::ifstream in(dflash_dir() / "goldens.json");
    const nlohmann::json j = nlohmann::json::parse(in);
    g.sequence = j["sequence"].get<std::vector<int32_t>>();
    g.num_draft = j["num_draft"].get<int>();
    SafetensorsFile f = SafetensorsFile::open(dflash_dir() / "goldens.safetensors").value();
    const std::vector<float> th = tensor_f32(f, "target_hidden");  // [K, S, hidden]
    g.seq_len = static_cast<int64_t>(g.sequence.size());
    const int64_t K = 2;
    g.hidden = static_cast<int64_t>(th.size()) / (K * g.seq_len);
    for (int64_t k = 0; k < K; ++k) {
      g.target_hidden.emplace_back(th.begin() + k * g.seq_len * g.hidden,
                                   th.begin() + (k + 1) * g.seq_len * g.hidden);
    }
    int i = 0;
    for (const auto& c : j["cases"]) {
      DFlashCase dc;
      dc.context_len = c["context_len"].get<int64_t>();
      dc.draft_window = c["draft_window"].get<int64_t>();
      dc.anchor = c["anchor"].get<int32_t>();
      dc.drafts = c["drafts"].get<std::vector<int32_t>>();
      const std::string pre = "c" + std::to_string(i++) + ".";
      dc.logits_bf16kv = tensor_f32(f, pre + "logits_bf16kv");
      dc.logits_f32 = tensor_f32(f, pre + "logits_f32");
      g.cases.push_back(std::move(dc));
    }
    return g;
  }();
  return g;
}

// Pointers to rows [first, ...) of each capture layer's [S, hidden] matrix.
inline std::vector<const float*> hidden_rows(const std::vector<std::vector<float>>& layers,
                                             int64_t first, int64_t hidden) {
  std::vector<const float*> out;
  for (const auto& l : layers) out.push_back(l.data() + first * hidden);
  return out;
}

// The golden's tokens [0, n).
inline std::vector<int32_t> golden_prefix(int64_t n) {
  const auto& s = dflash_golden().sequence;
  return {s.begin(), s.begin() + n};
}

// Rows [first, first + rows) of each capture layer, as a target forward over those positions
// returns them (its own rows only, starting at row 0).
inline std::vector<std::vector<float>> golden_hidden_slice(int64_t first, int64_t rows) {
  const DFlashGolden& g = dflash_golden();
  std::vector<std::vector<float>> hidden;
  for (const auto& layer : g.target_hidden) {
    hidden.emplace_back(layer.begin() + first * g.hidden,
                        layer.begin() + (first + rows) * g.hidden);
  }
  return hidden;
}

}  // namespace mlaspec::model::testing
