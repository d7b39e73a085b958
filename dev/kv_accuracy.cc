// Experiment: how much accuracy each KV storage format costs the verify-attention op on real MLA
// KV rows (docs/perf/knowledge.md, "per-tile vs per-layer fp8 KV accuracy").
//
//   mlaspec_kv_accuracy MODEL_DIR [REQUESTS]    (e.g. models/target; the prompts and solutions of
//                                                MODEL_DIR/../eval/heldout.jsonl are the text)
//
// It prefills REQUESTS held-out problems (prompt + solution) through the model into a bf16 pool,
// so every layer's KV rows are the model's own. For each layer and request it then stores those
// rows as bf16, as per-layer fp8 (scale 1, what generate/eval use without calibration, and the
// calibrated scale amax/448 of the layer), and as fp8_tile, runs the CPU reference attention for
// the request's last 32 tokens (H = the model's heads, q ~ N(0, sigma) with sigma set so the
// scores have standard deviation 2 or 6) and compares each output with the fp64 oracle on the
// unquantized bf16 rows. Reported: relative RMS error of out (sqrt(sum err^2 / sum ref^2)) and
// the largest |err| over the RMS of the reference, and the KV rows' own relative RMS error.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "mlaspec/attention/reference.h"
#include "mlaspec/core/fp8_tile.h"
#include "mlaspec/kvcache/pool.h"
#include "mlaspec/kvcache/writer.h"
#include "mlaspec/model/model.h"
#include "mlaspec/tokenizer/tokenizer.h"
#include "nlohmann/json.hpp"

using namespace mlaspec;

namespace {

struct Format {
  const char* name;
  DType dtype;
  bool calibrated;  // fp8: amax / 448 of the layer instead of 1
};

struct Acc {
  double err2 = 0, ref2 = 0, worst = 0;  // worst = max |err| / rms(ref) of one call
  double kv_lat_err2 = 0, kv_lat_ref2 = 0, kv_rope_err2 = 0, kv_rope_ref2 = 0;
};

[[noreturn]] void die(const std::string& m) {
  std::fprintf(stderr, "kv_accuracy: %s\n", m.c_str());
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) die("usage: mlaspec_kv_accuracy MODEL_DIR [REQUESTS]");
  const std::string dir = argv[1];
  const int requests = argc > 2 ? std::atoi(argv[2]) : 16;
  Result<model::Model> loaded = model::Model::load(dir);
  if (!loaded.ok()) die(loaded.status().to_string());
  model::Model& m = *loaded;
  Result<tokenizer::Tokenizer> tok = tokenizer::Tokenizer::from_path(dir + "/tokenizer.json");
  if (!tok.ok()) die(tok.status().to_string());

