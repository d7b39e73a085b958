// The CUDA KV writer against the CPU writer, bitwise: random rows (including NaN, +-inf, huge,
// tiny and arbitrary bit patterns), bf16 and fp8 pools with several scales, fp8_tile pools (a
// scale per row block), vectorized and scalar kernel paths, poisoned pools so that any byte
// written outside the target slots shows. Fresh random rows each run (the seed is printed).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpu/gpu_test_util.h"
#include "mlaspec/kvcache/batch_view.h"
#include "mlaspec/kvcache/pool.h"
#include "mlaspec/kvcache/writer.h"

namespace mlaspec::kv {
namespace {

struct WriterCase {
  KvLayout layout;
  DType dtype;
  float scale;
  int64_t row_stride_pad;  // row stride = row_elems + pad (pad % 8 != 0 forces the scalar path)
  int n;
  std::string to_string() const {
    return layout.to_string() + "," + std::string(dtype_name(dtype)) +
           ",scale=" + std::to_string(scale) + ",pad=" + std::to_string(row_stride_pad) +
           ",n=" + std::to_string(n);
  }
};

uint16_t random_bf16(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> kind(0, 9);
  std::normal_distribution<float> normal(0.0f, 4.0f);
  switch (kind(rng)) {
    case 0:
      return static_cast<uint16_t>(rng());  // any bit pattern
    case 1:
      return (rng() & 1) ? 0x7fc0 : 0xffc1;  // NaNs (payloads)
    case 2:
      return (rng() & 1) ? 0x7f80 : 0xff80;  // +-inf
    case 3:
      return float_to_bf16_bits((rng() & 1 ? 1 : -1) * 3e38f);  // huge
    case 4:
      return float_to_bf16_bits(normal(rng) * 1e-6f);  // tiny: fp8 subnormals/zero
    case 5:
      return (rng() & 1) ? 0x0000 : 0x8000;  // +-0
    default:
      return float_to_bf16_bits(normal(rng) * 100.0f);  // ordinary, some saturate
  }
}

void run_case(const WriterCase& c, uint64_t seed) {
  SCOPED_TRACE(c.to_string());
  KvPoolSpec spec;
  spec.name = "gpu_writer";
  spec.layout = c.layout;
  spec.num_layers = 2;
  spec.num_pages = 37;
  spec.page_size = 16;
  spec.dtype = c.dtype;
  spec.zero_fill = false;
  if (c.dtype == DType::kFP8E4M3) spec.layer_scales = {1.0f, c.scale};
  spec.device = Device::kCPU;
  KvPool host = KvPool::create(spec).value();
  spec.device = Device::kCUDA;
  KvPool dev = KvPool::create(spec).value();
  ASSERT_TRUE(host.buffer().fill_bytes(0xA5).ok());
  ASSERT_TRUE(dev.buffer().fill_bytes(0xA5).ok());

  std::mt19937_64 rng(seed);
  const int64_t re = host.row_elems(), stride = re + c.row_stride_pad;
  std::vector<uint16_t> rows(static_cast<size_t>(c.n) * stride);
  for (auto& x : rows) x = random_bf16(rng);
  // Distinct random slots, some rows skipped with -1.
  std::vector<int32_t> perm(static_cast<size_t>(host.num_slots()));
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int32_t>(i);
  std::shuffle(perm.begin(), perm.end(), rng);
  std::vector<int32_t> slots(perm.begin(), perm.begin() + c.n);
  for (int i = 0; i < c.n; i += 7) slots[static_cast<size_t>(i)] = -1;

  Buffer d_rows(rows.size() * 2, Device::kCUDA);
  Buffer d_slots(slots.size() * 4 + 4, Device::kCUDA);
  ASSERT_TRUE(d_rows.copy_from_host(rows.data(), rows.size() * 2).ok());
  ASSERT_TRUE(d_slots.copy_from_host(slots.data(), slots.size() * 4).ok());

  for (int layer : {1, 0}) {
    TensorView h_slots(slots.data(), DType::kI32, {c.n});
    TensorView h_rows(rows.data(), DType::kBF16, {c.n, re}, {stride, 1});
    TensorView g_slots(d_slots.data(), DType::kI32, {c.n}, Device::kCUDA);
    TensorView g_rows(d_rows.data(), DType::kBF16, {c.n, re}, {stride, 1}, Device::kCUDA);
    ASSERT_TRUE(write_rows(host, layer, h_slots, h_rows).ok());
    WriteOptions opt;
    opt.slots_host = h_slots;
    Status st = write_rows(dev, layer, g_slots, g_rows, opt);
    ASSERT_TRUE(st.ok()) << st.to_string();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    if (layer == 1) {
      // After the first write only layer 1 differs from poison; compare the whole pool.
      std::vector<uint8_t> a(host.bytes()), b(dev.bytes());
      std::memcpy(a.data(), host.data(), a.size());
      ASSERT_TRUE(dev.buffer().copy_to_host(b.data(), b.size()).ok());
      int64_t changed = 0;
      for (size_t i = 0; i < a.size(); ++i) changed += a[i] != 0xA5;
      EXPECT_GT(changed, 0);
      for (size_t i = 0; i < a.size(); ++i) {
        ASSERT_EQ(a[i], b[i]) << "byte " << i << " (layer " << i / host.layer_bytes() << ")";
      }
    }
  }
  std::vector<uint8_t> a(host.bytes()), b(dev.bytes());
  std::memcpy(a.data(), host.data(), a.size());
  ASSERT_TRUE(dev.buffer().copy_to_host(b.data(), b.size()).ok());
  for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[i]) << "byte " << i;
  // Slots outside the written set are still poison in both (checked on the CPU pool, equal above).
  std::vector<bool> written(static_cast<size_t>(host.num_slots()), false);
  for (int32_t s : slots)
    if (s >= 0) written[static_cast<size_t>(s)] = true;
  const int64_t row_bytes = host.row_bytes();
  for (int l = 0; l < 2; ++l) {
    for (int64_t s = 0; s < host.num_slots(); ++s) {
      if (written[static_cast<size_t>(s)]) continue;
      const uint8_t* r = a.data() + l * host.layer_bytes() + s * row_bytes;
      for (int64_t k = 0; k < row_bytes; ++k)
        ASSERT_EQ(r[k], 0xA5) << "layer " << l << " slot " << s;
    }
  }
}

TEST(GpuKvWriter, MatchesCpuBitwise) {
  MLASPEC_SKIP_WITHOUT_GPU();
  const WriterCase cases[] = {
      {KvLayout::mla(), DType::kBF16, 1.0f, 0, 200},
      {KvLayout::mla(), DType::kBF16, 1.0f, 3, 97},
      {KvLayout::mla(), DType::kFP8E4M3, 1.0f, 0, 300},
      {KvLayout::mla(), DType::kFP8E4M3, 0.37f, 0, 300},
      {KvLayout::mla(), DType::kFP8E4M3, 16.0f, 8, 64},
      {KvLayout::mla(), DType::kFP8E4M3, 1e-3f, 5, 150},   // scalar path
      {KvLayout::mla(), DType::kFP8E4M3, 3.3e-7f, 0, 50},  // most values saturate
      {KvLayout::gqa(2, 12), DType::kFP8E4M3, 0.5f, 0, 120},
      {KvLayout::gqa(1, 3), DType::kFP8E4M3, 2.0f, 0, 120},  // row of 6: scalar path
      {KvLayout::gqa(1, 3), DType::kBF16, 1.0f, 1, 120},
      {KvLayout::mla(), DType::kFP8Tile, 1.0f, 0, 300},  // per-row scales (scale unused)
      {KvLayout::mla(), DType::kFP8Tile, 1.0f, 5, 150},  // odd row stride
  };
  uint64_t seed = testing::fresh_seed("kv writer");
  for (const WriterCase& c : cases) {
    run_case(c, seed++);
    if (HasFatalFailure()) return;
  }
}

TEST(GpuKvWriter, OutOfRangeSlots) {
  MLASPEC_SKIP_WITHOUT_GPU();
  KvPoolSpec spec;
  spec.dtype = DType::kFP8E4M3;
  spec.num_pages = 2;
  spec.page_size = 4;
  spec.device = Device::kCUDA;
  KvPool dev = KvPool::create(spec).value();
  ASSERT_TRUE(dev.buffer().fill_bytes(0xA5).ok());
  std::vector<int32_t> slots = {1, 8, 100000};  // 8 slots in the pool
  std::vector<uint16_t> rows(3 * 576, float_to_bf16_bits(1.0f));
  Buffer d_rows(rows.size() * 2, Device::kCUDA), d_slots(slots.size() * 4, Device::kCUDA);
  ASSERT_TRUE(d_rows.copy_from_host(rows.data(), rows.size() * 2).ok());
  ASSERT_TRUE(d_slots.copy_from_host(slots.data(), slots.size() * 4).ok());
  TensorView g_slots(d_slots.data(), DType::kI32, {3}, Device::kCUDA);
  TensorView g_rows(d_rows.data(), DType::kBF16, {3, 576}, Device::kCUDA);
  // With a host copy: rejected before launch, nothing written.
  WriteOptions opt;
  opt.slots_host = TensorView(slots.data(), DType::kI32, {3});
  EXPECT_EQ(write_rows(dev, 0, g_slots, g_rows, opt).code(), StatusCode::kOutOfRange);
  std::vector<uint8_t> b(dev.bytes());
  ASSERT_TRUE(dev.buffer().copy_to_host(b.data(), b.size()).ok());
  for (uint8_t x : b) ASSERT_EQ(x, 0xA5);
  // Without: the kernel writes slot 1 and skips the rest, never outside the pool.
  ASSERT_TRUE(write_rows(dev, 0, g_slots, g_rows).ok());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_TRUE(dev.buffer().copy_to_host(b.data(), b.size()).ok());
  for (size_t i = 0; i < b.size(); ++i) {
    const bool in_slot1 = i >= 576 && i < 2 * 576;
    ASSERT_EQ(b[i], in_slot1 ? 0x38 : 0xA5) << "byte " << i;
  }
}

TEST(GpuKvWriter, DeviceBatchTablesMirror) {
  MLASPEC_SKIP_WITHOUT_GPU();
  PageTablesSpec ts;
  ts.num_pages = 32;
  ts.page_size = 4;
  ts.max_requests = 4;
  ts.max_pages_per_request = 8;
  PageTables t = PageTables::create(ts).value();
  for (RequestId r : {3, 4, 5}) ASSERT_TRUE(t.add_request(r).ok());
  ASSERT_TRUE(t.append(3, 9).ok());
  ASSERT_TRUE(t.append(4, 17).ok());
  ASSERT_TRUE(t.append(5, 1).ok());
  BatchTableBuilder builder;
  const std::vector<RequestId> reqs = {3, 4, 5};
  BatchView host = builder.build(t, reqs).value();
  DeviceBatchTables mirror = DeviceBatchTables::create(8, 8, Device::kCUDA).value();
  BatchView dev = mirror.upload(host).value();
  EXPECT_EQ(dev.block_table.device(), Device::kCUDA);
  std::vector<int32_t> bt(3 * 8), sl(3);
  ASSERT_EQ(cudaMemcpy(bt.data(), dev.block_table.data(), bt.size() * 4, cudaMemcpyDeviceToHost),
            cudaSuccess);
  ASSERT_EQ(cudaMemcpy(sl.data(), dev.seq_lens.data(), sl.size() * 4, cudaMemcpyDeviceToHost),
            cudaSuccess);
  for (int b = 0; b < 3; ++b) {
    EXPECT_EQ(sl[b], t.length(reqs[b]));
    for (int j = 0; j < 8; ++j) EXPECT_EQ(bt[b * 8 + j], t.table_row(b)[j]);
  }
}

}  // namespace
}  // namespace mlaspec::kv
