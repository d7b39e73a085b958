// Built-in cost-model profiles, used when no profile file has an entry for this machine
// (docs/dispatch.md). Same JSON format as the file `mlaspec calibrate` writes.
//
// GPU profiles (kBuiltinGpuProfileJson): the whole file `mlaspec calibrate --out FILE` writes,
// pasted unchanged between the raw-string markers (write to a fresh FILE so it holds only the
// calibrated GPU). This string is the only place to edit; nothing else needs to change.
//
// NVIDIA H200 — MEASURED 2026-11-29 on the H200 (`mlaspec calibrate --quick`: B=1, H 16|128,
// q_len 2|4|8, S 2k|8k|32k|128k|512k, bf16 and fp8, median of 15 CUDA-graph replays), refitted per
// (backend, kv, H, q_len) from that run's stored measurements with `mlaspec calibrate --refit`;
// the H=16, q_len=8 curves also hold the same run's re-measured PERF.md S sweep (4k..1M). To be
// replaced by the full-grid calibration (S = 1k, 2k, ..., 1M).
//
// cpu: the CPU reference on a small multi-core host (~5 GB/s KV, ~10 GFLOP/s); informative only
// (on a CPU-only build it is the only candidate).
#pragma once

#include <string_view>

namespace mlaspec::attn::detail {

// ---- GPU profiles: `mlaspec calibrate --out FILE` output, pasted whole between the markers ----
inline constexpr std::string_view kBuiltinGpuProfileJson = R"json(
{
  "format": "mlaspec-profile",
  "machines": {
    "NVIDIA H200": {
      "crossovers": [
        {
          "heads": 16,
          "kv": "bf16",
          "measured": "S=32768",
          "model": "cuda_rowwise below S=10456, cuda_fold from there",
          "model_seq_len": 10456,
          "q_len": 2
        },
        {
          "heads": 16,
          "kv": "bf16",
          "measured": "S=32768",
          "model": "cuda_rowwise below S=11871, cuda_fold from there",
          "model_seq_len": 11871,
          "q_len": 4
        },
        {
          "heads": 16,
          "kv": "bf16",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=6222, cuda_fold from there",
          "model_seq_len": 6222,
          "q_len": 8
        },
        {
          "heads": 128,
          "kv": "bf16",
          "measured": "never in grid",
          "model": "cuda_rowwise cheaper at every S",
          "model_seq_len": 0,
          "q_len": 2
        },
        {
          "heads": 128,
          "kv": "bf16",
          "measured": "never in grid",
          "model": "cuda_rowwise cheaper at every S",
          "model_seq_len": 0,
          "q_len": 4
        },
        {
          "heads": 128,
          "kv": "bf16",
          "measured": "never in grid",
          "model": "cuda_rowwise cheaper at every S",
          "model_seq_len": 0,
          "q_len": 8
        },
        {
          "heads": 16,
          "kv": "fp8",
          "measured": "S=32768",
          "model": "cuda_rowwise below S=9612, cuda_fold from there",
          "model_seq_len": 9612,
          "q_len": 2
        },
        {
          "heads": 16,
          "kv": "fp8",
          "measured": "S=32768",
          "model": "cuda_rowwise below S=10649, cuda_fold from there",
          "model_seq_len": 10649,
          "q_len": 4
        },
        {
          "heads": 16,
          "kv": "fp8",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=5638, cuda_fold from there",
          "model_seq_len": 5638,
          "q_len": 8
        },
        {
          "heads": 128,
          "kv": "fp8",
          "measured": "never in grid",
          "model": "cuda_rowwise cheaper at every S",
          "model_seq_len": 0,
          "q_len": 2
        },
        {
          "heads": 128,
          "kv": "fp8",
          "measured": "never in grid",
          "model": "cuda_fold below S=403, cuda_rowwise from there",
          "model_seq_len": 403,
          "q_len": 4
        },
        {
          "heads": 128,
          "kv": "fp8",
          "measured": "never in grid",
          "model": "cuda_fold below S=974, cuda_rowwise from there",
          "model_seq_len": 974,
          "q_len": 8
        }
      ],
      "grid_loo_regret_max": 0.31435617030913887,
      "grid_regret_max": 0.0,
      "measured_at": "2026-11-29T14:05:29Z",
      "models": [
        {
          "backend": "cuda_fold",
          "curve": [
            [2048, 21.728],
            [8192, 22.575],
            [32768, 29.753],
            [131072, 60.404],
            [524288, 186.976]
          ],
          "fixed_us": 20.34511698006744,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.03434862228307556,
          "points": 5,
          "q_len": 2,
          "rms_rel_err": 0.022679654706534873,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.269807535178213
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [2048, 27.111],
            [8192, 28.212],
            [32768, 37.924],
            [131072, 68.54],
            [524288, 192.072]
          ],
          "fixed_us": 26.341980227058894,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.02921266960723845,
          "points": 5,
          "q_len": 4,
          "rms_rel_err": 0.01837265405114979,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2774611013067784
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [2048, 29.065],
            [4096, 29.63],
            [8192, 30.674],
            [16384, 35.3],
            [32768, 46.532],
            [65536, 68.84],
            [131072, 112.026],
            [262144, 199.71],
            [524288, 384.928],
            [1048576, 745.994]
          ],
          "fixed_us": 26.017991056408885,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.05785757273828551,
          "points": 10,
          "q_len": 8,
          "rms_rel_err": 0.031013031543207784,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.5785729657124632
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [2048, 30.591],
            [8192, 34.693],
            [32768, 67.503],
            [131072, 197.62],
            [524288, 730.404]
          ],
          "fixed_us": 26.061765730075603,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.06058498492022901,
          "points": 5,
          "q_len": 2,
          "rms_rel_err": 0.04087931236772187,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.1342350056519805
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [2048, 33.564],
            [8192, 47.806],
            [32768, 112.522],
            [131072, 372.998],
            [524288, 1429.672]
          ],
          "fixed_us": 27.47688215724083,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.025759162210341913,
          "points": 5,
          "q_len": 4,
          "rms_rel_err": 0.01704996185658759,
          "us_per_gflop": 0.0,
          "us_per_mb": 2.2846392020521358
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [2048, 41.181],
            [8192, 72.943],
            [32768, 201.722],
            [131072, 727.06],
            [524288, 2825.718]
          ],
          "fixed_us": 30.10420359286712,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.009272575573871178,
          "points": 5,
          "q_len": 8,
          "rms_rel_err": 0.006896580869457519,
          "us_per_gflop": 0.0,
          "us_per_mb": 4.5958746310332925
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [2048, 27.018],
            [8192, 27.013],
            [32768, 31.162],
            [131072, 77.448],
            [524288, 258.25]
          ],
          "fixed_us": 23.03656277687068,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.17172520394107837,
          "points": 5,
          "q_len": 2,
          "rms_rel_err": 0.09928433055788692,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.7140345746897055
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [2048, 30.993],
            [8192, 31.91],
            [32768, 37.921],
            [131072, 84.568],
            [524288, 266.222]
          ],
          "fixed_us": 27.91603376520103,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.10967002203351317,
          "points": 5,
          "q_len": 4,
          "rms_rel_err": 0.06190375281790436,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.7504072015372882
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [2048, 33.473],
            [4096, 34.416],
            [8192, 34.801],
            [16384, 38.43],
            [32768, 55.517],
            [65536, 89.57],
            [131072, 160.6],
            [262144, 300.688],
            [524288, 583.142],
            [1048576, 1147.1]
          ],
          "fixed_us": 27.369027124794663,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.14111948712467126,
          "points": 10,
          "q_len": 8,
          "rms_rel_err": 0.07627516932793668,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.7467060044816927
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [2048, 34.961],
            [8192, 38.61],
            [32768, 90.248],
            [131072, 297.101],
            [524288, 1131.22]
          ],
          "fixed_us": 26.765005292726066,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.12071284052898545,
          "points": 5,
          "q_len": 2,
          "rms_rel_err": 0.07895022536420837,
          "us_per_gflop": 0.0,
          "us_per_mb": 3.49789899523399
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [2048, 38.148],
            [8192, 58.288],
            [32768, 163.348],
            [131072, 582.794],
            [524288, 2306.114]
          ],
          "fixed_us": 27.806983098247542,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.06707036616881612,
          "points": 5,
          "q_len": 4,
          "rms_rel_err": 0.03982474431124268,
          "us_per_gflop": 0.0,
          "us_per_mb": 7.288250352901514
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [2048, 45.311],
            [8192, 96.342],
            [32768, 305.888],
            [131072, 1148.264],
            [524288, 4595.26]
          ],
          "fixed_us": 27.428469158591554,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.016316205218999125,
          "points": 5,
          "q_len": 8,
          "rms_rel_err": 0.010598111221094662,
          "us_per_gflop": 0.0,
          "us_per_mb": 14.877499694920227
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [2048, 19.601],
            [8192, 20.587],
            [32768, 45.81],
            [131072, 105.658],
            [524288, 365.076]
          ],
          "fixed_us": 17.22111652113847,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.13450953636744267,
          "points": 5,
          "q_len": 2,
          "rms_rel_err": 0.0818280631348741,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.29705841177292974
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [2048, 19.962],
            [8192, 21.464],
            [32768, 80.157],
            [131072, 199.548],
            [524288, 721.61]
          ],
          "fixed_us": 14.375303267278934,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.24318903348348053,
          "points": 5,
          "q_len": 4,
          "rms_rel_err": 0.15691724405370652,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.3065563687269689
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [2048, 20.363],
            [4096, 21.159],
            [8192, 38.284],
            [16384, 74.439],
            [32768, 116.24],
            [65536, 192.058],
            [131072, 339.866],
            [262144, 658.716],
            [524288, 1293.298],
            [1048576, 2647.936]
          ],
          "fixed_us": 14.127613078240483,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.23463497161216962,
          "points": 10,
          "q_len": 8,
          "rms_rel_err": 0.11246365830231878,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.28375520726150083
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [2048, 29.04],
            [8192, 33.546],
            [32768, 62.584],
            [131072, 173.458],
            [524288, 661.004]
          ],
          "fixed_us": 25.392709810556376,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.04371287746923336,
          "points": 5,
          "q_len": 2,
          "rms_rel_err": 0.034509095274052805,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.5040372169374179
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [2048, 32.447],
            [8192, 45.29],
            [32768, 101.428],
            [131072, 337.346],
            [524288, 1362.896]
          ],
          "fixed_us": 26.57507580987203,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.05405636837710415,
          "points": 5,
          "q_len": 4,
          "rms_rel_err": 0.03486215171050689,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.5226365972616934
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [2048, 39.651],
            [8192, 67.388],
            [32768, 178.716],
            [131072, 649.334],
            [524288, 2601.302]
          ],
          "fixed_us": 29.40609158488414,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.034412168204349114,
          "points": 5,
          "q_len": 8,
          "rms_rel_err": 0.02274202627372896,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.513754680171162
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [2048, 24.928],
            [8192, 25.406],
            [32768, 49.896],
            [131072, 144.634],
            [524288, 509.822]
          ],
          "fixed_us": 20.46431392936937,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.10338976782838405,
          "points": 5,
          "q_len": 2,
          "rms_rel_err": 0.06654910815826484,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.7996019469901786
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [2048, 25.023],
            [8192, 25.893],
            [32768, 92.859],
            [131072, 280.232],
            [524288, 1003.024]
          ],
          "fixed_us": 16.354096374284012,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.2396962090929733,
          "points": 5,
          "q_len": 4,
          "rms_rel_err": 0.15276227345173354,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.8342354526877132
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [2048, 25.544],
            [4096, 26.247],
            [8192, 47.783],
            [16384, 90.497],
            [32768, 153.646],
            [65536, 277.974],
            [131072, 524.773],
            [262144, 993.136],
            [524288, 1934.652],
            [1048576, 3766.76]
          ],
          "fixed_us": 15.107062230895432,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.17460322231164271,
          "points": 10,
          "q_len": 8,
          "rms_rel_err": 0.08802800108842508,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.8329900890041467
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [2048, 33.043],
            [8192, 36.942],
            [32768, 83.953],
            [131072, 265.365],
            [524288, 977.71]
          ],
          "fixed_us": 26.274064000892384,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.1059715193423123,
          "points": 5,
          "q_len": 2,
          "rms_rel_err": 0.06486743080873023,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.5452568703488356
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [2048, 36.653],
            [8192, 55.385],
            [32768, 148.083],
            [131072, 517.352],
            [524288, 1958.506]
          ],
          "fixed_us": 28.021302533957062,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.04815298955745262,
          "points": 5,
          "q_len": 4,
          "rms_rel_err": 0.026724996568427254,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.5910672229794307
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [2048, 43.544],
            [8192, 89.648],
            [32768, 274.958],
            [131072, 1008.165],
            [524288, 3833.416]
          ],
          "fixed_us": 28.55787997008024,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.020822446340079015,
          "points": 5,
          "q_len": 8,
          "rms_rel_err": 0.011946757551104798,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.6079509115376245
        }
      ],
      "provisional": false,
      "source": "mlaspec calibrate --quick on NVIDIA H200, measured 2026-11-29T14:05:29Z; refitted per q_len with mlaspec calibrate --refit, curves include that run's S-sweep re-measurements"
    }
  },
  "version": 2
}
)json";

// ---- CPU ----------------------------------------------------------------------------------------
inline constexpr std::string_view kBuiltinCpuProfileJson = R"json(
{
  "format": "mlaspec-profile",
  "version": 2,
  "machines": {
    "cpu": {
      "source": "rough constants for the CPU reference",
      "provisional": false,
      "models": [
        {"backend": "cpu_reference", "kv": "bf16", "heads": 0, "fixed_us": 50.0, "us_per_mb": 200.0, "us_per_gflop": 100000.0},
        {"backend": "cpu_reference", "kv": "fp8",  "heads": 0, "fixed_us": 50.0, "us_per_mb": 200.0, "us_per_gflop": 100000.0}
      ]
    }
  }
}
)json";

// The machine whose built-in constants stand in for a GPU without its own (with a warning).
inline constexpr std::string_view kFallbackGpu = "NVIDIA H200";

}  // namespace mlaspec::attn::detail
