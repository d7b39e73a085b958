// The DFlash drafter network against the PyTorch module's goldens, its draft window, and every
// refusal of load / append_context / propose.
#include <gtest/gtest.h>

#include <map>

#include "mlaspec/kvcache/page_table.h"
#include "model/dflash_test_util.h"

namespace mlaspec::model::testing {
namespace {

// Bounds, relative to the largest |logit| of the case (docs/dflash.md says why):
//   vs logits_bf16kv (context K/V rounded to bf16 where the pool stores them): only f32 summation
//   order differs (BLAS vs torch); measured 3.2e-6.
constexpr float kTightRel = 2e-5f;
//   vs logits_f32 (the plain module): the bf16 context K/V move the logits; the golden script
//   measured up to 2.7e-3 on these cases.
constexpr float kLooseRel = 1e-2f;

constexpr int kPageSize = 16;

DFlashNetwork load_net(int64_t window = -1) {
  DFlashOptions o;
  o.draft_window = window;
  return DFlashNetwork::load(dflash_dir(), cached_model(kDFlashTarget), o).value();
}

// A drafter pool with page tables; requests get their pages from the table.
struct DraftSession {
  kv::KvPool pool;
  kv::PageTables tables;
  DraftSession(const DFlashNetwork& net, int num_pages, DType dtype = DType::kBF16)
      : pool(kv::KvPool::create(net.kv_pool_spec(num_pages, kPageSize, dtype)).value()),
        tables(kv::PageTables::create({"draft", num_pages, kPageSize, 8, num_pages}).value()) {}

