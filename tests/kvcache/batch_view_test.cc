// Batch views (zero copy vs gather, windows, device mirror) and the attention op consuming a
// pool's views: cpu_verify over pool.layer_view + batch tables equals a dense computation.
#include "mlaspec/kvcache/batch_view.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "mlaspec/attention/reference.h"
#include "mlaspec/kvcache/pool.h"
#include "mlaspec/kvcache/writer.h"

namespace mlaspec::kv {
namespace {

PageTables make_tables(int num_pages, int page_size, int max_requests, int max_pages) {
  PageTablesSpec s;
  s.num_pages = num_pages;
  s.page_size = page_size;
  s.max_requests = max_requests;
  s.max_pages_per_request = max_pages;
  return PageTables::create(s).value();
}

TEST(BatchView, ConsecutiveSlotsAreZeroCopyAndLive) {
  PageTables t = make_tables(16, 4, 4, 5);
  for (RequestId r : {10, 11, 12}) ASSERT_TRUE(t.add_request(r).ok());
  ASSERT_TRUE(t.append(10, 5).ok());
  ASSERT_TRUE(t.append(11, 9).ok());
  ASSERT_TRUE(t.append(12, 1).ok());
  BatchTableBuilder builder;
  const std::vector<RequestId> reqs = {11, 12};
  BatchView v = builder.build(t, reqs).value();
  EXPECT_TRUE(v.zero_copy);
  EXPECT_EQ(v.batch(), 2);
  EXPECT_EQ(v.width(), 5);
  EXPECT_EQ(v.block_table.data(), static_cast<const void*>(t.table_row(1)));
  EXPECT_EQ(v.seq_lens.data(), static_cast<const void*>(t.seq_lens_data() + 1));
  EXPECT_EQ(v.seq_lens.at<int32_t>({0}), 9);
  EXPECT_EQ(v.block_table.at<int32_t>({0, 2}), t.pages(11)[2]);
  EXPECT_EQ(v.block_table.at<int32_t>({0, 3}), -1);
  // Live: a commit shows through without rebuilding.
  ASSERT_TRUE(t.commit(11, 4).ok());
  EXPECT_EQ(v.seq_lens.at<int32_t>({0}), 4);
  EXPECT_EQ(v.block_table.at<int32_t>({0, 1}), -1);
}

TEST(BatchView, GatherForOtherOrdersCompactWidthAndWindows) {
  PageTables t = make_tables(16, 4, 4, 6);
  for (RequestId r : {10, 11, 12}) ASSERT_TRUE(t.add_request(r).ok());
  ASSERT_TRUE(t.append(10, 5).ok());
  ASSERT_TRUE(t.append(11, 9).ok());
  ASSERT_TRUE(t.append(12, 14).ok());
  BatchTableBuilder builder;
  auto check_rows = [&](const BatchView& v, const std::vector<RequestId>& reqs, int width) {
    ASSERT_EQ(v.batch(), static_cast<int>(reqs.size()));
    ASSERT_EQ(v.width(), width);
    for (size_t b = 0; b < reqs.size(); ++b) {
      auto pages = t.pages(reqs[b]);
      EXPECT_EQ(v.seq_lens.at<int32_t>({static_cast<int64_t>(b)}), t.length(reqs[b]));
      for (int j = 0; j < width; ++j) {
        const int32_t want = j < static_cast<int>(pages.size()) ? pages[j] : -1;
        EXPECT_EQ(v.block_table.at<int32_t>({static_cast<int64_t>(b), j}), want);
      }
    }
  };
  std::vector<RequestId> reqs = {12, 10};  // not consecutive slots
  BatchView v = builder.build(t, reqs).value();
  EXPECT_FALSE(v.zero_copy);
  check_rows(v, reqs, 6);
  reqs = {10, 11, 12};
  BatchOptions compact;
  compact.width = BatchOptions::kCompact;
  v = builder.build(t, reqs, compact).value();
  EXPECT_FALSE(v.zero_copy);
  check_rows(v, reqs, 4);
  BatchOptions narrow;
  narrow.width = 3;
  Status st = builder.build(t, reqs, narrow).status();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("width 3 is below the 4 pages"), std::string::npos) << st.message();
  reqs = {10, 99};
  st = builder.build(t, reqs).status();
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_NE(st.message().find("batch row 1"), std::string::npos) << st.message();
  EXPECT_EQ(builder.build(t, {}).status().code(), StatusCode::kInvalidArgument);

