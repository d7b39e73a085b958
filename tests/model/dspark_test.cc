// The DSpark network (DFlash backbone + Markov and confidence heads) against the PyTorch module's
// goldens (python/dspark/make_golden.py), and its config / tensor refusals naming the key.
#include "mlaspec/model/dspark.h"

#include <gtest/gtest.h>

#include "mlaspec/kvcache/page_table.h"
#include "model/dflash_test_util.h"

namespace mlaspec::model::testing {
namespace {

// DFlash's tight bound (tests/model/dflash_test.cc): the references keep the context K/V in bf16
// as the pool does, so only f32 summation order differs. Relative to the largest |logit|.
constexpr float kTightRel = 2e-5f;
// Confidences: a sigmoid of a dot product of the same hidden states.
constexpr float kConfidenceAbs = 1e-4f;
constexpr int kPageSize = 16;
constexpr int kVocab = 256;

struct DSparkCase {
  int64_t context_len = 0, draft_window = 0;
  int32_t anchor = 0;
  std::vector<int32_t> drafts, forced;
  std::vector<float> logits, forced_logits, confidence;
};

std::vector<DSparkCase> dspark_cases() {
  std::ifstream in(dspark_dir() / "goldens.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  SafetensorsFile f = SafetensorsFile::open(dspark_dir() / "goldens.safetensors").value();
  std::vector<DSparkCase> out;
  int i = 0;
  for (const auto& c : j["cases"]) {
    DSparkCase d;
    d.context_len = c["context_len"].get<int64_t>();
    d.draft_window = c["draft_window"].get<int64_t>();
    d.anchor = c["anchor"].get<int32_t>();
    d.drafts = c["drafts"].get<std::vector<int32_t>>();
    d.forced = c["forced"].get<std::vector<int32_t>>();
    const std::string pre = "c" + std::to_string(i++) + ".";
    d.logits = tensor_f32(f, pre + "logits");
    d.forced_logits = tensor_f32(f, pre + "forced_logits");
    d.confidence = tensor_f32(f, pre + "confidence");
    out.push_back(std::move(d));
  }
  return out;
}

float rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  return max_abs_diff(a.data(), b.data(), a.size()) / max_abs(b.data(), b.size());
}

TEST(DSparkConfig, ReadsTheGoldenConfig) {
  const DSparkConfig c = load_dspark_config(dspark_dir()).value();
  EXPECT_EQ(c.gamma(), 4);
  EXPECT_EQ(c.backbone.block_size, 5);
  EXPECT_EQ(c.markov_rank, 16);
  EXPECT_TRUE(c.confidence_head);
  EXPECT_NE(c.describe().find("dspark: "), std::string::npos) << c.describe();
  EXPECT_NE(c.describe().find("markov_rank 16"), std::string::npos) << c.describe();
}

TEST(DSparkNetwork, MatchesTheGoldensWithinTheBounds) {
  const DFlashGolden& g = dflash_golden();  // the same target hidden states
  float worst = 0.0f, worst_conf = 0.0f;
  int changed = 0;
  for (const DSparkCase& c : dspark_cases()) {
    DFlashOptions o;
    o.draft_window = c.draft_window;
    DSparkNetwork net = DSparkNetwork::load(dspark_dir(), cached_model(kDFlashTarget), o).value();
    kv::KvPool pool =
        kv::KvPool::create(net.backbone.kv_pool_spec(16, kPageSize, DType::kBF16)).value();
    kv::PageTables tables = kv::PageTables::create({"draft", 16, kPageSize, 8, 16}).value();
    ASSERT_TRUE(tables.add_request(1).ok());
    ASSERT_TRUE(tables.append(1, c.context_len).ok());
    ASSERT_TRUE(tables.commit(1, c.context_len).ok());
    DFlashContextRows rows;
    rows.layers = hidden_rows(g.target_hidden, 0, g.hidden);
    rows.rows = c.context_len;
    rows.pages = tables.pages(1);
    ASSERT_TRUE(net.backbone.append_context({&rows, 1}, pool).ok());
    DFlashBlock b;
    b.anchor = c.anchor;
    b.context_len = c.context_len;
    b.pages = tables.pages(1);
    ASSERT_TRUE(net.backbone.propose({&b, 1}, pool).ok());
    // Greedy left to right: each slot's argmax is the golden draft and feeds the next slot.
    const std::vector<float> greedy = net.slot_logits(b, c.drafts);
    for (int k = 0; k < net.gamma(); ++k) {
      EXPECT_EQ(argmax(greedy.data() + k * kVocab, kVocab), c.drafts[static_cast<size_t>(k)])
          << "slot " << k + 1;
    }
    const std::vector<float> forced = net.slot_logits(b, c.forced);
    worst = std::max({worst, rel_diff(greedy, c.logits), rel_diff(forced, c.forced_logits)});
    const std::vector<float> conf = net.confidences(b);
    worst_conf = std::max(worst_conf, max_abs_diff(conf.data(), c.confidence.data(), conf.size()));
    // The Markov head matters: without it some slot's argmax differs.
    for (int k = 0; k < net.gamma(); ++k) {
      if (argmax(b.logits.data() + k * kVocab, kVocab) != c.drafts[static_cast<size_t>(k)]) {
        ++changed;
        break;
      }
    }
  }
  EXPECT_LE(worst, kTightRel);
  EXPECT_LE(worst_conf, kConfidenceAbs);
  EXPECT_GE(changed, 2);
  std::printf(
      "DSpark goldens: max rel diff %.2e (logits), %.2e (confidences); %d cases the "
      "Markov head changes\n",
      worst, worst_conf, changed);
}

// The golden config with one key changed ("" removes it).
std::string config_with(const std::string& key, const std::string& value) {
  std::ifstream in(dspark_dir() / "config.json");
  nlohmann::json j = nlohmann::json::parse(in);
  if (value.empty()) {
    j.erase(key);
  } else {
    j[key] = nlohmann::json::parse(value);
  }
  return j.dump();
}

TEST(DSparkConfig, BadValuesNameTheKey) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"markov_rank", ""},     {"markov_rank", "-1"},
      {"markov_rank", "257"},  {"markov_rank", "\"16\""},
      {"confidence_head", ""}, {"confidence_head", "1"},
      {"gamma", "5"},          {"model_type", "\"dflash\""},
      {"block_size", "1"},
  };
  for (const auto& [key, value] : bad) {
    Result<DSparkConfig> c = parse_dspark_config(config_with(key, value), "cfg.json");
    ASSERT_FALSE(c.ok()) << key << " = " << value;
    EXPECT_NE(c.status().message().find(key), std::string::npos) << c.status().message();
    EXPECT_NE(c.status().message().find("cfg.json"), std::string::npos) << c.status().message();
  }
  EXPECT_TRUE(parse_dspark_config(config_with("gamma", ""), "cfg.json").ok());
  // A DSpark config reads as its backbone's DFlash config.
  EXPECT_TRUE(parse_dflash_config(config_with("gamma", "4"), "cfg.json").ok());
}

TEST(DSparkLoad, HeadTensorsMustMatchTheConfig) {
  const Checkpoint ckpt = Checkpoint::open(dspark_dir()).value();
  DSparkConfig c = load_dspark_config(dspark_dir()).value();
  // The golden's heads load; a rank the tensors do not have is named with the tensor.
  ASSERT_TRUE(load_dspark_heads(c, ckpt).ok());
  c.markov_rank = 8;
  Result<DSparkHeads> r = load_dspark_heads(c, ckpt);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("markov.w1"), std::string::npos) << r.status().message();
  // Heads the config leaves out must not be in the checkpoint.
  c.markov_rank = 0;
  r = load_dspark_heads(c, ckpt);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("unexpected tensor"), std::string::npos)
      << r.status().message();
  // The DFlash loader takes the backbone of a DSpark checkpoint and leaves the heads alone.
  EXPECT_TRUE(DFlashNetwork::load(dspark_dir(), cached_model(kDFlashTarget)).ok());
}

}  // namespace
}  // namespace mlaspec::model::testing