  // Appends the golden's context rows [first, first + rows) for request `req`.
  Status append(const DFlashNetwork& net, kv::RequestId req, int64_t first, int64_t rows,
                const std::vector<std::vector<float>>& hidden) {
    if (!tables.contains(req)) MLASPEC_RETURN_IF_ERROR(tables.add_request(req));
    MLASPEC_RETURN_IF_ERROR(tables.append(req, rows));
    MLASPEC_RETURN_IF_ERROR(tables.commit(req, tables.pending(req)));
    DFlashContextRows r;
    r.layers = hidden_rows(hidden, first, dflash_golden().hidden);
    r.rows = rows;
    r.first_position = first;
    r.pages = tables.pages(req);
    return net.append_context({&r, 1}, pool);
  }
  DFlashBlock block(kv::RequestId req, int32_t anchor) const {
    DFlashBlock b;
    b.anchor = anchor;
    b.context_len = tables.length(req);
    b.pages = tables.pages(req);
    return b;
  }
};

float rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  return max_abs_diff(a.data(), b.data(), a.size()) / max_abs(b.data(), b.size());
}

void expect_drafts(const std::vector<float>& logits, const DFlashCase& c, int vocab) {
  for (size_t k = 0; k < c.drafts.size(); ++k) {
    EXPECT_EQ(argmax(logits.data() + k * vocab, vocab), c.drafts[k]) << "slot " << k + 1;
  }
}

TEST(DFlashConfig, ReadsTheGoldenConfig) {
  const DFlashConfig c = load_dflash_config(dflash_dir()).value();
  EXPECT_EQ(c.block_size, 5);
  EXPECT_EQ(c.num_draft(), 4);
  EXPECT_EQ(c.target_layer_ids, (std::vector<int>{0, 1}));
  EXPECT_EQ(c.sliding_window, 0);
  EXPECT_EQ(c.kv_width(), 64);
  EXPECT_NE(c.describe().find("num_draft 4"), std::string::npos);
}

TEST(DFlashNetwork, MatchesTheGoldensWithinTheBounds) {
  const DFlashGolden& g = dflash_golden();
  std::map<int64_t, DFlashNetwork> nets;
  float worst_tight = 0.0f, worst_loose = 0.0f;
  for (size_t i = 0; i < g.cases.size(); ++i) {
    const DFlashCase& c = g.cases[i];
    if (!nets.count(c.draft_window)) nets.emplace(c.draft_window, load_net(c.draft_window));
    const DFlashNetwork& net = nets.at(c.draft_window);
    DraftSession s(net, 16);
    // The context in two appends (a prefill and a later commit), split off a page boundary.
    const int64_t first = c.context_len / 3;
    ASSERT_TRUE(s.append(net, 1, 0, first, g.target_hidden).ok());
    ASSERT_TRUE(s.append(net, 1, first, c.context_len - first, g.target_hidden).ok());
    DFlashBlock b = s.block(1, c.anchor);
    ASSERT_EQ(b.context_len, c.context_len);
    ASSERT_TRUE(net.propose({&b, 1}, s.pool).ok());
    const float tight = rel_diff(b.logits, c.logits_bf16kv);
    const float loose = rel_diff(b.logits, c.logits_f32);
    EXPECT_LE(tight, kTightRel) << "case " << i;
    EXPECT_LE(loose, kLooseRel) << "case " << i;
    worst_tight = std::max(worst_tight, tight);
    worst_loose = std::max(worst_loose, loose);
    expect_drafts(b.logits, c, 256);
  }
  std::printf("DFlash goldens: max rel diff %.2e vs bf16-KV reference, %.2e vs f32 module\n",
              worst_tight, worst_loose);
}

TEST(DFlashNetwork, BatchEqualsAloneBitwise) {
  const DFlashGolden& g = dflash_golden();
  const DFlashNetwork net = load_net(0);
  DraftSession s(net, 32);
  std::vector<DFlashBlock> blocks;
  std::vector<const DFlashCase*> cases;
  for (const DFlashCase& c : g.cases) {
    if (c.draft_window != 0) continue;
    const kv::RequestId id = static_cast<kv::RequestId>(cases.size());
    ASSERT_TRUE(s.append(net, id, 0, c.context_len, g.target_hidden).ok());
    cases.push_back(&c);
  }
  for (size_t i = 0; i < cases.size(); ++i) blocks.push_back(s.block(i, cases[i]->anchor));
  ASSERT_TRUE(net.propose(blocks, s.pool).ok());
  for (size_t i = 0; i < cases.size(); ++i) {
    DFlashBlock alone = s.block(i, cases[i]->anchor);
    ASSERT_TRUE(net.propose({&alone, 1}, s.pool).ok());
    EXPECT_EQ(alone.logits, blocks[i].logits) << "request " << i;
    expect_drafts(blocks[i].logits, *cases[i], 256);
  }
}

// With a window W the block reads only context positions [L - W, L): rows before that can hold
// anything. Without the window the same change moves the logits.
TEST(DFlashNetwork, DraftWindowReadsOnlyTheLastPositions) {
  const DFlashGolden& g = dflash_golden();
  const int64_t L = 47, W = 5;
  for (int64_t window : {W, int64_t{0}}) {
    const DFlashNetwork net = load_net(window);
    DraftSession s(net, 16);
    ASSERT_TRUE(s.append(net, 1, 0, L, g.target_hidden).ok());
    DFlashBlock before = s.block(1, g.sequence[L]);
    ASSERT_TRUE(net.propose({&before, 1}, s.pool).ok());
    // Overwrite positions [0, L - W) with other rows (those of positions shifted by one).
    DFlashContextRows r;
    r.layers = hidden_rows(g.target_hidden, 1, g.hidden);
    r.rows = L - W;
    r.first_position = 0;
    r.pages = s.tables.pages(1);
    ASSERT_TRUE(net.append_context({&r, 1}, s.pool).ok());
    DFlashBlock after = s.block(1, g.sequence[L]);
    ASSERT_TRUE(net.propose({&after, 1}, s.pool).ok());
    if (window > 0) {
      EXPECT_EQ(before.logits, after.logits);
    } else {
      EXPECT_NE(before.logits, after.logits);
    }
  }
  EXPECT_EQ(load_net(-1).draft_window(), 0);  // the config's: none
  EXPECT_EQ(load_net(7).draft_window(), 7);
}

// The whole path in mlaspec: the target's own captured hidden states (f32 validation mode) feed
// the drafter; the drafts equal the goldens'.
TEST(DFlashNetwork, TargetCapturedHiddenStatesGiveTheGoldenDrafts) {
  const DFlashGolden& g = dflash_golden();
  Model& target = cached_model(kDFlashTarget);
  Session ts(target, 1);
  ForwardOptions fo;
  fo.capture_layers = load_dflash_config(dflash_dir())->target_layer_ids;
  fo.f32_attention = true;
  const RequestOutput out = ts.run_one(0, g.sequence, LogitsMode::kNone, fo);
  ASSERT_EQ(out.hidden.size(), 2u);
  for (size_t k = 0; k < 2; ++k) {
    EXPECT_LE(max_abs_diff(out.hidden[k].data(), g.target_hidden[k].data(), out.hidden[k].size()),
              1e-4f * max_abs(g.target_hidden[k].data(), g.target_hidden[k].size()));
  }
  const DFlashNetwork net = load_net(0);
  for (const DFlashCase& c : g.cases) {
    if (c.draft_window != 0) continue;
    DraftSession s(net, 16);
    ASSERT_TRUE(s.append(net, 1, 0, c.context_len, out.hidden).ok());
    DFlashBlock b = s.block(1, c.anchor);
    ASSERT_TRUE(net.propose({&b, 1}, s.pool).ok());
    EXPECT_LE(rel_diff(b.logits, c.logits_f32), kLooseRel);
    expect_drafts(b.logits, c, 256);
  }
}

// ---- refusals -----------------------------------------------------------------------------------

// A copy of the golden drafter with config.json edited and tensors edited.
struct EditedDrafter {
  TempDir dir;
  EditedDrafter(const std::function<void(nlohmann::json&)>& edit_config,
                const std::function<void(StTensors&)>& edit_tensors = {}) {
    std::ifstream in(dflash_dir() / "config.json");
    nlohmann::json j = nlohmann::json::parse(in);
    edit_config(j);
    std::ofstream(dir.path() / "config.json") << j.dump(1);
    StTensors t = read_tensors(dflash_dir() / "model.safetensors");
    if (edit_tensors) edit_tensors(t);
    write_file(dir.path() / "model.safetensors", safetensors_bytes(t));
  }
  Status load() const {
    return DFlashNetwork::load(dir.path(), cached_model(kDFlashTarget)).status();
  }
};

void expect_error(const Status& s, StatusCode code, const std::vector<std::string>& parts) {
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), code) << s.to_string();
  for (const std::string& p : parts) {
    EXPECT_NE(s.message().find(p), std::string::npos) << "'" << p << "' not in: " << s.message();
  }
}