  // Window 6: request 12 (14 tokens) starts at page 2 (token 8), 6 tokens; 10 (5 tokens) whole.
  BatchOptions win;
  win.window = 6;
  reqs = {12, 10};
  v = builder.build(t, reqs, win).value();
  EXPECT_FALSE(v.zero_copy);
  EXPECT_EQ(v.seq_lens.at<int32_t>({0}), 6);
  EXPECT_EQ(v.seq_lens.at<int32_t>({1}), 5);
  EXPECT_EQ(v.block_table.at<int32_t>({0, 0}), t.pages(12)[2]);
  EXPECT_EQ(v.block_table.at<int32_t>({0, 1}), t.pages(12)[3]);
  EXPECT_EQ(v.block_table.at<int32_t>({0, 2}), -1);
  EXPECT_EQ(v.block_table.at<int32_t>({1, 1}), t.pages(10)[1]);
}

TEST(BatchView, MirrorCopiesIntoFixedStorage) {
  PageTables t = make_tables(16, 4, 4, 6);
  for (RequestId r : {1, 2}) ASSERT_TRUE(t.add_request(r).ok());
  ASSERT_TRUE(t.append(1, 7).ok());
  ASSERT_TRUE(t.append(2, 3).ok());
  BatchTableBuilder builder;
  const std::vector<RequestId> reqs = {1, 2};
  BatchView host = builder.build(t, reqs).value();
  // Device::kCPU exercises the same code path without a GPU.
  DeviceBatchTables mirror = DeviceBatchTables::create(4, 6, Device::kCPU).value();
  BatchView dev = mirror.upload(host).value();
  const void* table_ptr = dev.block_table.data();
  EXPECT_NE(dev.block_table.data(), host.block_table.data());
  for (int b = 0; b < 2; ++b) {
    EXPECT_EQ(dev.seq_lens.at<int32_t>({b}), host.seq_lens.at<int32_t>({b}));
    for (int j = 0; j < 6; ++j)
      EXPECT_EQ(dev.block_table.at<int32_t>({b, j}), host.block_table.at<int32_t>({b, j}));
  }
  ASSERT_TRUE(t.append(2, 5).ok());
  dev = mirror.upload(builder.build(t, reqs).value()).value();
  EXPECT_EQ(dev.block_table.data(), table_ptr);  // same storage every step
  EXPECT_EQ(dev.seq_lens.at<int32_t>({1}), 8);
  EXPECT_EQ(dev.block_table.at<int32_t>({1, 1}), t.pages(2)[1]);

  attn::VerifyArgs args;
  set_batch_tables(args, host, &dev);
  EXPECT_EQ(args.block_table.data(), dev.block_table.data());
  EXPECT_EQ(args.block_table_host.data(), host.block_table.data());
  set_batch_tables(args, host);
  EXPECT_EQ(args.block_table.data(), host.block_table.data());
  EXPECT_TRUE(args.block_table_host.empty());

  DeviceBatchTables small = DeviceBatchTables::create(1, 6, Device::kCPU).value();
  Status st = small.upload(host).status();
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(st.message().find("batch 2 x width 6 exceeds the mirror's 1 x 6"), std::string::npos);
}

// ---- The attention op reads the pool's views --------------------------------------------------

struct DenseRequest {
  std::vector<std::vector<uint16_t>> rows;  // per token: 576 bf16 values as written
};

// Dense fp64 attention of one query row over the first `visible` tokens of `rows`, with each
// value read back as the pool stores it (bf16 as is, fp8 via encode/decode * scale).
void dense_row(const std::vector<std::vector<uint16_t>>& rows, int64_t first, int64_t visible,
               const uint16_t* q, double sm_scale, DType dtype, float scale, double* out,
               double* lse) {
  auto val = [&](uint16_t x) -> double {
    if (dtype == DType::kBF16) return bf16_bits_to_float(x);
    return static_cast<double>(fp8e4m3_bits_to_float(encode_fp8_kv_value(x, scale))) * scale;
  };
  std::vector<double> s;
  double mx = -INFINITY;
  for (int64_t t = first; t < visible; ++t) {
    double dot = 0;
    for (int d = 0; d < 576; ++d) dot += bf16_bits_to_float(q[d]) * val(rows[t][d]);
    s.push_back(dot * sm_scale);
    mx = std::max(mx, s.back());
  }
  double sum = 0;
  for (double& x : s) sum += (x = std::exp(x - mx));
  for (int d = 0; d < 512; ++d) {
    double o = 0;
    for (size_t k = 0; k < s.size(); ++k) o += s[k] * val(rows[first + static_cast<int64_t>(k)][d]);
    out[d] = o / sum;
  }
  *lse = mx + std::log(sum);
}

void check_attention_reads_pool(DType dtype, float scale) {
  SCOPED_TRACE(std::string(dtype_name(dtype)));
  const int page_size = 4, H = 3, q_len = 3, layers = 2;
  KvPoolSpec ps;
  ps.name = "target";
  ps.num_layers = layers;
  ps.num_pages = 24;
  ps.page_size = page_size;
  ps.dtype = dtype;
  KvPool pool = KvPool::create(ps).value();
  if (dtype == DType::kFP8E4M3) {
    ASSERT_TRUE(pool.set_layer_scale(1, scale).ok());
  }
  PageTables t = make_tables(24, page_size, 4, 8);
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const std::vector<RequestId> reqs = {5, 6, 7};
  std::vector<DenseRequest> dense(3);
  for (RequestId r : reqs) ASSERT_TRUE(t.add_request(r).ok());
  // Interleaved prefills, verify appends and a partial accept, so pages interleave.
  auto append_rows = [&](int b, int64_t n) {
    const RequestId r = reqs[static_cast<size_t>(b)];
    const int64_t len = t.length(r);
    ASSERT_TRUE(t.append(r, n).ok());
    std::vector<int32_t> slots(static_cast<size_t>(n));
    ASSERT_TRUE(t.token_slots(r, len, n, slots.data()).ok());
    for (int l = 0; l < layers; ++l) {
      std::vector<uint16_t> rows(static_cast<size_t>(n) * 576);
      for (auto& x : rows) x = float_to_bf16_bits(normal(rng));
      ASSERT_TRUE(write_rows(pool, l, TensorView(slots.data(), DType::kI32, {n}),
                             TensorView(rows.data(), DType::kBF16, {n, 576}))
                      .ok());
      if (l == 1) {
        auto& d = dense[static_cast<size_t>(b)].rows;
        d.resize(static_cast<size_t>(len));
        for (int64_t i = 0; i < n; ++i)
          d.emplace_back(rows.begin() + i * 576, rows.begin() + (i + 1) * 576);
      }
    }
  };
  append_rows(0, 6);
  append_rows(1, 2);
  append_rows(2, 9);
  append_rows(0, 3);
  append_rows(1, 5);
  for (RequestId r : reqs) ASSERT_TRUE(t.commit(r, t.pending(r) - 1).ok());  // drop the last
  for (int b = 0; b < 3; ++b) dense[static_cast<size_t>(b)].rows.pop_back();
  for (int b = 0; b < 3; ++b) append_rows(b, q_len);  // the verify step's rows

  std::vector<uint16_t> q(static_cast<size_t>(3) * q_len * H * 576);
  for (auto& x : q) x = float_to_bf16_bits(normal(rng));
  const double sm_scale = 1.0 / std::sqrt(576.0);

  BatchTableBuilder builder;
  for (int64_t window : {int64_t{0}, int64_t{5}}) {
    BatchOptions opt;
    opt.window = window;
    BatchView v = builder.build(t, reqs, opt).value();
    EXPECT_EQ(v.zero_copy, window == 0);
    std::vector<uint16_t> out(static_cast<size_t>(3) * q_len * H * 512);
    std::vector<float> lse(static_cast<size_t>(3) * q_len * H);
    attn::VerifyArgs args;
    args.q = TensorView(q.data(), DType::kBF16, {3, q_len, H, 576});
    args.kv = pool.layer_view(1);
    set_batch_tables(args, v);
    args.sm_scale = static_cast<float>(sm_scale);
    args.out = TensorView(out.data(), DType::kBF16, {3, q_len, H, 512});
    args.lse = TensorView(lse.data(), DType::kF32, {3, q_len, H});
    Status st = attn::cpu_verify(args);
    ASSERT_TRUE(st.ok()) << st.to_string();
    double max_err = 0, max_lse_err = 0;
    for (int b = 0; b < 3; ++b) {
      const auto& rows = dense[static_cast<size_t>(b)].rows;
      const int64_t len = static_cast<int64_t>(rows.size());
      ASSERT_EQ(len, t.length(reqs[static_cast<size_t>(b)]));
      const int64_t first =
          window > 0 ? t.window(reqs[static_cast<size_t>(b)], window)->first_token : 0;
      for (int i = 0; i < q_len; ++i) {
        for (int h = 0; h < H; ++h) {
          const size_t r = (static_cast<size_t>(b) * q_len + i) * H + h;
          double o[512], l;
          dense_row(rows, first, len - q_len + i + 1, &q[r * 576], sm_scale, dtype,
                    pool.layer_scale(1), o, &l);
          for (int d = 0; d < 512; ++d) {
            max_err = std::max(max_err, std::fabs(bf16_bits_to_float(out[r * 512 + d]) - o[d]) /
                                            (0.02 + std::fabs(o[d])));
          }
          max_lse_err = std::max(max_lse_err, std::fabs(lse[r] - l));
        }
      }
    }
    EXPECT_LT(max_err, 0.01) << "window " << window;
    EXPECT_LT(max_lse_err, 1e-3) << "window " << window;
  }
}

TEST(KvCacheFeedsAttention, CpuVerifyOverPoolViewsMatchesDense) {
  check_attention_reads_pool(DType::kBF16, 1.0f);
  check_attention_reads_pool(DType::kFP8E4M3, 0.125f);
}

}  // namespace
}  // namespace mlaspec::kv
