// PageTables: semantics, errors, and randomized operation sequences checked against a simple
// model of the pool (no page owned twice, none leaked, committed rows intact).
#include "mlaspec/kvcache/page_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "mlaspec/kvcache/pool.h"
#include "mlaspec/kvcache/writer.h"

namespace mlaspec::kv {
namespace {

PageTables make_tables(int num_pages, int page_size, int max_requests, int max_pages) {
  PageTablesSpec s;
  s.name = "test";
  s.num_pages = num_pages;
  s.page_size = page_size;
  s.max_requests = max_requests;
  s.max_pages_per_request = max_pages;
  return PageTables::create(s).value();
}

std::vector<int32_t> to_vec(std::span<const int32_t> s) {
  return {s.begin(), s.end()};
}

TEST(PageTables, AppendCommitRollbackFree) {
  PageTables t = make_tables(8, 4, 2, 8);
  ASSERT_TRUE(t.add_request(7).ok());
  ASSERT_TRUE(t.append(7, 5).ok());
  EXPECT_EQ(t.length(7), 5);
  EXPECT_EQ(t.pending(7), 5);
  EXPECT_EQ(t.committed(7), 0);
  EXPECT_EQ(t.pages(7).size(), 2u);
  EXPECT_EQ(t.free_pages(), 6);
  ASSERT_TRUE(t.commit(7, 5).ok());
  EXPECT_EQ(t.committed(7), 5);
  // Verify step: append 8, accept 2 -> length 7, needs 2 pages; the 3rd and 4th return.
  ASSERT_TRUE(t.append(7, 8).ok());
  EXPECT_EQ(t.length(7), 13);
  EXPECT_EQ(t.pages(7).size(), 4u);
  EXPECT_EQ(t.free_pages(), 4);
  const std::vector<int32_t> before = to_vec(t.pages(7));
  ASSERT_TRUE(t.commit(7, 2).ok());
  EXPECT_EQ(t.length(7), 7);
  EXPECT_EQ(t.pending(7), 0);
  EXPECT_EQ(t.pages(7).size(), 2u);
  EXPECT_EQ(to_vec(t.pages(7)), std::vector<int32_t>(before.begin(), before.begin() + 2));
  EXPECT_EQ(t.free_pages(), 6);
  // Appends accumulate until commit; rollback keeps nothing new.
  ASSERT_TRUE(t.append(7, 1).ok());
  ASSERT_TRUE(t.append(7, 2).ok());
  EXPECT_EQ(t.pending(7), 3);
  ASSERT_TRUE(t.rollback(7).ok());
  EXPECT_EQ(t.length(7), 7);
  EXPECT_EQ(t.free_pages(), 6);
  ASSERT_TRUE(t.check_invariants().ok());
  ASSERT_TRUE(t.free(7).ok());
  EXPECT_EQ(t.free_pages(), 8);
  EXPECT_FALSE(t.contains(7));
  EXPECT_TRUE(t.check_invariants().ok());
}

TEST(PageTables, RowsAndSeqLensAreTheBackingMemory) {
  PageTables t = make_tables(8, 4, 3, 4);
  ASSERT_TRUE(t.add_request(1).ok());
  ASSERT_TRUE(t.add_request(2).ok());
  ASSERT_TRUE(t.append(2, 6).ok());
  const int slot = t.slot_of(2).value();
  EXPECT_EQ(slot, 1);
  const int32_t* row = t.table_row(slot);
  EXPECT_EQ(row[0], t.pages(2)[0]);
  EXPECT_EQ(row[1], t.pages(2)[1]);
  EXPECT_EQ(row[2], -1);
  EXPECT_EQ(row[3], -1);
  EXPECT_EQ(t.seq_lens_data()[slot], 6);
  EXPECT_EQ(t.seq_lens_data()[0], 0);
  ASSERT_TRUE(t.commit(2, 3).ok());
  EXPECT_EQ(row[1], -1);
  EXPECT_EQ(t.seq_lens_data()[slot], 3);
}

TEST(PageTables, TokenSlots) {
  PageTables t = make_tables(8, 4, 1, 8);
  ASSERT_TRUE(t.add_request(3).ok());
  ASSERT_TRUE(t.append(3, 10).ok());
  std::vector<int32_t> slots(10);
  ASSERT_TRUE(t.token_slots(3, 0, 10, slots.data()).ok());
  const auto pages = t.pages(3);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(slots[i], pages[i / 4] * 4 + i % 4) << i;
  ASSERT_TRUE(t.commit(3, 6).ok());
  ASSERT_TRUE(t.append(3, 3).ok());
  std::vector<int32_t> pend;
  ASSERT_TRUE(t.pending_slots(3, &pend).ok());
  ASSERT_EQ(pend.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(pend[i], t.pages(3)[(6 + i) / 4] * 4 + (6 + i) % 4);
  Status st = t.token_slots(3, 5, 5, slots.data());
  EXPECT_EQ(st.code(), StatusCode::kOutOfRange);
  EXPECT_NE(st.message().find("pass its length 9"), std::string::npos) << st.message();
}

TEST(PageTables, ErrorsNameValueAndLimit) {
  PageTables t = make_tables(4, 4, 2, 3);
  Status st = t.append(7, 1);
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_NE(st.message().find("request 7 unknown"), std::string::npos) << st.message();
  EXPECT_EQ(t.commit(7, 0).code(), StatusCode::kNotFound);
  EXPECT_EQ(t.free(7).code(), StatusCode::kNotFound);

  ASSERT_TRUE(t.add_request(7).ok());
  st = t.add_request(7);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("already exists"), std::string::npos) << st.message();

  ASSERT_TRUE(t.append(7, 8).ok());
  st = t.commit(7, 9);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("commit 9 exceeds the 8 tokens appended"), std::string::npos)
      << st.message();
  EXPECT_EQ(t.length(7), 8);  // unchanged
  EXPECT_EQ(t.commit(7, -1).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(t.append(7, -1).code(), StatusCode::kInvalidArgument);

  // Per-request limit: 3 pages of 4.
  st = t.append(7, 5);
  EXPECT_EQ(st.code(), StatusCode::kOutOfRange);
  EXPECT_NE(st.message().find("over the per-request limit 12"), std::string::npos) << st.message();

  // Pool exhaustion: 2 pages left, request 8 asks for 3.
  ASSERT_TRUE(t.add_request(8).ok());
  st = t.append(8, 9);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(st.message().find("needs 3 more pages, 2 of 4 free"), std::string::npos)
      << st.message();
  EXPECT_FALSE(t.can_append(8, 9));
  EXPECT_TRUE(t.can_append(8, 8));

  // Slots.
  st = t.add_request(9);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(st.message().find("all 2 request slots are in use"), std::string::npos);
  ASSERT_TRUE(t.free(8).ok());
  EXPECT_EQ(t.add_request(9, 0).code(), StatusCode::kInvalidArgument);  // slot 0 held by 7
  EXPECT_EQ(t.add_request(9, 2).code(), StatusCode::kOutOfRange);
  EXPECT_TRUE(t.add_request(9, 1).ok());

  EXPECT_EQ(t.window(7, 0).status().code(), StatusCode::kInvalidArgument);

  PageTablesSpec bad;
  bad.num_pages = 0;
  EXPECT_EQ(PageTables::create(bad).status().code(), StatusCode::kInvalidArgument);
  bad = PageTablesSpec{};
  bad.max_pages_per_request = 1 << 20;
  bad.page_size = 1 << 12;
  EXPECT_EQ(PageTables::create(bad).status().code(), StatusCode::kInvalidArgument);
}

TEST(PageTables, ExhaustionMidSequenceLosesNothingCommitted) {
  // 10 pages of 4 tokens, three requests, then a verify step of 8 tokens each that does not fit.
  PageTables t = make_tables(10, 4, 3, 8);
  for (RequestId r : {0, 1, 2}) ASSERT_TRUE(t.add_request(r).ok());
  ASSERT_TRUE(t.append(0, 6).ok());
  ASSERT_TRUE(t.append(1, 9).ok());
  ASSERT_TRUE(t.append(2, 3).ok());
  for (RequestId r : {0, 1, 2}) ASSERT_TRUE(t.commit(r, t.pending(r)).ok());
  EXPECT_EQ(t.free_pages(), 10 - 2 - 3 - 1);
  const std::vector<int32_t> p0 = to_vec(t.pages(0)), p1 = to_vec(t.pages(1)),
                             p2 = to_vec(t.pages(2));

  ASSERT_TRUE(t.append(0, 8).ok());  // 14 tokens -> 4 pages (+2)
  ASSERT_TRUE(t.append(1, 8).ok());  // 17 tokens -> 5 pages (+2)
  Status st = t.append(2, 8);        // 11 tokens -> 3 pages (+2), 0 free
  ASSERT_EQ(st.code(), StatusCode::kResourceExhausted) << st.to_string();
  // Request 2 is exactly as before; the others keep their appended and committed state.
  EXPECT_EQ(to_vec(t.pages(2)), p2);
  EXPECT_EQ(t.length(2), 3);
  EXPECT_EQ(t.pending(2), 0);
  EXPECT_EQ(t.length(0), 14);
  EXPECT_EQ(t.length(1), 17);
  ASSERT_TRUE(t.check_invariants().ok());

  // Accept 1 and 3: pages not needed come back and request 2 can retry.
  ASSERT_TRUE(t.commit(0, 1).ok());
  ASSERT_TRUE(t.commit(1, 3).ok());
  EXPECT_EQ(to_vec(t.pages(0)), p0);
  EXPECT_EQ(to_vec(t.pages(1)), p1);
  EXPECT_EQ(t.free_pages(), 4);
  ASSERT_TRUE(t.append(2, 8).ok());
  EXPECT_EQ(std::vector<int32_t>(t.pages(2).begin(), t.pages(2).begin() + 1), p2);
  ASSERT_TRUE(t.check_invariants().ok());
}

TEST(PageTables, SlidingWindowIsPageAligned) {
  PageTables t = make_tables(16, 4, 1, 16);
  ASSERT_TRUE(t.add_request(1).ok());
  struct Case {
    int64_t len, window;
    int first_page;
    int seq_len;
  };
  // seq_len = len - first_page * 4, first_page = floor(max(0, len - W) / 4).
  const Case cases[] = {
      {0, 8, 0, 0},  {3, 8, 0, 3},   {8, 8, 0, 8},    {9, 8, 0, 9},  {12, 8, 1, 8},
      {13, 8, 1, 9}, {15, 8, 1, 11}, {16, 8, 2, 8},   {17, 1, 4, 1}, {20, 1, 4, 4},
      {21, 5, 4, 5}, {22, 5, 4, 6},  {40, 64, 0, 40}, {40, 4, 9, 4}, {41, 4, 9, 5},
  };
  for (const Case& c : cases) {
    ASSERT_TRUE(t.rollback(1).ok());
    ASSERT_TRUE(t.free(1).ok());
    ASSERT_TRUE(t.add_request(1).ok());
    ASSERT_TRUE(t.append(1, c.len).ok());
    WindowView w = t.window(1, c.window).value();
    EXPECT_EQ(w.first_page, c.first_page) << "len " << c.len << " W " << c.window;
    EXPECT_EQ(w.seq_len, c.seq_len) << "len " << c.len << " W " << c.window;
    EXPECT_EQ(w.first_token, int64_t{c.first_page} * 4);
    EXPECT_GE(w.seq_len, std::min(c.len, c.window));
    EXPECT_LT(w.seq_len, c.window + 4);
    ASSERT_EQ(w.pages.size(), t.pages(1).size() - c.first_page);
    if (!w.pages.empty()) {
      EXPECT_EQ(w.pages.data(), t.pages(1).data() + c.first_page);
    }
  }
}

// ---- Randomized operation sequences against a model ---------------------------------------------
//
// The pool is a real KvPool (2 layers, 4-value rows, bf16) and every appended token gets a unique
// tag written into its slot in every layer, so "committed rows intact" is checked on the pool's
// bytes, not just on the page tables.

struct ModelRequest {
  std::vector<uint32_t> committed;  // tags of committed tokens, in order
  std::vector<uint32_t> pending;    // tags of pending tokens
};

struct RandomConfig {
  int num_pages, page_size, max_requests, max_pages;
  uint64_t seed;
  int ops;
};

void PrintTo(const RandomConfig& c, std::ostream* os) {
  *os << "pages=" << c.num_pages << ",page_size=" << c.page_size << ",requests=" << c.max_requests
      << ",max_pages=" << c.max_pages << ",seed=" << c.seed << ",ops=" << c.ops;
}

uint16_t tag_digit(uint32_t tag, int digit) {
  return float_to_bf16_bits(static_cast<float>((tag >> (8 * digit)) & 0xffu));
}

class RandomOps : public ::testing::TestWithParam<RandomConfig> {};

TEST_P(RandomOps, MatchModel) {
  const RandomConfig cfg = GetParam();
  SCOPED_TRACE("seed " + std::to_string(cfg.seed) + " page_size " + std::to_string(cfg.page_size));
  PageTables t = make_tables(cfg.num_pages, cfg.page_size, cfg.max_requests, cfg.max_pages);
  KvPoolSpec ps;
  ps.name = "test";
  ps.layout = KvLayout::gqa(1, 2);  // 4 values per row
  ps.num_layers = 2;
  ps.num_pages = cfg.num_pages;
  ps.page_size = cfg.page_size;
  KvPool pool = KvPool::create(ps).value();
  ASSERT_EQ(pool.row_elems(), 4);

  std::mt19937_64 rng(cfg.seed);
  std::map<RequestId, ModelRequest> model;
  RequestId next_id = 100;
  uint32_t next_tag = 1;
  const int64_t max_tokens = int64_t{cfg.max_pages} * cfg.page_size;
  auto pages_for = [&](int64_t n) { return (n + cfg.page_size - 1) / cfg.page_size; };
  auto model_used_pages = [&] {
    int64_t s = 0;
    for (auto& [id, m] : model) s += pages_for(m.committed.size() + m.pending.size());
    return s;
  };
  auto pick = [&]() -> RequestId {
    auto it = model.begin();
    std::advance(it, std::uniform_int_distribution<size_t>(0, model.size() - 1)(rng));
    return it->first;
  };
  std::vector<int32_t> slots;
  std::vector<uint16_t> rows;
  int exhausted = 0, appended = 0, committed_partial = 0;

  auto check_all = [&](int op) {
    ASSERT_TRUE(t.check_invariants().ok())
        << "op " << op << ": " << t.check_invariants().to_string();
    // Independent of check_invariants: distinct pages, nothing leaked, page counts.
    std::set<int32_t> owned;
    int64_t total = 0;
    for (auto& [id, m] : model) {
      const int64_t len = static_cast<int64_t>(m.committed.size() + m.pending.size());
      ASSERT_EQ(t.length(id), len) << "op " << op << " request " << id;
      ASSERT_EQ(t.pending(id), static_cast<int64_t>(m.pending.size()));
      auto pages = t.pages(id);
      ASSERT_EQ(static_cast<int64_t>(pages.size()), pages_for(len)) << "op " << op;
      for (int32_t p : pages) {
        ASSERT_TRUE(p >= 0 && p < cfg.num_pages);
        ASSERT_TRUE(owned.insert(p).second) << "op " << op << ": page " << p << " owned twice";
      }
      total += static_cast<int64_t>(pages.size());
    }
    ASSERT_EQ(t.num_requests(), static_cast<int>(model.size()));
    ASSERT_EQ(t.free_pages() + total, cfg.num_pages) << "op " << op << ": pages leaked";
    // Every token (committed and pending) holds its tag in every layer.
    for (auto& [id, m] : model) {
      const int64_t len = static_cast<int64_t>(m.committed.size() + m.pending.size());
      slots.resize(static_cast<size_t>(len));
      ASSERT_TRUE(t.token_slots(id, 0, len, slots.data()).ok());
      for (int64_t i = 0; i < len; ++i) {
        const uint32_t tag = i < static_cast<int64_t>(m.committed.size())
                                 ? m.committed[static_cast<size_t>(i)]
                                 : m.pending[static_cast<size_t>(i) - m.committed.size()];
        for (int l = 0; l < 2; ++l) {
          const auto* row = pool.layer_tensor(l).data_as<const uint16_t>() + int64_t{slots[i]} * 4;
          ASSERT_EQ(row[0], tag_digit(tag, 0))
              << "op " << op << " request " << id << " token " << i;
          ASSERT_EQ(row[1], tag_digit(tag, 1))
              << "op " << op << " request " << id << " token " << i;
          ASSERT_EQ(row[2], tag_digit(tag, 2))
              << "op " << op << " request " << id << " token " << i;
          ASSERT_EQ(row[3], float_to_bf16_bits(static_cast<float>(l)));
        }
      }
    }
  };

  for (int op = 0; op < cfg.ops; ++op) {
    const int kind = std::uniform_int_distribution<int>(0, 99)(rng);
    if (model.empty() || (kind < 10 && static_cast<int>(model.size()) < cfg.max_requests)) {
      if (static_cast<int>(model.size()) == cfg.max_requests) continue;
      const RequestId id = next_id++;
      ASSERT_TRUE(t.add_request(id).ok());
      model[id];
    } else if (kind < 55) {
      // Append n and write tags for the new tokens.
      const RequestId id = pick();
      ModelRequest& m = model[id];
      const int64_t len = static_cast<int64_t>(m.committed.size() + m.pending.size());
      const int64_t n = std::uniform_int_distribution<int64_t>(0, 3 * cfg.page_size)(rng);
      const bool over_limit = len + n > max_tokens;
      const bool fits =
          !over_limit && pages_for(len + n) - pages_for(len) <= cfg.num_pages - model_used_pages();
      const std::vector<int32_t> pages_before = to_vec(t.pages(id));
      const int free_before = t.free_pages();
      Status st = t.append(id, n);
      if (!fits) {
        ASSERT_EQ(st.code(), over_limit ? StatusCode::kOutOfRange : StatusCode::kResourceExhausted)
            << st.to_string();
        ASSERT_EQ(to_vec(t.pages(id)), pages_before);
        ASSERT_EQ(t.free_pages(), free_before);
        ++exhausted;
      } else {
        ASSERT_TRUE(st.ok()) << "op " << op << ": " << st.to_string();
        ASSERT_TRUE(std::equal(pages_before.begin(), pages_before.end(), t.pages(id).begin()))
            << "append moved existing pages";
        slots.resize(static_cast<size_t>(n));
        ASSERT_TRUE(t.token_slots(id, len, n, slots.data()).ok());
        for (int l = 0; l < 2; ++l) {
          rows.assign(static_cast<size_t>(n) * 4, 0);
          for (int64_t i = 0; i < n; ++i) {
            const uint32_t tag = next_tag + static_cast<uint32_t>(i);
            for (int d = 0; d < 3; ++d) rows[static_cast<size_t>(i) * 4 + d] = tag_digit(tag, d);
            rows[static_cast<size_t>(i) * 4 + 3] = float_to_bf16_bits(static_cast<float>(l));
          }
          ASSERT_TRUE(write_rows(pool, l, TensorView(slots.data(), DType::kI32, {n}),
                                 TensorView(rows.data(), DType::kBF16, {n, 4}))
                          .ok());
        }
        for (int64_t i = 0; i < n; ++i) m.pending.push_back(next_tag++);
        ++appended;
      }
    } else if (kind < 85) {
      // Commit k of the pending (sometimes an invalid k).
      const RequestId id = pick();
      ModelRequest& m = model[id];
      const int64_t p = static_cast<int64_t>(m.pending.size());
      int64_t k = std::uniform_int_distribution<int64_t>(0, p)(rng);
      if (kind >= 83) k = p + 1;  // invalid
      Status st = t.commit(id, k);
      if (k > p) {
        ASSERT_EQ(st.code(), StatusCode::kInvalidArgument);
      } else {
        ASSERT_TRUE(st.ok()) << st.to_string();
        m.committed.insert(m.committed.end(), m.pending.begin(), m.pending.begin() + k);
        m.pending.clear();
        if (k < p) ++committed_partial;
      }
    } else if (kind < 92) {
      const RequestId id = pick();
      ASSERT_TRUE(t.rollback(id).ok());
      model[id].pending.clear();
    } else if (kind < 98) {
      const RequestId id = pick();
      ASSERT_TRUE(t.free(id).ok());
      model.erase(id);
    } else {
      // Unknown request.
      ASSERT_EQ(t.append(next_id + 1000, 1).code(), StatusCode::kNotFound);
      ASSERT_EQ(t.commit(next_id + 1000, 0).code(), StatusCode::kNotFound);
    }
    check_all(op);
    if (::testing::Test::HasFatalFailure()) return;
  }
  // The sequence must have exercised the interesting paths.
  EXPECT_GT(exhausted, 0);
  EXPECT_GT(appended, cfg.ops / 10);
  EXPECT_GT(committed_partial, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Seeds, RandomOps,
    ::testing::Values(RandomConfig{24, 4, 6, 12, 1, 3000}, RandomConfig{24, 4, 6, 12, 2, 3000},
                      RandomConfig{40, 1, 8, 48, 3, 3000}, RandomConfig{16, 16, 5, 6, 4, 3000},
                      RandomConfig{32, 8, 8, 6, 5, 3000}, RandomConfig{40, 2, 4, 32, 6, 3000}));

}  // namespace
}  // namespace mlaspec::kv