TEST(DFlashLoad, VocabAndHiddenMustMatchTheTarget) {
  const Model& target = cached_model(kDFlashTarget);
  ModelConfig other = target.config();
  other.vocab_size = 300;
  expect_error(DFlashNetwork::load(dflash_dir(), other, target.weights().embed_tokens,
                                   target.weights().head())
                   .status(),
               StatusCode::kInvalidArgument, {"vocab_size 256", "target's vocab_size 300"});
  other = target.config();
  other.hidden_size = 128;
  expect_error(DFlashNetwork::load(dflash_dir(), other, target.weights().embed_tokens,
                                   target.weights().head())
                   .status(),
               StatusCode::kInvalidArgument, {"target_hidden_size 64", "target's hidden_size 128"});
  other = target.config();
  other.num_hidden_layers = 1;
  expect_error(DFlashNetwork::load(dflash_dir(), other, target.weights().embed_tokens,
                                   target.weights().head())
                   .status(),
               StatusCode::kInvalidArgument, {"target_layer_ids holds layer 1", "has 1 layers"});
  // Editing both to another size keeps them consistent with each other but not with the target.
  EditedDrafter both([](nlohmann::json& j) {
    j["hidden_size"] = 32;
    j["target_hidden_size"] = 32;
  });
  expect_error(both.load(), StatusCode::kInvalidArgument,
               {"target_hidden_size 32", "target's hidden_size 64"});
  EditedDrafter unequal([](nlohmann::json& j) { j["hidden_size"] = 32; });
  expect_error(unequal.load(), StatusCode::kInvalidArgument,
               {"hidden_size 32 != target_hidden_size 64"});
}