  std::ifstream in(dir + "/../eval/heldout.jsonl");
  std::vector<std::vector<int32_t>> ids;
  std::string line;
  while (static_cast<int>(ids.size()) < requests && std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line);
    Result<std::vector<int32_t>> t =
        tok->encode(j["prompt"].get<std::string>() + j["solution"].get<std::string>() + "<|end|>");
    if (!t.ok()) die(t.status().to_string());
    ids.push_back(*t);
  }
  if (ids.empty()) die("no held-out problems read from " + dir + "/../eval/heldout.jsonl");

  const int page = 16;
  int total_pages = 0;
  std::vector<std::vector<int32_t>> pages(ids.size()), positions(ids.size());
  for (size_t r = 0; r < ids.size(); ++r) {
    const int n = (static_cast<int>(ids[r].size()) + page - 1) / page;
    for (int j = 0; j < n; ++j) pages[r].push_back(total_pages++);
    for (size_t i = 0; i < ids[r].size(); ++i) positions[r].push_back(static_cast<int32_t>(i));
  }
  Result<kv::KvPool> pool = kv::KvPool::create(m.kv_pool_spec(total_pages, page, DType::kBF16));
  if (!pool.ok()) die(pool.status().to_string());
  std::vector<model::ForwardRequest> batch;
  for (size_t r = 0; r < ids.size(); ++r) {
    batch.push_back({ids[r], positions[r], pages[r], model::LogitsMode::kNone});
  }
  if (Result<model::ForwardOutput> f = m.forward(batch, *pool); !f.ok()) {
    die(f.status().to_string());
  }

  const int H = m.config().num_attention_heads;
  const float sm_scale = static_cast<float>(m.config().softmax_scale());
  const int layers = pool->num_layers();
  const std::vector<Format> formats = {{"bf16", DType::kBF16, false},
                                       {"fp8 (scale 1)", DType::kFP8E4M3, false},
                                       {"fp8 (amax/448)", DType::kFP8E4M3, true},
                                       {"fp8_tile", DType::kFP8Tile, false}};
  for (const double score_std : {2.0, 6.0}) {
    std::vector<Acc> acc(formats.size());
    std::mt19937_64 rng(7);
    for (int l = 0; l < layers; ++l) {
      const auto* layer = static_cast<const uint16_t*>(pool->layer_tensor(l).data());
      // The layer's amax over every written row (the calibrated per-layer scale).
      float amax = 0;
      for (size_t r = 0; r < ids.size(); ++r) {
        for (int32_t pg : pages[r]) {
          for (int i = 0; i < page * 576; ++i) {
            const float v = std::fabs(bf16_bits_to_float(layer[int64_t{pg} * page * 576 + i]));
            if (std::isfinite(v)) amax = std::max(amax, v);
          }
        }
      }
      for (size_t r = 0; r < ids.size(); ++r) {
        const int S = static_cast<int>(ids[r].size());
        const int n_pages = static_cast<int>(pages[r].size());
        // The request's rows in order.
        std::vector<uint16_t> rows(static_cast<size_t>(n_pages) * page * 576, 0);
        for (int j = 0; j < n_pages; ++j) {
          std::copy_n(layer + int64_t{pages[r][j]} * page * 576, page * 576,
                      rows.begin() + int64_t{j} * page * 576);
        }
        double k2 = 0;
        for (int i = 0; i < S * 576; ++i) k2 += std::pow(bf16_bits_to_float(rows[i]), 2);
        const double rms_k = std::sqrt(k2 / (S * 576.0));
        const int Q = std::min(S, 32);
        const double q_std = score_std / (sm_scale * std::sqrt(576.0) * rms_k);
        std::normal_distribution<double> normal(0.0, q_std);
        std::vector<uint16_t> q(static_cast<size_t>(Q) * H * 576);
        for (auto& v : q) v = float_to_bf16_bits(static_cast<float>(normal(rng)));
        std::vector<int32_t> table(static_cast<size_t>(n_pages));
        for (int j = 0; j < n_pages; ++j) table[j] = j;
        std::vector<int32_t> lens = {S};
        std::vector<uint16_t> out(static_cast<size_t>(Q) * H * 512);
        std::vector<float> lse(static_cast<size_t>(Q) * H);
        auto args_for = [&](void* kv, DType dt, float scale) {
          attn::VerifyArgs a;
          a.q = TensorView(q.data(), DType::kBF16, {1, Q, H, 576});
          a.kv.pages = TensorView(kv, dt, {n_pages, page, attn::kv_row_width(dt)});
          a.kv.kv_scale = scale;
          a.block_table = TensorView(table.data(), DType::kI32, {1, n_pages});
          a.seq_lens = TensorView(lens.data(), DType::kI32, {1});
          a.sm_scale = sm_scale;
          a.out = TensorView(out.data(), DType::kBF16, {1, Q, H, 512});
          a.lse = TensorView(lse.data(), DType::kF32, {1, Q, H});
          return a;
        };
        Result<attn::OracleResult> truth =
            attn::oracle_verify(args_for(rows.data(), DType::kBF16, 1));
        if (!truth.ok()) die(truth.status().to_string());
        double ref2 = 0;
        for (double v : truth->out) ref2 += v * v;
        const double ref_rms = std::sqrt(ref2 / truth->out.size());
        for (size_t f = 0; f < formats.size(); ++f) {
          const Format& fm = formats[f];
          const int64_t n_rows = int64_t{n_pages} * page;
          std::vector<uint8_t> kv(static_cast<size_t>(n_rows * attn::kv_row_bytes(fm.dtype)));
          const float scale = fm.calibrated ? amax / kFp8E4M3Max : 1.0f;
          std::vector<float> deq(static_cast<size_t>(n_rows) * 576);
          for (int64_t i = 0; i < n_rows; ++i) {
            const uint16_t* x = rows.data() + i * 576;
            float* d = deq.data() + i * 576;
            if (fm.dtype == DType::kBF16) {
              std::copy_n(x, 576, reinterpret_cast<uint16_t*>(kv.data()) + i * 576);
              for (int e = 0; e < 576; ++e) d[e] = bf16_bits_to_float(x[e]);
            } else if (fm.dtype == DType::kFP8E4M3) {
              for (int e = 0; e < 576; ++e) {
                kv[i * 576 + e] = kv::encode_fp8_kv_value(x[e], scale);
                d[e] = fp8e4m3_bits_to_float(kv[i * 576 + e]) * scale;
              }
            } else {
              uint8_t* row = kv.data() + i * kFp8TileRowBytes;
              encode_fp8_tile_row(x, row);
              for (int e = 0; e < 576; ++e) d[e] = fp8_tile_row_value(row, e);
            }
          }
          for (int64_t i = 0; i < int64_t{S} * 576; ++i) {
            const double x = bf16_bits_to_float(rows[i]), e = deq[i] - x;
            if (i % 576 < 512) {
              acc[f].kv_lat_err2 += e * e;
              acc[f].kv_lat_ref2 += x * x;
            } else {
              acc[f].kv_rope_err2 += e * e;
              acc[f].kv_rope_ref2 += x * x;
            }
          }
          if (Status st = attn::cpu_verify(
                  args_for(kv.data(), fm.dtype, fm.dtype == DType::kFP8E4M3 ? scale : 1.0f));
              !st.ok()) {
            die(st.to_string());
          }
          double worst = 0;
          for (size_t k = 0; k < out.size(); ++k) {
            const double e = bf16_bits_to_float(out[k]) - truth->out[k];
            acc[f].err2 += e * e;
            worst = std::max(worst, std::fabs(e));
          }
          acc[f].ref2 += ref2;
          acc[f].worst = std::max(acc[f].worst, worst / ref_rms);
        }
      }
    }
    std::printf("\n%zu requests (%s), %d layers, H=%d, last 32 tokens each, score std %.0f\n",
                ids.size(), dir.c_str(), layers, H, score_std);
    std::printf("%-16s %14s %14s %14s %14s\n", "format", "out rel RMS", "out max/RMS",
                "KV latent RMS", "KV rope RMS");
    for (size_t f = 0; f < formats.size(); ++f) {
      const Acc& a = acc[f];
      std::printf("%-16s %14.3e %14.3e %14.3e %14.3e\n", formats[f].name,
                  std::sqrt(a.err2 / a.ref2), a.worst, std::sqrt(a.kv_lat_err2 / a.kv_lat_ref2),
                  std::sqrt(a.kv_rope_err2 / a.kv_rope_ref2));
    }
  }
  return 0;
}
