// The CUDA backends read the KV cache layer's own views: a CUDA KvPool written by the CUDA writer,
// block_table/seq_lens from the page tables mirrored by DeviceBatchTables. Compared with the CPU
// reference over a host copy of the same pool, with poisoned outputs.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cmath>
#include <random>
#include <vector>

#include "gpu/gpu_test_util.h"
#include "mlaspec/attention/backend.h"
#include "mlaspec/attention/reference.h"
#include "mlaspec/kvcache/batch_view.h"
#include "mlaspec/kvcache/page_table.h"
#include "mlaspec/kvcache/pool.h"
#include "mlaspec/kvcache/writer.h"

namespace mlaspec {
namespace {

void run_case(DType dtype, int page_size, const char* backend_name) {
  SCOPED_TRACE(std::string(backend_name) + " " + std::string(dtype_name(dtype)) + " page " +
               std::to_string(page_size));
  const int B = 3, Q = 8, H = 16, layers = 2, layer = 1;
  const std::vector<int64_t> lens = {1000, 77, 513};
  kv::KvPoolSpec ps;
  ps.name = "target";
  ps.num_layers = layers;
  ps.num_pages = 64 * 64 / page_size;
  ps.page_size = page_size;
  ps.dtype = dtype;
  ps.device = Device::kCUDA;
  if (dtype == DType::kFP8E4M3) ps.layer_scales = {0.5f, 0.05f};
  Result<kv::KvPool> pool = kv::KvPool::create(ps);
  ASSERT_TRUE(pool.ok()) << pool.status().to_string();
  kv::PageTablesSpec ts;
  ts.num_pages = ps.num_pages;
  ts.page_size = page_size;
  ts.max_requests = 4;
  ts.max_pages_per_request = 1024 / page_size + 1;
  Result<kv::PageTables> tables = kv::PageTables::create(ts);
  ASSERT_TRUE(tables.ok()) << tables.status().to_string();

  // Each request: append, write its rows with the CUDA writer, commit (a verify step's KV).
  std::mt19937 rng(page_size * 7 + static_cast<int>(dtype));
  std::normal_distribution<float> normal;
  for (int b = 0; b < B; ++b) {
    ASSERT_TRUE(tables.value().add_request(b, b).ok());
    ASSERT_TRUE(tables.value().append(b, lens[b]).ok());
    std::vector<int32_t> slots(static_cast<size_t>(lens[b]));
    ASSERT_TRUE(tables.value().token_slots(b, 0, lens[b], slots.data()).ok());
    std::vector<uint16_t> rows(slots.size() * attn::kHeadDimQK);
    for (auto& v : rows) v = float_to_bf16_bits(normal(rng));
    Buffer slots_dev(slots.size() * 4, Device::kCUDA), rows_dev(rows.size() * 2, Device::kCUDA);
    ASSERT_TRUE(slots_dev.copy_from_host(slots.data(), slots.size() * 4).ok());
    ASSERT_TRUE(rows_dev.copy_from_host(rows.data(), rows.size() * 2).ok());
    kv::WriteOptions wo;
    wo.slots_host = TensorView(slots.data(), DType::kI32, {static_cast<int64_t>(slots.size())});
    ASSERT_TRUE(
        kv::write_rows(
            pool.value(), layer, slots_dev.view(DType::kI32, {static_cast<int64_t>(slots.size())}),
            rows_dev.view(DType::kBF16, {static_cast<int64_t>(slots.size()), attn::kHeadDimQK}), wo)
            .ok());
    ASSERT_TRUE(tables.value().commit(b, lens[b]).ok());
  }

  kv::BatchTableBuilder builder;
  const std::vector<kv::RequestId> reqs = {0, 1, 2};
  Result<kv::BatchView> host_view = builder.build(tables.value(), reqs);
  ASSERT_TRUE(host_view.ok()) << host_view.status().to_string();
  EXPECT_TRUE(host_view.value().zero_copy);
  Result<kv::DeviceBatchTables> mirror =
      kv::DeviceBatchTables::create(4, ts.max_pages_per_request, Device::kCUDA);
  ASSERT_TRUE(mirror.ok());
  Result<kv::BatchView> dev_view = mirror.value().upload(host_view.value());
  ASSERT_TRUE(dev_view.ok());

  // q and poisoned outputs on the device.
  std::vector<uint16_t> q(static_cast<size_t>(B) * Q * H * attn::kHeadDimQK);
  for (auto& v : q) v = float_to_bf16_bits(normal(rng));
  Buffer q_dev(q.size() * 2, Device::kCUDA),
      out_dev(size_t{B} * Q * H * attn::kHeadDimV * 2, Device::kCUDA),
      lse_dev(size_t{B} * Q * H * 4, Device::kCUDA);
  ASSERT_TRUE(q_dev.copy_from_host(q.data(), q.size() * 2).ok());
  ASSERT_TRUE(out_dev.fill_bytes(0xff).ok());
  ASSERT_TRUE(lse_dev.fill_bytes(0xff).ok());
  attn::VerifyArgs a;
  a.q = q_dev.view(DType::kBF16, {B, Q, H, attn::kHeadDimQK});
  a.kv = pool.value().layer_view(layer);
  kv::set_batch_tables(a, host_view.value(), &dev_view.value());
  a.sm_scale = 1.0f / std::sqrt(576.0f);
  a.out = out_dev.view(DType::kBF16, {B, Q, H, attn::kHeadDimV});
  a.lse = lse_dev.view(DType::kF32, {B, Q, H});
  Result<std::unique_ptr<attn::Backend>> backend = std::string(backend_name) == "cuda_fold"
                                                       ? attn::make_cuda_fold_backend()
                                                       : attn::make_cuda_rowwise_backend();
  ASSERT_TRUE(backend.ok()) << backend.status().to_string();
  Status st = backend.value()->run(a, attn::VerifyOptions{});
  ASSERT_TRUE(st.ok()) << st.to_string();

  // Reference on a host copy of the same layer.
  std::vector<uint8_t> layer_host(static_cast<size_t>(pool.value().layer_bytes()));
  ASSERT_EQ(cudaSuccess, cudaMemcpy(layer_host.data(), a.kv.pages.data(), layer_host.size(),
                                    cudaMemcpyDeviceToHost));
  std::vector<uint16_t> out(static_cast<size_t>(B) * Q * H * attn::kHeadDimV), ref(out.size());
  std::vector<float> lse(static_cast<size_t>(B) * Q * H), ref_lse(lse.size());
  ASSERT_TRUE(out_dev.copy_to_host(out.data(), out.size() * 2).ok());
  ASSERT_TRUE(lse_dev.copy_to_host(lse.data(), lse.size() * 4).ok());
  attn::VerifyArgs h = a;
  h.q = TensorView(q.data(), DType::kBF16, {B, Q, H, attn::kHeadDimQK});
  h.kv.pages =
      TensorView(layer_host.data(), dtype, {ps.num_pages, page_size, attn::kv_row_width(dtype)});
  h.block_table = host_view.value().block_table;
  h.seq_lens = host_view.value().seq_lens;
  h.block_table_host = TensorView();
  h.seq_lens_host = TensorView();
  h.out = TensorView(ref.data(), DType::kBF16, {B, Q, H, attn::kHeadDimV});
  h.lse = TensorView(ref_lse.data(), DType::kF32, {B, Q, H});
  ASSERT_TRUE(attn::cpu_verify(h).ok());
  double num = 0, den = 0;
  for (size_t k = 0; k < out.size(); ++k) {
    const double g = bf16_bits_to_float(out[k]), r = bf16_bits_to_float(ref[k]);
    ASSERT_TRUE(std::isfinite(g)) << "out[" << k << "] unwritten or not finite";
    num += (g - r) * (g - r);
    den += r * r;
  }
  EXPECT_LT(std::sqrt(num / den), 1e-2);
  for (size_t k = 0; k < lse.size(); ++k) ASSERT_NEAR(lse[k], ref_lse[k], 1e-2) << k;
}

TEST(PoolAttention, CudaBackendsReadThePoolsViews) {
  MLASPEC_SKIP_WITHOUT_GPU();
  for (const char* name : {"cuda_fold", "cuda_rowwise"}) {
    for (DType dt : {DType::kBF16, DType::kFP8E4M3, DType::kFP8Tile}) {
      for (int page : {16, 64}) run_case(dt, page, name);
    }
  }
}

}  // namespace
}  // namespace mlaspec