TEST(DFlashLoad, CudaDeviceNeedsACudaBuildAndAGpuAndACudaPool) {
  DFlashOptions o;
  o.device = Device::kCUDA;
  Result<DFlashNetwork> net = DFlashNetwork::load(dflash_dir(), cached_model(kDFlashTarget), o);
  if (!built_with_cuda()) {
    expect_error(net.status(), StatusCode::kUnsupported, {"built without CUDA"});
    return;
  }
  if (!net.ok()) {  // a CUDA build on a machine without a GPU
    expect_error(net.status(), StatusCode::kUnsupported, {"no CUDA device is visible"});
    return;
  }
  // With a GPU: the network's pool is on the device, and a CPU pool is refused by name.
  EXPECT_EQ(net->kv_pool_spec(4, kPageSize).device, Device::kCUDA);
  DraftSession cpu_pool(load_net(), 4);
  DFlashBlock b;
  b.anchor = 1;
  std::vector<DFlashBlock> batch = {b};
  expect_error(net->propose(batch, cpu_pool.pool), StatusCode::kUnsupported,
               {"is on cpu", "runs on cuda"});
}

TEST(DFlashLoad, MissingExtraAndMisShapedTensorsAreNamed) {
  EditedDrafter missing([](nlohmann::json&) {},
                        [](StTensors& t) { t.erase("layers.1.mlp.up_proj.weight"); });
  expect_error(missing.load(), StatusCode::kNotFound,
               {"tensor \"layers.1.mlp.up_proj.weight\" [128, 64] is missing"});
  EditedDrafter shaped([](nlohmann::json& j) { j["intermediate_size"] = 96; });
  expect_error(shaped.load(), StatusCode::kDataLoss,
               {"layers.0.mlp.gate_proj.weight [128, 64] BF16 in ", "model.safetensors",
                "does not match the config's [96, 64]"});
  EditedDrafter extra([](nlohmann::json& j) { j["num_hidden_layers"] = 1; });
  expect_error(extra.load(), StatusCode::kDataLoss, {"layers.1.", "unexpected tensor"});
  EditedDrafter more([](nlohmann::json& j) { j["num_hidden_layers"] = 3; });
  expect_error(more.load(), StatusCode::kNotFound,
               {"tensor \"layers.2.input_layernorm.weight\" [64] is missing"});
  EditedDrafter dtype([](nlohmann::json&) {}, [](StTensors& t) { t["norm.weight"].dtype = "I16"; });
  expect_error(dtype.load(), StatusCode::kUnsupported, {"norm.weight", "I16 is unsupported"});
}

