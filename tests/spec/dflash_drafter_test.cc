// The DFlash drafter behind the Drafter interface: golden drafts through add_request /
// append_context / commit / propose, the pool holding exactly the committed context, the draft
// pool's dtype beside an fp8 target, sampling drafts, errors, and the speculative loop with the
// real target (greedy output equals the golden greedy continuation).
#include "mlaspec/spec/dflash_drafter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "mlaspec/kvcache/page_table.h"
#include "mlaspec/spec/acceptor.h"
#include "model/dflash_test_util.h"

namespace mlaspec::spec {
namespace {

using model::testing::cached_model;
using model::testing::dflash_dir;
using model::testing::dflash_golden;
using model::testing::DFlashCase;
using model::testing::kDFlashTarget;

constexpr int kVocab = 256;

std::unique_ptr<DFlashDrafter> make(DFlashDrafterConfig config = {}) {
  config.page_size = config.page_size == 64 ? 16 : config.page_size;
  config.max_requests = 4;
  config.max_tokens_per_request = 128;
  return DFlashDrafter::create(
             model::DFlashNetwork::load(dflash_dir(), cached_model(kDFlashTarget)).value(), config)
      .value();
}

// Golden context rows [first, first + rows) for request id.
Status append(DFlashDrafter& d, RequestId id, int64_t first, int64_t rows) {
  const std::vector<std::vector<float>> hidden = model::testing::golden_hidden_slice(first, rows);
  return d.append_context(id, ContextRows{hidden, 0, rows, first});
}

const DFlashCase& golden_case(int64_t L) {
  for (const DFlashCase& c : dflash_golden().cases) {
    if (c.context_len == L && c.draft_window == 0) return c;
  }
  throw Error(not_found("no golden case"));
}

std::vector<int32_t> prefix(int64_t n) {
  return model::testing::golden_prefix(n);
}

std::vector<int32_t> propose_one(DFlashDrafter& d, RequestId id, int max_draft = 4) {
  DraftSlot slot{id, max_draft, {}, {}};
  EXPECT_TRUE(d.propose({&slot, 1}).ok());
  return slot.tokens;
}

// An engine step appends for every request before the next propose: the rows wait and are written
// in one network call, each request's drafts those of its own context (golden), and a request
// removed while its rows wait leaves nothing in the pool.
TEST(DFlashDrafter, AppendsOfSeveralRequestsAreWrittenTogether) {
  auto d = make();
  const auto& seq = dflash_golden().sequence;
  ASSERT_TRUE(d->add_request(1, prefix(10), {}).ok());
  ASSERT_TRUE(d->add_request(2, prefix(10), {}).ok());
  ASSERT_TRUE(d->add_request(3, prefix(10), {}).ok());
  ASSERT_TRUE(append(*d, 1, 0, 9).ok());
  ASSERT_TRUE(append(*d, 2, 0, 9).ok());
  ASSERT_TRUE(append(*d, 3, 0, 9).ok());
  // Request 2 goes on to 30 positions in two more appends before any propose.
  ASSERT_TRUE(append(*d, 2, 9, 12).ok());
  ASSERT_TRUE(d->commit(2, {seq.data() + 10, 12}).ok());
  ASSERT_TRUE(append(*d, 2, 21, 9).ok());
  ASSERT_TRUE(d->commit(2, {seq.data() + 22, 9}).ok());
  EXPECT_EQ(d->context_len(2), 30);
  ASSERT_TRUE(d->remove_request(3).ok());
  std::vector<DraftSlot> slots = {{1, 4, {}, {}}, {2, 4, {}, {}}};
  ASSERT_TRUE(d->propose(slots).ok());
  EXPECT_EQ(slots[0].tokens, golden_case(9).drafts);
  EXPECT_EQ(slots[1].tokens, golden_case(30).drafts);
  // 9 + 30 rows written in each layer; request 3's 9 never were.
  const int64_t row = d->pool().row_elems();
  for (int l = 0; l < d->pool().num_layers(); ++l) {
    const auto* base = static_cast<const uint16_t*>(d->pool().layer_tensor(l).data());
    int64_t written = 0;
    for (int64_t slot = 0; slot < d->pool().num_slots(); ++slot) {
      written += std::any_of(base + slot * row, base + (slot + 1) * row,
                             [](uint16_t v) { return v != 0; });
    }
    EXPECT_EQ(written, 39) << "layer " << l;
  }
}

TEST(DFlashDrafter, GoldenDraftsThroughTheInterface) {
  auto d = make();
  EXPECT_EQ(d->name(), "dflash");
  EXPECT_EQ(d->num_draft(), 4);
  EXPECT_EQ(d->capture_layers(), (std::vector<int>{0, 1}));
  // A prompt of 10 tokens: context = positions 0..8, anchor = token 9.
  ASSERT_TRUE(d->add_request(7, prefix(10), {}).ok());
  ASSERT_TRUE(append(*d, 7, 0, 9).ok());
  EXPECT_EQ(propose_one(*d, 7), golden_case(9).drafts);
  EXPECT_EQ(propose_one(*d, 7, 2),
            std::vector<int32_t>(golden_case(9).drafts.begin(), golden_case(9).drafts.begin() + 2));
  EXPECT_TRUE(propose_one(*d, 7, 0).empty());
  EXPECT_EQ(propose_one(*d, 7, 9).size(), 4u);  // at most num_draft

  // Steps commit tokens 10..30 in pieces, with the rows of the anchors and accepted drafts.
  const auto& seq = dflash_golden().sequence;
  int64_t pos = 10;
  for (int64_t n : {3, 1, 7, 10}) {
    ASSERT_TRUE(append(*d, 7, pos - 1, n).ok());  // verify rows 0 .. n-1: anchor + accepted
    ASSERT_TRUE(d->commit(7, {seq.data() + pos, static_cast<size_t>(n)}).ok());
    pos += n;
  }
  ASSERT_EQ(pos, 31);
  EXPECT_EQ(d->context_len(7), 30);
  EXPECT_EQ(propose_one(*d, 7), golden_case(30).drafts);

  // The pool holds exactly the committed context: 30 rows on pages_for(30) pages, no other row
  // written (the pool starts zeroed; rejected drafts never reach it), each equal to the row one
  // append of all 30 positions writes, up to one bf16 rounding (BLAS may sum a 30-row GEMM in
  // another order than a 3-row one).
  EXPECT_EQ(d->page_tables().used_pages(), d->page_tables().pages_for(30));
  EXPECT_TRUE(d->page_tables().check_invariants().ok());
  auto fresh = make();
  ASSERT_TRUE(fresh->add_request(7, prefix(31), {}).ok());
  ASSERT_TRUE(append(*fresh, 7, 0, 30).ok());
  // Appended rows wait for the next propose; flush_context writes them now.
  for (int l = 0; l < fresh->pool().num_layers(); ++l) {
    const auto* fbase = static_cast<const uint16_t*>(fresh->pool().layer_tensor(l).data());
    EXPECT_TRUE(std::all_of(fbase, fbase + fresh->pool().num_slots() * fresh->pool().row_elems(),
                            [](uint16_t v) { return v == 0; }))
        << "layer " << l << ": written before flush_context";
  }
  ASSERT_TRUE(fresh->flush_context().ok());
  const int64_t row = d->pool().row_elems();
  for (int l = 0; l < d->pool().num_layers(); ++l) {
    const auto* base = static_cast<const uint16_t*>(d->pool().layer_tensor(l).data());
    const auto* fbase = static_cast<const uint16_t*>(fresh->pool().layer_tensor(l).data());
    int64_t written = 0;
    for (int64_t slot = 0; slot < d->pool().num_slots(); ++slot) {
      bool any = false;
      for (int64_t i = 0; i < row; ++i) any = any || base[slot * row + i] != 0;
      written += any;
    }
    EXPECT_EQ(written, 30) << "layer " << l;
    for (int64_t p = 0; p < 30; ++p) {
      int32_t a = 0, b = 0;
      ASSERT_TRUE(d->page_tables().token_slots(7, p, 1, &a).ok());
      ASSERT_TRUE(fresh->page_tables().token_slots(7, p, 1, &b).ok());
      for (int64_t i = 0; i < row; ++i) {
        const float x = bf16_bits_to_float(base[a * row + i]);
        const float y = bf16_bits_to_float(fbase[b * row + i]);
        ASSERT_LE(std::fabs(x - y), std::fabs(y) * 0x1p-7f + 1e-30f) << l << " " << p << " " << i;
      }
    }
  }
  ASSERT_TRUE(d->remove_request(7).ok());
  EXPECT_EQ(d->page_tables().used_pages(), 0);
}

TEST(DFlashDrafter, BatchOfRequests) {
  auto d = make();
  const std::vector<int64_t> lens = {1, 9, 30, 47};
  std::vector<DraftSlot> slots;
  for (size_t i = 0; i < lens.size(); ++i) {
    ASSERT_TRUE(d->add_request(static_cast<RequestId>(i), prefix(lens[i] + 1), {}).ok());
    ASSERT_TRUE(append(*d, static_cast<RequestId>(i), 0, lens[i]).ok());
    slots.push_back(DraftSlot{static_cast<RequestId>(i), 4, {}, {}});
  }
  ASSERT_TRUE(d->propose(slots).ok());
  for (size_t i = 0; i < lens.size(); ++i) {
    EXPECT_EQ(slots[i].tokens, golden_case(lens[i]).drafts) << i;
    EXPECT_TRUE(slots[i].probs.empty());
  }
}

// The rule gives the drafter a bf16 pool beside an fp8 target (its attention reads bf16 only);
// the drafts are the same. Forcing an fp8 draft pool is refused with the reason.
TEST(DFlashDrafter, Bf16DraftPoolBesideAnFp8Target) {
  DFlashDrafterConfig c;
  c.target_kv_dtype = DType::kFP8E4M3;
  auto d = make(c);
  EXPECT_EQ(d->pool().dtype(), DType::kBF16);
  EXPECT_NE(d->pool_dtype_reason().find("fp8_e4m3"), std::string::npos) << d->pool_dtype_reason();
  ASSERT_TRUE(d->add_request(1, prefix(31), {}).ok());
  ASSERT_TRUE(append(*d, 1, 0, 30).ok());
  EXPECT_EQ(propose_one(*d, 1), golden_case(30).drafts);

  c.pool_dtype = DType::kFP8E4M3;
  const Status s =
      DFlashDrafter::create(
          model::DFlashNetwork::load(dflash_dir(), cached_model(kDFlashTarget)).value(), c)
          .status();
  EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.to_string();
  EXPECT_NE(s.message().find("dflash_cpu"), std::string::npos) << s.to_string();
}

TEST(DFlashDrafter, SamplingDraftsCarryTheirDistributions) {
  auto d = make();
  model::SamplingParams sp;
  sp.temperature = 1.0f;
  sp.top_k = 20;
  sp.seed = 5;
  ASSERT_TRUE(d->add_request(1, prefix(31), sp).ok());
  ASSERT_TRUE(append(*d, 1, 0, 30).ok());
  DraftSlot a{1, 4, {}, {}}, b{1, 4, {}, {}};
  ASSERT_TRUE(d->propose({&a, 1}).ok());
  ASSERT_TRUE(d->propose({&b, 1}).ok());
  EXPECT_EQ(a.tokens, b.tokens);  // the kDraft draws are a function of (seed, position)
  ASSERT_EQ(a.tokens.size(), 4u);
  ASSERT_EQ(a.probs.size(), 4u * kVocab);
  for (int k = 0; k < 4; ++k) {
    double sum = 0.0;
    int nonzero = 0;
    for (int v = 0; v < kVocab; ++v) {
      sum += a.probs[static_cast<size_t>(k * kVocab + v)];
      nonzero += a.probs[static_cast<size_t>(k * kVocab + v)] > 0.0f;
    }
    EXPECT_NEAR(sum, 1.0, 1e-5);
    EXPECT_LE(nonzero, 20);
    EXPECT_GT(a.probs[static_cast<size_t>(k * kVocab + a.tokens[static_cast<size_t>(k)])], 0.0f);
  }
}

TEST(DFlashDrafter, Errors) {
  auto d = make();
  ASSERT_TRUE(d->add_request(1, prefix(10), {}).ok());
  EXPECT_EQ(d->add_request(1, prefix(3), {}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(d->add_request(2, {{999}}, {}).code(), StatusCode::kInvalidArgument);
  DraftSlot unknown{9, 4, {}, {}};
  EXPECT_EQ(d->propose({&unknown, 1}).code(), StatusCode::kNotFound);
  EXPECT_EQ(d->commit(9, {}).code(), StatusCode::kNotFound);
  EXPECT_EQ(d->remove_request(9).code(), StatusCode::kNotFound);
  EXPECT_EQ(append(*d, 9, 0, 1).code(), StatusCode::kNotFound);

  // Proposing before the context covers every committed token but the anchor.
  DraftSlot slot{1, 4, {}, {}};
  Status s = d->propose({&slot, 1});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("anchor (its last committed token) sits at position 9 but the "
                             "drafter holds context for positions [0, 0)"),
            std::string::npos)
      << s.message();
  // A gap in the context.
  s = append(*d, 1, 2, 3);
  EXPECT_NE(s.message().find("start at position 2 but the drafter holds positions [0, 0)"),
            std::string::npos)
      << s.message();
  // Too few rows in the matrices, the wrong number of layers.
  std::vector<std::vector<float>> short_rows(2, std::vector<float>(64 * 2));
  s = d->append_context(1, ContextRows{short_rows, 0, 3, 0});
  EXPECT_NE(s.message().find("capture layer 0 holds 128 values, rows [0, 3) of width 64 need 192"),
            std::string::npos)
      << s.message();
  std::vector<std::vector<float>> one_layer(1, std::vector<float>(64 * 3));
  s = d->append_context(1, ContextRows{one_layer, 0, 3, 0});
  EXPECT_NE(s.message().find("1 hidden-state matrices given, the drafter captures 2"),
            std::string::npos)
      << s.message();
  // Past the per-request limit (128 tokens) or the pool's pages: the request stays as it was.
  ASSERT_TRUE(append(*d, 1, 0, 9).ok());
  std::vector<std::vector<float>> many(2, std::vector<float>(64 * 200));
  s = d->append_context(1, ContextRows{many, 0, 200, 9});
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange) << s.to_string();
  EXPECT_EQ(d->context_len(1), 9);
  EXPECT_EQ(propose_one(*d, 1), golden_case(9).drafts);
  DFlashDrafterConfig small;
  small.num_pages = 2;
  auto tiny = make(small);
  ASSERT_TRUE(tiny->add_request(1, prefix(10), {}).ok());
  ASSERT_TRUE(append(*tiny, 1, 0, 9).ok());
  s = tiny->append_context(1, ContextRows{many, 0, 30, 9});
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.to_string();
  EXPECT_EQ(tiny->context_len(1), 9);
  EXPECT_EQ(tiny->page_tables().used_pages(), 1);
}

// The speculative loop with the real target, as the engine runs it: prefill with capture, then
// draft -> verify (capturing) -> greedy accept -> commit (target pages, drafter context rows of
// the anchor and the accepted drafts, the emitted tokens). The output is the golden greedy
// continuation of the target; the drafter only changes how many steps it takes.
TEST(DFlashDrafter, SpeculativeLoopGivesTheGreedyContinuation) {
  model::Model& m = cached_model(kDFlashTarget);
  const model::testing::Golden golden = model::testing::load_golden(kDFlashTarget);
  auto d = make();
  for (const model::testing::GoldenPrompt& g : golden.prompts) {
    kv::KvPool pool = kv::KvPool::create(m.kv_pool_spec(64, 4, DType::kBF16)).value();
    kv::PageTables tables = kv::PageTables::create({"target", 64, 4, 1, 64}).value();
    const RequestId id = 3;
    ASSERT_TRUE(tables.add_request(id).ok());
    model::ForwardOptions fo;
    fo.capture_layers = d->capture_layers();
    auto forward = [&](const std::vector<int32_t>& tokens, model::LogitsMode mode) {
      const int64_t start = tables.length(id);
      EXPECT_TRUE(tables.append(id, static_cast<int64_t>(tokens.size())).ok());
      std::vector<int32_t> pos(tokens.size());
      std::iota(pos.begin(), pos.end(), static_cast<int32_t>(start));
      const std::vector<int32_t> table(tables.pages(id).begin(), tables.pages(id).end());
      model::ForwardRequest r{tokens, pos, table, mode};
      return m.forward({&r, 1}, pool, fo).value().requests[0];
    };

    ASSERT_TRUE(d->add_request(id, g.prompt, {}).ok());
    model::RequestOutput out = forward(g.prompt, model::LogitsMode::kLast);
    ASSERT_TRUE(tables.commit(id, static_cast<int64_t>(g.prompt.size())).ok());
    ASSERT_TRUE(
        d->append_context(id, {out.hidden, 0, static_cast<int64_t>(g.prompt.size()), 0}).ok());
    std::vector<int32_t> generated = {model::testing::argmax(out.logits.data(), kVocab)};
    ASSERT_TRUE(d->commit(id, generated).ok());
    int steps = 0, accepted_total = 0;
    while (generated.size() < g.continuation.size()) {
      const int64_t anchor_pos = tables.length(id);
      DraftSlot slot{id, 4, {}, {}};
      ASSERT_TRUE(d->propose({&slot, 1}).ok());
      std::vector<int32_t> block = {generated.back()};
      block.insert(block.end(), slot.tokens.begin(), slot.tokens.end());
      out = forward(block, model::LogitsMode::kAll);
      const Acceptance acc = accept_greedy_logits(slot.tokens, out.logits, kVocab).value();
      ASSERT_TRUE(tables.commit(id, acc.num_accepted + 1).ok());
      ASSERT_TRUE(d->append_context(id, {out.hidden, 0, acc.num_accepted + 1, anchor_pos}).ok());
      ASSERT_TRUE(d->commit(id, acc.tokens).ok());
      generated.insert(generated.end(), acc.tokens.begin(), acc.tokens.end());
      EXPECT_EQ(d->context_len(id), tables.length(id));
      accepted_total += acc.num_accepted;
      ++steps;
    }
    generated.resize(g.continuation.size());
    EXPECT_EQ(generated, g.continuation);
    std::printf("dflash loop: %d steps, %d drafts accepted for %zu tokens\n", steps, accepted_total,
                generated.size());
    ASSERT_TRUE(d->remove_request(id).ok());
  }
}

}  // namespace
}  // namespace mlaspec::spec