TEST(DFlashLoad, BadConfigValuesAreNamed) {
  const auto parse = [](const std::function<void(nlohmann::json&)>& edit) {
    std::ifstream in(dflash_dir() / "config.json");
    nlohmann::json j = nlohmann::json::parse(in);
    edit(j);
    return parse_dflash_config(j.dump(), "cfg.json").status();
  };
  expect_error(parse([](nlohmann::json& j) { j["block_size"] = 1; }), StatusCode::kInvalidArgument,
               {"cfg.json", "\"block_size\" = 1"});
  expect_error(parse([](nlohmann::json& j) { j.erase("mask_token_id"); }),
               StatusCode::kInvalidArgument, {"\"mask_token_id\" is missing"});
  expect_error(parse([](nlohmann::json& j) { j["mask_token_id"] = 256; }),
               StatusCode::kInvalidArgument, {"\"mask_token_id\" = 256 is out of range"});
  expect_error(parse([](nlohmann::json& j) { j["num_key_value_heads"] = 3; }),
               StatusCode::kInvalidArgument, {"not a multiple of num_key_value_heads 3"});
  expect_error(parse([](nlohmann::json& j) { j["target_layer_ids"] = nlohmann::json::array(); }),
               StatusCode::kInvalidArgument, {"target_layer_ids"});
  expect_error(parse([](nlohmann::json& j) { j["model_type"] = "qwen3"; }),
               StatusCode::kInvalidArgument, {"\"qwen3\" is not a DFlash drafter"});
  EXPECT_EQ(parse_dflash_config("{", "x").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(load_dflash_config("/nonexistent/dflash").status().code(), StatusCode::kNotFound);
  const auto with_window = [](nlohmann::json& j) { j["sliding_window"] = 8; };
  std::ifstream in(dflash_dir() / "config.json");
  nlohmann::json j = nlohmann::json::parse(in);
  with_window(j);
  EXPECT_EQ(parse_dflash_config(j.dump(), "x")->sliding_window, 8);
}

TEST(DFlashNetwork, RefusesBadPoolsAndRequests) {
  const DFlashGolden& g = dflash_golden();
  const DFlashNetwork net = load_net();
  // fp8 pools: the drafter's attention reads bf16 only.
  kv::KvPool fp8 = kv::KvPool::create(net.kv_pool_spec(4, kPageSize, DType::kFP8E4M3)).value();
  DFlashBlock b;
  b.anchor = 1;
  expect_error(net.propose({&b, 1}, fp8), StatusCode::kUnsupported,
               {"fp8_e4m3", "reads bf16 pools only"});
  // A pool of another layout.
  kv::KvPoolSpec wrong = net.kv_pool_spec(4, kPageSize);
  wrong.layout = kv::KvLayout::gqa(4, 32);
  kv::KvPool other = kv::KvPool::create(wrong).value();
  expect_error(net.propose({&b, 1}, other), StatusCode::kInvalidArgument,
               {"gqa(kv_heads=4,head_dim=32)", "needs gqa(kv_heads=2,head_dim=32)"});

  DraftSession s(net, 4);
  ASSERT_TRUE(s.append(net, 1, 0, 20, g.target_hidden).ok());
  b = s.block(1, 256);
  expect_error(net.propose({&b, 1}, s.pool), StatusCode::kInvalidArgument,
               {"anchor token 256 is outside [0, 256)"});
  b = s.block(1, 3);
  b.context_len = 40;  // beyond the request's 2 pages
  expect_error(net.propose({&b, 1}, s.pool), StatusCode::kInvalidArgument,
               {"40 tokens need 3 pages", "has 2"});

  // append_context: wrong number of capture layers; nothing is written on error.
  const std::vector<uint8_t> snapshot(static_cast<const uint8_t*>(s.pool.data()),
                                      static_cast<const uint8_t*>(s.pool.data()) + s.pool.bytes());
  DFlashContextRows ok_rows{hidden_rows(g.target_hidden, 0, g.hidden), 4, 0, s.tables.pages(1)};
  DFlashContextRows one_layer = ok_rows;
  one_layer.layers.pop_back();
  const DFlashContextRows batch[] = {ok_rows, one_layer};
  expect_error(net.append_context(batch, s.pool), StatusCode::kInvalidArgument,
               {"request 1", "1 hidden-state matrices given, the drafter reads 2"});
  DFlashContextRows bad_page = ok_rows;
  const std::vector<int32_t> pages = {0, 99};
  bad_page.pages = pages;
  bad_page.first_position = 16;
  expect_error(net.append_context({&bad_page, 1}, s.pool), StatusCode::kOutOfRange,
               {"page 99 at index 1 is outside [0, 4)"});
  EXPECT_EQ(0, std::memcmp(snapshot.data(), s.pool.data(), snapshot.size()));
}

}  // namespace
}  // namespace mlaspec::model::testing
