// Built-in cost-model profiles, used when no profile file has an entry for this machine
// (docs/dispatch.md). Same JSON format as the file `mlaspec calibrate` writes.
//
// GPU profiles (kBuiltinGpuProfileJson): the whole file `mlaspec calibrate --out FILE` writes,
// pasted unchanged between the raw-string markers (write to a fresh FILE so it holds only the
// calibrated GPU). This string is the only place to edit; nothing else needs to change.
//
// NVIDIA H200 — MEASURED 2026-12-02 on the H200 by `mlaspec calibrate` (full grid: B=1, H 16|128,
// q_len 1|2|4|8, S = 1k, 2k, ..., 1M, bf16 and fp8, default and deterministic mode, plus each
// entry's batch grid B 4|16|64 x S 4096|32768; median of 30 CUDA-graph replays per point; the
// first two-mode grid with batch grids, nineteenth session) on the kernels of a2f5fe0 (the narrow
// kernel for row tiles of <= 16 rows, which rowwise runs at H = 16, its fp8 raw tiles freed behind
// each expansion step's publish fence; the 64-row kernel with v28's half-slots otherwise; v31's
// fp8 fold without clusters; the deterministic merge tree of v34; fp8 in f16 since v37, its raw
// codes in the half freed first since v40; v42's mask-free tiles; v44's lazy rescale; v45a's P0
// re-store only where WG1 moved a max; v46's bf16 start, Q before stage 1's copies; the 64-row
// bf16 kernel's Q copied by TMA and the narrow kernel's row-per-warp epilogue stores, seventeenth
// session); report in docs/perf/dispatch-calibration-2026-12-02i.md.
// Recalibrate whenever the kernels change.
//
// cpu: the CPU reference on a small multi-core host (~5 GB/s KV, ~10 GFLOP/s); informative only
// (on a CPU-only build it is the only candidate).
#pragma once

#include <string_view>

namespace mlaspec::attn::detail {

// ---- GPU profiles: `mlaspec calibrate --out FILE` output, pasted whole between the markers ----
inline constexpr std::string_view kBuiltinGpuProfileJson = R"json({
  "format": "mlaspec-profile",
  "machines": {
    "NVIDIA H200": {
      "crossovers": [
        {
          "det": false,
          "grid_loo_regret_max": 0.0,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=1024",
          "model": "cuda_fold cheaper at every S",
          "model_seq_len": 0,
          "q_len": 1
        },
        {
          "det": false,
          "grid_loo_regret_max": 0.05537380873286413,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=1024",
          "model": "cuda_rowwise below S=1024, cuda_fold from there (cheaper backend changes again at S=9381, 18214)",
          "model_seq_len": 1024,
          "q_len": 2
        },
        {
          "det": false,
          "grid_loo_regret_max": 0.0161872525898501,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=8425, cuda_fold from there",
          "model_seq_len": 8425,
          "q_len": 4
        },
        {
          "det": false,
          "grid_loo_regret_max": 0.0360455938293569,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=4321, cuda_fold from there",
          "model_seq_len": 4321,
          "q_len": 8
        },
        {
          "det": false,
          "grid_loo_regret_max": 0.02265288862086967,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=1024",
          "model": "cuda_rowwise below S=1024, cuda_fold from there (cheaper backend changes again at S=1618, 10778, 324387, 647435)",
          "model_seq_len": 1024,
          "q_len": 1
        },
        {
          "det": false,
          "grid_loo_regret_max": 0.04322709119784651,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=4280, cuda_fold from there (cheaper backend changes again at S=688352, 1048577)",
          "model_seq_len": 4280,
          "q_len": 2
        },
        {
          "det": false,
          "grid_loo_regret_max": 0.04254514785670649,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=4096",
          "model": "cuda_rowwise below S=3643, cuda_fold from there (cheaper backend changes again at S=53746, 93204, 315694, 952262)",
          "model_seq_len": 3643,
          "q_len": 4
        },
        {
          "det": false,
          "grid_loo_regret_max": 0.05306482065821849,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=65536",
          "model": "cuda_rowwise below S=39633, cuda_fold from there (cheaper backend changes again at S=105791)",
          "model_seq_len": 39633,
          "q_len": 8
        },
        {
          "det": false,
          "grid_loo_regret_max": 0.023819217135046422,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=2048",
          "model": "cuda_fold below S=1024, cuda_rowwise from there (cheaper backend changes again at S=1584)",
          "model_seq_len": 1024,
          "q_len": 1
        },
        {
          "det": false,
          "grid_loo_regret_max": 0.14043468405377046,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=32768",
          "model": "cuda_rowwise below S=20170, cuda_fold from there",
          "model_seq_len": 20170,
          "q_len": 2
        },
        {
          "det": false,
          "grid_loo_regret_max": 0.2036254146311678,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=10611, cuda_fold from there",
          "model_seq_len": 10611,
          "q_len": 4
        },
        {
          "det": false,
          "grid_loo_regret_max": 0.209780721181976,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=5363, cuda_fold from there",
          "model_seq_len": 5363,
          "q_len": 8
        },
        {
          "det": false,
          "grid_loo_regret_max": 0.005857235476307787,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=1615, cuda_rowwise from there (cheaper backend changes again at S=4446, 22581, 44023, 122104, 205131, 286488, 892626, 1048577)",
          "model_seq_len": 1615,
          "q_len": 1
        },
        {
          "det": false,
          "grid_loo_regret_max": 0.008622517400752594,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=37314, cuda_rowwise from there (cheaper backend changes again at S=482923, 1048577)",
          "model_seq_len": 37314,
          "q_len": 2
        },
        {
          "det": false,
          "grid_loo_regret_max": 0.0023583359510808144,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=6551, cuda_rowwise from there (cheaper backend changes again at S=12937, 154974, 1048577)",
          "model_seq_len": 6551,
          "q_len": 4
        },
        {
          "det": false,
          "grid_loo_regret_max": 0.0008727578897920196,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=41456, cuda_rowwise from there (cheaper backend changes again at S=156334, 741249)",
          "model_seq_len": 41456,
          "q_len": 8
        },
        {
          "det": true,
          "grid_loo_regret_max": 0.0,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=1024",
          "model": "cuda_fold cheaper at every S",
          "model_seq_len": 0,
          "q_len": 1
        },
        {
          "det": true,
          "grid_loo_regret_max": 0.1162140792337456,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=1024",
          "model": "cuda_rowwise below S=1024, cuda_fold from there (cheaper backend changes again at S=65312, 65579)",
          "model_seq_len": 1024,
          "q_len": 2
        },
        {
          "det": true,
          "grid_loo_regret_max": 0.04267709731873026,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=1024",
          "model": "cuda_rowwise below S=1024, cuda_fold from there",
          "model_seq_len": 1024,
          "q_len": 4
        },
        {
          "det": true,
          "grid_loo_regret_max": 0.02306557709182777,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=1024",
          "model": "cuda_rowwise below S=1024, cuda_fold from there",
          "model_seq_len": 1024,
          "q_len": 8
        },
        {
          "det": true,
          "grid_loo_regret_max": 0.0,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=131072",
          "model": "cuda_rowwise below S=98594, cuda_fold from there",
          "model_seq_len": 98594,
          "q_len": 1
        },
        {
          "det": true,
          "grid_loo_regret_max": 0.06419899097047277,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=65536",
          "model": "cuda_rowwise below S=58373, cuda_fold from there (cheaper backend changes again at S=621507, 1048577)",
          "model_seq_len": 58373,
          "q_len": 2
        },
        {
          "det": true,
          "grid_loo_regret_max": 0.06250395062685343,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=32768",
          "model": "cuda_rowwise below S=24982, cuda_fold from there (cheaper backend changes again at S=292198, 899819)",
          "model_seq_len": 24982,
          "q_len": 4
        },
        {
          "det": true,
          "grid_loo_regret_max": 0.010134033532150921,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=65536",
          "model": "cuda_rowwise below S=34710, cuda_fold from there (cheaper backend changes again at S=237248)",
          "model_seq_len": 34710,
          "q_len": 8
        },
        {
          "det": true,
          "grid_loo_regret_max": 0.002627819700105949,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=2048",
          "model": "cuda_fold below S=1024, cuda_rowwise from there (cheaper backend changes again at S=1270)",
          "model_seq_len": 1024,
          "q_len": 1
        },
        {
          "det": true,
          "grid_loo_regret_max": 0.2507326602797981,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=131072",
          "model": "cuda_rowwise below S=86647, cuda_fold from there",
          "model_seq_len": 86647,
          "q_len": 2
        },
        {
          "det": true,
          "grid_loo_regret_max": 0.2753805724407108,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=65536",
          "model": "cuda_rowwise below S=43454, cuda_fold from there",
          "model_seq_len": 43454,
          "q_len": 4
        },
        {
          "det": true,
          "grid_loo_regret_max": 0.2572280567023917,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=32768",
          "model": "cuda_rowwise below S=21330, cuda_fold from there",
          "model_seq_len": 21330,
          "q_len": 8
        },
        {
          "det": true,
          "grid_loo_regret_max": 0.0003258632167473241,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=2034, cuda_rowwise from there (cheaper backend changes again at S=2102, 128335)",
          "model_seq_len": 2034,
          "q_len": 1
        },
        {
          "det": true,
          "grid_loo_regret_max": 0.001957839247260118,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=32163, cuda_rowwise from there (cheaper backend changes again at S=423442, 805271)",
          "model_seq_len": 32163,
          "q_len": 2
        },
        {
          "det": true,
          "grid_loo_regret_max": 0.0007145386362612527,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=30910, cuda_rowwise from there (cheaper backend changes again at S=205985, 1048577)",
          "model_seq_len": 30910,
          "q_len": 4
        },
        {
          "det": true,
          "grid_loo_regret_max": 0.0019856527637440724,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=9803, cuda_rowwise from there (cheaper backend changes again at S=58523, 82573, 626187, 1048577)",
          "model_seq_len": 9803,
          "q_len": 8
        }
      ],
      "grid_loo_regret_max": 0.2753805724407108,
      "grid_regret_max": 0.0,
      "measured_at": "2026-12-02T15:53:38Z",
      "models": [
        {
          "backend": "cuda_fold",
          "batch": [
            [4, 4096, 17.328],
            [4, 32768, 47.306],
            [16, 4096, 29.707],
            [16, 32768, 151.314],
            [64, 4096, 81.998],
            [64, 32768, 566.902]
          ],
          "curve": [
            [1024, 16.194],
            [2048, 16.207],
            [4096, 16.458],
            [8192, 16.726],
            [16384, 17.205],
            [32768, 20.233],
            [65536, 30.109],
            [131072, 47.796],
            [262144, 82.526],
            [524288, 151.968],
            [1048576, 290.272]
          ],
          "fixed_us": 14.33766689744641,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.12135158038666871,
          "points": 17,
          "q_len": 1,
          "rms_rel_err": 0.05581213914499342,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.22122990070276438
        },
        {
          "backend": "cuda_fold",
          "batch": [
            [4, 4096, 18.768],
            [4, 32768, 50.728],
            [16, 4096, 33.403],
            [16, 32768, 160.022],
            [64, 4096, 92.084],
            [64, 32768, 600.436]
          ],
          "curve": [
            [1024, 15.51],
            [2048, 16.239],
            [4096, 16.502],
            [8192, 16.793],
            [16384, 18.892],
            [32768, 24.548],
            [65536, 33.288],
            [131072, 50.896],
            [262144, 87.95],
            [524288, 162.082],
            [1048576, 304.164]
          ],
          "fixed_us": 14.988388544890283,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.04438843674682913,
          "points": 17,
          "q_len": 2,
          "rms_rel_err": 0.023152171856208912,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2417569303439717
        },
        {
          "backend": "cuda_fold",
          "batch": [
            [4, 4096, 21.492],
            [4, 32768, 54.55],
            [16, 4096, 38.603],
            [16, 32768, 163.592],
            [64, 4096, 101.172],
            [64, 32768, 624.526]
          ],
          "curve": [
            [1024, 16.656],
            [2048, 17.625],
            [4096, 17.919],
            [8192, 18.125],
            [16384, 20.868],
            [32768, 28.87],
            [65536, 37.107],
            [131072, 54.03],
            [262144, 91.164],
            [524288, 165.282],
            [1048576, 307.422]
          ],
          "fixed_us": 16.778491291404727,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.08919349097373042,
          "points": 17,
          "q_len": 4,
          "rms_rel_err": 0.04234822042065139,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2520965831829633
        },
        {
          "backend": "cuda_fold",
          "batch": [
            [4, 4096, 25.285],
            [4, 32768, 73.5],
            [16, 4096, 50.402],
            [16, 32768, 245.714],
            [64, 4096, 126.912],
            [64, 32768, 1023.432]
          ],
          "curve": [
            [1024, 17.23],
            [2048, 17.678],
            [4096, 18.679],
            [8192, 19.865],
            [16384, 25.086],
            [32768, 32.515],
            [65536, 47.037],
            [131072, 74.092],
            [262144, 130.512],
            [524288, 241.66],
            [1048576, 514.928]
          ],
          "fixed_us": 16.98916594953802,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.08038971101341652,
          "points": 17,
          "q_len": 8,
          "rms_rel_err": 0.039966367306584295,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.38889596661512926
        },
        {
          "backend": "cuda_fold",
          "batch": [
            [4, 4096, 26.237],
            [4, 32768, 74.298],
            [16, 4096, 52.811],
            [16, 32768, 247.534],
            [64, 4096, 143.9],
            [64, 32768, 1023.44]
          ],
          "curve": [
            [1024, 17.421],
            [2048, 17.956],
            [4096, 18.693],
            [8192, 19.936],
            [16384, 25.062],
            [32768, 32.684],
            [65536, 46.816],
            [131072, 74.016],
            [262144, 136.996],
            [524288, 267.834],
            [1048576, 516.824]
          ],
          "fixed_us": 17.028164612648855,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.09891739094004015,
          "points": 17,
          "q_len": 1,
          "rms_rel_err": 0.040853898367351565,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.40476969552442343
        },
        {
          "backend": "cuda_fold",
          "batch": [
            [4, 4096, 33.866],
            [4, 32768, 124.334],
            [16, 4096, 86.178],
            [16, 32768, 500.902],
            [64, 4096, 273.2],
            [64, 32768, 1992.17]
          ],
          "curve": [
            [1024, 19.243],
            [2048, 18.916],
            [4096, 20.143],
            [8192, 24.255],
            [16384, 31.214],
            [32768, 44.925],
            [65536, 71.0],
            [131072, 128.204],
            [262144, 247.908],
            [524288, 487.734],
            [1048576, 1052.082]
          ],
          "fixed_us": 17.131637760708475,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.11255987351130148,
          "points": 17,
          "q_len": 2,
          "rms_rel_err": 0.05695577720974701,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.7860636973118499
        },
        {
          "backend": "cuda_fold",
          "batch": [
            [4, 4096, 47.517],
            [4, 32768, 237.938],
            [16, 4096, 136.464],
            [16, 32768, 959.58],
            [64, 4096, 513.474],
            [64, 32768, 3845.276]
          ],
          "curve": [
            [1024, 19.238],
            [2048, 19.859],
            [4096, 23.743],
            [8192, 30.449],
            [16384, 43.602],
            [32768, 69.937],
            [65536, 128.128],
            [131072, 245.368],
            [262144, 486.336],
            [524288, 1001.594],
            [1048576, 1916.686]
          ],
          "fixed_us": 16.436077471347087,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.06984505923802731,
          "points": 17,
          "q_len": 4,
          "rms_rel_err": 0.037351408147766,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.546705091709502
        },
        {
          "backend": "cuda_fold",
          "batch": [
            [4, 4096, 78.349],
            [4, 32768, 492.202],
            [16, 4096, 253.632],
            [16, 32768, 1896.714],
            [64, 4096, 1023.068],
            [64, 32768, 7552.534]
          ],
          "curve": [
            [1024, 20.793],
            [2048, 23.897],
            [4096, 30.321],
            [8192, 42.945],
            [16384, 71.036],
            [32768, 127.868],
            [65536, 239.254],
            [131072, 487.852],
            [262144, 941.43],
            [524288, 1899.494],
            [1048576, 3758.14]
          ],
          "fixed_us": 16.315241077742716,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.07164642506497199,
          "points": 17,
          "q_len": 8,
          "rms_rel_err": 0.03433984745674321,
          "us_per_gflop": 0.0,
          "us_per_mb": 3.091009471670251
        },
        {
          "backend": "cuda_fold",
          "batch": [
            [4, 4096, 18.23],
            [4, 32768, 43.738],
            [16, 4096, 27.893],
            [16, 32768, 140.148],
            [64, 4096, 76.644],
            [64, 32768, 528.49]
          ],
          "curve": [
            [1024, 17.376],
            [2048, 16.638],
            [4096, 16.943],
            [8192, 17.237],
            [16384, 18.013],
            [32768, 19.659],
            [65536, 27.793],
            [131072, 44.04],
            [262144, 76.022],
            [524288, 139.104],
            [1048576, 262.956]
          ],
          "fixed_us": 14.979104379783841,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.143089905684179,
          "points": 17,
          "q_len": 1,
          "rms_rel_err": 0.06349993778395606,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.3970046434647657
        },
        {
          "backend": "cuda_fold",
          "batch": [
            [4, 4096, 21.815],
            [4, 32768, 57.675],
            [16, 4096, 35.687],
            [16, 32768, 192.028],
            [64, 4096, 105.74],
            [64, 32768, 729.838]
          ],
          "curve": [
            [1024, 19.898],
            [2048, 20.283],
            [4096, 20.321],
            [8192, 20.433],
            [16384, 21.533],
            [32768, 24.275],
            [65536, 35.796],
            [131072, 57.611],
            [262144, 102.488],
            [524288, 188.534],
            [1048576, 363.384]
          ],
          "fixed_us": 17.53322790925807,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.1508348275507183,
          "points": 17,
          "q_len": 2,
          "rms_rel_err": 0.06709591507888918,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.5512026577446608
        },
        {
          "backend": "cuda_fold",
          "batch": [
            [4, 4096, 24.357],
            [4, 32768, 61.704],
            [16, 4096, 39.476],
            [16, 32768, 195.944],
            [64, 4096, 111.844],
            [64, 32768, 726.212]
          ],
          "curve": [
            [1024, 21.199],
            [2048, 22.044],
            [4096, 22.114],
            [8192, 22.103],
            [16384, 23.405],
            [32768, 28.302],
            [65536, 39.512],
            [131072, 60.933],
            [262144, 105.948],
            [524288, 194.116],
            [1048576, 367.416]
          ],
          "fixed_us": 19.61186158527978,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.07989303037979156,
          "points": 17,
          "q_len": 4,
          "rms_rel_err": 0.043439648605328146,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.5688912950387219
        },
        {
          "backend": "cuda_fold",
          "batch": [
            [4, 4096, 27.82],
            [4, 32768, 102.101],
            [16, 4096, 62.394],
            [16, 32768, 360.336],
            [64, 4096, 183.28],
            [64, 32768, 1366.062]
          ],
          "curve": [
            [1024, 22.324],
            [2048, 22.326],
            [4096, 22.193],
            [8192, 23.784],
            [16384, 28.02],
            [32768, 38.835],
            [65536, 59.532],
            [131072, 102.514],
            [262144, 186.672],
            [524288, 352.776],
            [1048576, 685.456]
          ],
          "fixed_us": 19.561366799980835,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.09488840295338041,
          "points": 17,
          "q_len": 8,
          "rms_rel_err": 0.041081408630915285,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.0928189468668281
        },
        {
          "backend": "cuda_fold",
          "batch": [
            [4, 4096, 27.923],
            [4, 32768, 101.843],
            [16, 4096, 62.175],
            [16, 32768, 357.218],
            [64, 4096, 182.31],
            [64, 32768, 1365.64]
          ],
          "curve": [
            [1024, 21.859],
            [2048, 22.311],
            [4096, 22.328],
            [8192, 23.718],
            [16384, 28.061],
            [32768, 39.064],
            [65536, 59.724],
            [131072, 102.206],
            [262144, 186.564],
            [524288, 350.416],
            [1048576, 679.302]
          ],
          "fixed_us": 19.55631642733203,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.0759692147901675,
          "points": 17,
          "q_len": 1,
          "rms_rel_err": 0.03722561086773266,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.0891718891395905
        },
        {
          "backend": "cuda_fold",
          "batch": [
            [4, 4096, 38.173],
            [4, 32768, 183.501],
            [16, 4096, 109.22],
            [16, 32768, 694.898],
            [64, 4096, 360.642],
            [64, 32768, 2700.78]
          ],
          "curve": [
            [1024, 22.752],
            [2048, 22.921],
            [4096, 24.153],
            [8192, 27.741],
            [16384, 38.508],
            [32768, 59.58],
            [65536, 101.151],
            [131072, 182.619],
            [262144, 345.598],
            [524288, 669.568],
            [1048576, 1318.174]
          ],
          "fixed_us": 19.493750336121924,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.0867628225708088,
          "points": 17,
          "q_len": 2,
          "rms_rel_err": 0.039337199229471126,
          "us_per_gflop": 0.0,
          "us_per_mb": 2.177684752580771
        },
        {
          "backend": "cuda_fold",
          "batch": [
            [4, 4096, 61.352],
            [4, 32768, 351.728],
            [16, 4096, 181.741],
            [16, 32768, 1339.664],
            [64, 4096, 713.596],
            [64, 32768, 5352.416]
          ],
          "curve": [
            [1024, 22.784],
            [2048, 23.905],
            [4096, 27.339],
            [8192, 38.074],
            [16384, 58.842],
            [32768, 100.357],
            [65536, 182.953],
            [131072, 348.901],
            [262144, 682.602],
            [524288, 1344.156],
            [1048576, 2671.66]
          ],
          "fixed_us": 18.638682980492366,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.06845354579599505,
          "points": 17,
          "q_len": 4,
          "rms_rel_err": 0.02747484447307042,
          "us_per_gflop": 0.0,
          "us_per_mb": 4.383999177966734
        },
        {
          "backend": "cuda_fold",
          "batch": [
            [4, 4096, 108.673],
            [4, 32768, 689.39],
            [16, 4096, 359.35],
            [16, 32768, 2674.114],
            [64, 4096, 1417.296],
            [64, 32768, 10683.802]
          ],
          "curve": [
            [1024, 24.125],
            [2048, 26.985],
            [4096, 37.714],
            [8192, 58.854],
            [16384, 100.339],
            [32768, 183.457],
            [65536, 349.476],
            [131072, 679.192],
            [262144, 1341.012],
            [524288, 2664.828],
            [1048576, 5314.638]
          ],
          "fixed_us": 17.721480268521177,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.06684370872230716,
          "points": 17,
          "q_len": 8,
          "rms_rel_err": 0.027274339104268318,
          "us_per_gflop": 0.0,
          "us_per_mb": 8.867810444722515
        },
        {
          "backend": "cuda_rowwise",
          "batch": [
            [4, 4096, 17.471],
            [4, 32768, 47.52],
            [16, 4096, 29.747],
            [16, 32768, 151.236],
            [64, 4096, 82.44],
            [64, 32768, 566.558]
          ],
          "curve": [
            [1024, 16.337],
            [2048, 16.302],
            [4096, 16.621],
            [8192, 16.88],
            [16384, 17.281],
            [32768, 20.348],
            [65536, 30.395],
            [131072, 47.976],
            [262144, 82.722],
            [524288, 152.69],
            [1048576, 290.632]
          ],
          "fixed_us": 14.46071613792026,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.12175619368450796,
          "points": 17,
          "q_len": 1,
          "rms_rel_err": 0.05594506377320914,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2215801654485896
        },
        {
          "backend": "cuda_rowwise",
          "batch": [
            [4, 4096, 18.168],
            [4, 32768, 77.184],
            [16, 4096, 46.422],
            [16, 32768, 267.844],
            [64, 4096, 141.644],
            [64, 32768, 979.41]
          ],
          "curve": [
            [1024, 16.369],
            [2048, 16.513],
            [4096, 16.757],
            [8192, 16.983],
            [16384, 18.037],
            [32768, 31.739],
            [65536, 46.893],
            [131072, 77.192],
            [262144, 136.756],
            [524288, 254.844],
            [1048576, 490.194]
          ],
          "fixed_us": 13.838337204222173,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.19175986934126743,
          "points": 17,
          "q_len": 2,
          "rms_rel_err": 0.08346099321611153,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.20285561646963896
        },
        {
          "backend": "cuda_rowwise",
          "batch": [
            [4, 4096, 30.916],
            [4, 32768, 144.504],
            [16, 4096, 86.541],
            [16, 32768, 501.51],
            [64, 4096, 274.116],
            [64, 32768, 1918.346]
          ],
          "curve": [
            [1024, 16.44],
            [2048, 17.023],
            [4096, 17.231],
            [8192, 17.837],
            [16384, 30.559],
            [32768, 56.529],
            [65536, 85.947],
            [131072, 144.318],
            [262144, 265.298],
            [524288, 496.072],
            [1048576, 951.066]
          ],
          "fixed_us": 14.094881313896856,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.23392534062023773,
          "points": 17,
          "q_len": 4,
          "rms_rel_err": 0.09139938999653363,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.20965757301928006
        },
        {
          "backend": "cuda_rowwise",
          "batch": [
            [4, 4096, 56.372],
            [4, 32768, 260.234],
            [16, 4096, 146.082],
            [16, 32768, 964.842],
            [64, 4096, 491.456],
            [64, 32768, 3729.594]
          ],
          "curve": [
            [1024, 16.914],
            [2048, 17.105],
            [4096, 18.029],
            [8192, 30.375],
            [16384, 56.007],
            [32768, 85.205],
            [65536, 143.36],
            [131072, 259.21],
            [262144, 491.054],
            [524288, 944.612],
            [1048576, 1846.636]
          ],
          "fixed_us": 13.958142210306027,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.20541148237968487,
          "points": 17,
          "q_len": 8,
          "rms_rel_err": 0.09829185177291577,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.20420625082268457
        },
        {
          "backend": "cuda_rowwise",
          "batch": [
            [4, 4096, 25.968],
            [4, 32768, 74.778],
            [16, 4096, 52.115],
            [16, 32768, 280.992],
            [64, 4096, 135.79],
            [64, 32768, 1183.47]
          ],
          "curve": [
            [1024, 17.815],
            [2048, 17.75],
            [4096, 18.021],
            [8192, 19.648],
            [16384, 25.625],
            [32768, 33.035],
            [65536, 47.059],
            [131072, 74.546],
            [262144, 138.138],
            [524288, 262.87],
            [1048576, 539.4]
          ],
          "fixed_us": 16.707452944332786,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.13127447917475188,
          "points": 17,
          "q_len": 1,
          "rms_rel_err": 0.05448784160568764,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4186411485622292
        },
        {
          "backend": "cuda_rowwise",
          "batch": [
            [4, 4096, 32.115],
            [4, 32768, 127.994],
            [16, 4096, 83.254],
            [16, 32768, 507.806],
            [64, 4096, 268.22],
            [64, 32768, 2017.732]
          ],
          "curve": [
            [1024, 18.536],
            [2048, 18.683],
            [4096, 20.095],
            [8192, 25.126],
            [16384, 31.883],
            [32768, 45.459],
            [65536, 72.778],
            [131072, 131.544],
            [262144, 254.266],
            [524288, 501.27],
            [1048576, 1008.488]
          ],
          "fixed_us": 16.929094387874226,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.07489470520547015,
          "points": 17,
          "q_len": 2,
          "rms_rel_err": 0.03803800655396359,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.3979602904488605
        },
        {
          "backend": "cuda_rowwise",
          "batch": [
            [4, 4096, 46.77],
            [4, 32768, 250.398],
            [16, 4096, 128.534],
            [16, 32768, 985.818],
            [64, 4096, 518.868],
            [64, 32768, 3864.878]
          ],
          "curve": [
            [1024, 18.278],
            [2048, 19.362],
            [4096, 23.866],
            [8192, 30.688],
            [16384, 43.779],
            [32768, 71.298],
            [65536, 127.142],
            [131072, 247.21],
            [262144, 493.818],
            [524288, 960.72],
            [1048576, 1929.622]
          ],
          "fixed_us": 15.988605783439004,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.06262620369603755,
          "points": 17,
          "q_len": 4,
          "rms_rel_err": 0.030816399302601848,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.38940431385847407
        },
        {
          "backend": "cuda_rowwise",
          "batch": [
            [4, 4096, 78.26],
            [4, 32768, 481.784],
            [16, 4096, 250.554],
            [16, 32768, 1859.722],
            [64, 4096, 1001.924],
            [64, 32768, 7493.934]
          ],
          "curve": [
            [1024, 20.073],
            [2048, 23.425],
            [4096, 29.601],
            [8192, 42.407],
            [16384, 70.29],
            [32768, 125.392],
            [65536, 251.95],
            [131072, 476.694],
            [262144, 925.246],
            [524288, 1846.826],
            [1048576, 3707.93]
          ],
          "fixed_us": 15.849035560070117,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.061870937491860345,
          "points": 17,
          "q_len": 8,
          "rms_rel_err": 0.03228799224124437,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.382498330064413
        },
        {
          "backend": "cuda_rowwise",
          "batch": [
            [4, 4096, 18.409],
            [4, 32768, 43.685],
            [16, 4096, 28.098],
            [16, 32768, 140.644],
            [64, 4096, 77.318],
            [64, 32768, 528.878]
          ],
          "curve": [
            [1024, 16.972],
            [2048, 16.871],
            [4096, 17.177],
            [8192, 17.449],
            [16384, 18.257],
            [32768, 19.874],
            [65536, 28.209],
            [131072, 44.171],
            [262144, 76.184],
            [524288, 139.526],
            [1048576, 263.108]
          ],
          "fixed_us": 15.119783547269408,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.13900368834953403,
          "points": 17,
          "q_len": 1,
          "rms_rel_err": 0.059631630006314565,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.3982421397768338
        },
        {
          "backend": "cuda_rowwise",
          "batch": [
            [4, 4096, 18.951],
            [4, 32768, 81.48],
            [16, 4096, 49.714],
            [16, 32768, 274.794],
            [64, 4096, 149.086],
            [64, 32768, 1050.976]
          ],
          "curve": [
            [1024, 16.86],
            [2048, 17.106],
            [4096, 17.308],
            [8192, 17.596],
            [16384, 18.882],
            [32768, 32.987],
            [65536, 49.02],
            [131072, 81.469],
            [262144, 145.572],
            [524288, 271.618],
            [1048576, 521.93]
          ],
          "fixed_us": 14.288409273047833,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.18691583433935688,
          "points": 17,
          "q_len": 2,
          "rms_rel_err": 0.08182949997125946,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4303457136388455
        },
        {
          "backend": "cuda_rowwise",
          "batch": [
            [4, 4096, 32.839],
            [4, 32768, 156.605],
            [16, 4096, 92.891],
            [16, 32768, 543.032],
            [64, 4096, 293.87],
            [64, 32768, 2079.158]
          ],
          "curve": [
            [1024, 17.145],
            [2048, 17.469],
            [4096, 17.62],
            [8192, 18.363],
            [16384, 31.954],
            [32768, 59.131],
            [65536, 91.425],
            [131072, 155.421],
            [262144, 284.788],
            [524288, 535.72],
            [1048576, 1034.554]
          ],
          "fixed_us": 14.310738091024863,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.24562527816731383,
          "points": 17,
          "q_len": 4,
          "rms_rel_err": 0.09305683265607455,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.45369181481445336
        },
        {
          "backend": "cuda_rowwise",
          "batch": [
            [4, 4096, 59.475],
            [4, 32768, 283.99],
            [16, 4096, 158.561],
            [16, 32768, 1056.83],
            [64, 4096, 537.852],
            [64, 32768, 4099.036]
          ],
          "curve": [
            [1024, 17.596],
            [2048, 17.662],
            [4096, 18.345],
            [8192, 32.086],
            [16384, 58.984],
            [32768, 91.023],
            [65536, 155.541],
            [131072, 284.008],
            [262144, 534.382],
            [524288, 1032.228],
            [1048576, 2012.532]
          ],
          "fixed_us": 14.016758445329703,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.2236907000509265,
          "points": 17,
          "q_len": 8,
          "rms_rel_err": 0.09929430930171143,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.44671912474653225
        },
        {
          "backend": "cuda_rowwise",
          "batch": [
            [4, 4096, 27.855],
            [4, 32768, 101.622],
            [16, 4096, 62.146],
            [16, 32768, 357.12],
            [64, 4096, 182.156],
            [64, 32768, 1364.724]
          ],
          "curve": [
            [1024, 22.002],
            [2048, 22.235],
            [4096, 22.303],
            [8192, 23.917],
            [16384, 28.166],
            [32768, 38.895],
            [65536, 60.074],
            [131072, 102.138],
            [262144, 186.632],
            [524288, 349.548],
            [1048576, 679.812]
          ],
          "fixed_us": 19.600291006545394,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.07998396198237057,
          "points": 17,
          "q_len": 1,
          "rms_rel_err": 0.037056327930035736,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.0882930125581352
        },
        {
          "backend": "cuda_rowwise",
          "batch": [
            [4, 4096, 38.331],
            [4, 32768, 183.968],
            [16, 4096, 109.404],
            [16, 32768, 694.572],
            [64, 4096, 361.502],
            [64, 32768, 2702.826]
          ],
          "curve": [
            [1024, 22.897],
            [2048, 23.124],
            [4096, 24.306],
            [8192, 27.835],
            [16384, 38.66],
            [32768, 59.698],
            [65536, 100.287],
            [131072, 182.349],
            [262144, 344.258],
            [524288, 669.918],
            [1048576, 1318.776]
          ],
          "fixed_us": 19.64304547020299,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.0860838558760485,
          "points": 17,
          "q_len": 2,
          "rms_rel_err": 0.03984748227715813,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.0876184455172924
        },
        {
          "backend": "cuda_rowwise",
          "batch": [
            [4, 4096, 61.407],
            [4, 32768, 352.267],
            [16, 4096, 181.791],
            [16, 32768, 1340.896],
            [64, 4096, 713.382],
            [64, 32768, 5352.866]
          ],
          "curve": [
            [1024, 22.844],
            [2048, 23.945],
            [4096, 27.407],
            [8192, 38.029],
            [16384, 58.878],
            [32768, 100.394],
            [65536, 183.447],
            [131072, 349.163],
            [262144, 680.996],
            [524288, 1343.346],
            [1048576, 2671.142]
          ],
          "fixed_us": 18.68197623995356,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.0689918338929495,
          "points": 17,
          "q_len": 4,
          "rms_rel_err": 0.02754572940604995,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.0960787071125755
        },
        {
          "backend": "cuda_rowwise",
          "batch": [
            [4, 4096, 108.696],
            [4, 32768, 689.254],
            [16, 4096, 358.888],
            [16, 32768, 2676.424],
            [64, 4096, 1420.564],
            [64, 32768, 10685.724]
          ],
          "curve": [
            [1024, 24.507],
            [2048, 27.377],
            [4096, 37.97],
            [8192, 58.931],
            [16384, 100.491],
            [32768, 183.539],
            [65536, 349.172],
            [131072, 679.086],
            [262144, 1341.626],
            [524288, 2665.508],
            [1048576, 5313.28]
          ],
          "fixed_us": 18.06161118943946,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.06454476186878233,
          "points": 17,
          "q_len": 8,
          "rms_rel_err": 0.027172779538983175,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.1075664127584457
        },
        {
          "backend": "cuda_fold",
          "batch": [
            [4, 4096, 39.671],
            [4, 32768, 48.456],
            [16, 4096, 41.11],
            [16, 32768, 172.48],
            [64, 4096, 92.804],
            [64, 32768, 711.222]
          ],
          "curve": [
            [1024, 35.13],
            [2048, 38.831],
            [4096, 39.167],
            [8192, 39.604],
            [16384, 39.685],
            [32768, 39.943],
            [65536, 40.854],
            [131072, 49.112],
            [262144, 92.178],
            [524288, 177.056],
            [1048576, 369.798]
          ],
          "det": true,
          "fixed_us": 32.192793085515454,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.30398361336583735,
          "points": 17,
          "q_len": 1,
          "rms_rel_err": 0.16573548962702833,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.20525877408047535
        },
        {
          "backend": "cuda_fold",
          "batch": [
            [4, 4096, 38.087],
            [4, 32768, 51.698],
            [16, 4096, 42.077],
            [16, 32768, 187.654],
            [64, 4096, 105.742],
            [64, 32768, 685.066]
          ],
          "curve": [
            [1024, 31.466],
            [2048, 36.113],
            [4096, 35.992],
            [8192, 37.425],
            [16384, 37.462],
            [32768, 37.401],
            [65536, 41.598],
            [131072, 52.222],
            [262144, 96.332],
            [524288, 188.19],
            [1048576, 346.284]
          ],
          "det": true,
          "fixed_us": 30.6177003146479,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.2508154171612249,
          "points": 17,
          "q_len": 2,
          "rms_rel_err": 0.13129596822627673,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.22548406766416243
        },
        {
          "backend": "cuda_fold",
          "batch": [
            [4, 4096, 39.243],
            [4, 32768, 56.196],
            [16, 4096, 47.232],
            [16, 32768, 212.39],
            [64, 4096, 130.986],
            [64, 32768, 756.374]
          ],
          "curve": [
            [1024, 33.633],
            [2048, 37.154],
            [4096, 37.059],
            [8192, 38.531],
            [16384, 38.806],
            [32768, 38.826],
            [65536, 43.726],
            [131072, 56.282],
            [262144, 108.676],
            [524288, 205.69],
            [1048576, 376.794]
          ],
          "det": true,
          "fixed_us": 31.81646877669241,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.25427845395233395,
          "points": 17,
          "q_len": 4,
          "rms_rel_err": 0.1325431285347579,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.25609442762003654
        },
        {
          "backend": "cuda_fold",
          "batch": [
            [4, 4096, 40.164],
            [4, 32768, 91.3],
            [16, 4096, 58.846],
            [16, 32768, 314.694],
            [64, 4096, 147.268],
            [64, 32768, 1259.606]
          ],
          "curve": [
            [1024, 34.256],
            [2048, 37.778],
            [4096, 37.901],
            [8192, 39.219],
            [16384, 39.414],
            [32768, 40.312],
            [65536, 47.875],
            [131072, 88.018],
            [262144, 166.124],
            [524288, 294.964],
            [1048576, 622.884]
          ],
          "det": true,
          "fixed_us": 31.358176573044506,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.31206685617936825,
          "points": 17,
          "q_len": 8,
          "rms_rel_err": 0.12303349670107791,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.41666673160847756
        },
        {
          "backend": "cuda_fold",
          "batch": [
            [4, 4096, 69.856],
            [4, 32768, 77.28],
            [16, 4096, 80.488],
            [16, 32768, 304.35],
            [64, 4096, 143.748],
            [64, 32768, 1148.874]
          ],
          "curve": [
            [1024, 33.918],
            [2048, 59.455],
            [4096, 63.343],
            [8192, 63.286],
            [16384, 64.587],
            [32768, 65.247],
            [65536, 67.018],
            [131072, 75.282],
            [262144, 146.386],
            [524288, 298.85],
            [1048576, 571.98]
          ],
          "det": true,
          "fixed_us": 45.92688305909031,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.36651267812538646,
          "points": 17,
          "q_len": 1,
          "rms_rel_err": 0.20508551751526452,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.3585871411944976
        },
        {
          "backend": "cuda_fold",
          "batch": [
            [4, 4096, 69.898],
            [4, 32768, 145.438],
            [16, 4096, 98.853],
            [16, 32768, 549.052],
            [64, 4096, 275.508],
            [64, 32768, 2259.908]
          ],
          "curve": [
            [1024, 35.624],
            [2048, 59.964],
            [4096, 63.629],
            [8192, 64.247],
            [16384, 65.35],
            [32768, 66.162],
            [65536, 72.637],
            [131072, 143.898],
            [262144, 284.856],
            [524288, 543.386],
            [1048576, 1178.428]
          ],
          "det": true,
          "fixed_us": 43.88104277291354,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.3973259174027024,
          "points": 17,
          "q_len": 2,
          "rms_rel_err": 0.1764760175906933,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.7631545838749528
        },
        {
          "backend": "cuda_fold",
          "batch": [
            [4, 4096, 76.127],
            [4, 32768, 279.398],
            [16, 4096, 132.349],
            [16, 32768, 1064.47],
            [64, 4096, 547.84],
            [64, 32768, 4300.428]
          ],
          "curve": [
            [1024, 36.276],
            [2048, 60.447],
            [4096, 64.372],
            [8192, 65.297],
            [16384, 66.807],
            [32768, 72.137],
            [65536, 141.035],
            [131072, 279.996],
            [262144, 525.988],
            [524288, 1129.142],
            [1048576, 2101.506]
          ],
          "det": true,
          "fixed_us": 40.38939760072698,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.3723340578358332,
          "points": 17,
          "q_len": 4,
          "rms_rel_err": 0.16139062999042741,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.552536488116643
        },
        {
          "backend": "cuda_fold",
          "batch": [
            [4, 4096, 92.149],
            [4, 32768, 522.022],
            [16, 4096, 263.136],
            [16, 32768, 2160.99],
            [64, 4096, 1075.784],
            [64, 32768, 8456.378]
          ],
          "curve": [
            [1024, 35.199],
            [2048, 60.611],
            [4096, 67.886],
            [8192, 69.018],
            [16384, 74.59],
            [32768, 144.452],
            [65536, 278.222],
            [131072, 515.59],
            [262144, 1046.21],
            [524288, 2123.968],
            [1048576, 4183.016]
          ],
          "det": true,
          "fixed_us": 35.8371560558137,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.29775003871659855,
          "points": 17,
          "q_len": 8,
          "rms_rel_err": 0.12993420225892752,
          "us_per_gflop": 0.0,
          "us_per_mb": 3.2298965037863643
        },
        {
          "backend": "cuda_fold",
          "batch": [
            [4, 4096, 42.611],
            [4, 32768, 44.522],
            [16, 4096, 43.255],
            [16, 32768, 158.89],
            [64, 4096, 85.956],
            [64, 32768, 628.952]
          ],
          "curve": [
            [1024, 38.392],
            [2048, 41.374],
            [4096, 41.603],
            [8192, 41.852],
            [16384, 42.517],
            [32768, 42.647],
            [65536, 43.156],
            [131072, 45.406],
            [262144, 85.664],
            [524288, 165.312],
            [1048576, 326.532]
          ],
          "det": true,
          "fixed_us": 34.49735509426495,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.37690465501887105,
          "points": 17,
          "q_len": 1,
          "rms_rel_err": 0.17952636530133384,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.3550402748009022
        },
        {
          "backend": "cuda_fold",
          "batch": [
            [4, 4096, 54.449],
            [4, 32768, 58.568],
            [16, 4096, 55.156],
            [16, 32768, 203.19],
            [64, 4096, 114.826],
            [64, 32768, 777.892]
          ],
          "curve": [
            [1024, 48.117],
            [2048, 51.974],
            [4096, 52.024],
            [8192, 54.276],
            [16384, 54.084],
            [32768, 53.347],
            [65536, 54.316],
            [131072, 59.182],
            [262144, 107.17],
            [524288, 206.554],
            [1048576, 395.038]
          ],
          "det": true,
          "fixed_us": 44.01847162257809,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.3384701495010145,
          "points": 17,
          "q_len": 2,
          "rms_rel_err": 0.16469898861040777,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4552874188345789
        },
        {
          "backend": "cuda_fold",
          "batch": [
            [4, 4096, 56.492],
            [4, 32768, 62.749],
            [16, 4096, 60.361],
            [16, 32768, 224.598],
            [64, 4096, 135.354],
            [64, 32768, 812.248]
          ],
          "curve": [
            [1024, 50.964],
            [2048, 53.218],
            [4096, 53.39],
            [8192, 55.516],
            [16384, 55.485],
            [32768, 55.138],
            [65536, 56.874],
            [131072, 62.763],
            [262144, 115.142],
            [524288, 221.222],
            [1048576, 411.268]
          ],
          "det": true,
          "fixed_us": 45.85056854039179,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.33238506712397586,
          "points": 17,
          "q_len": 4,
          "rms_rel_err": 0.1581535617663792,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.5000829409965657
        },
        {
          "backend": "cuda_fold",
          "batch": [
            [4, 4096, 55.62],
            [4, 32768, 113.181],
            [16, 4096, 69.615],
            [16, 32768, 404.42],
            [64, 4096, 200.828],
            [64, 32768, 1592.08]
          ],
          "curve": [
            [1024, 51.349],
            [2048, 53.063],
            [4096, 54.454],
            [8192, 55.084],
            [16384, 54.427],
            [32768, 55.584],
            [65536, 60.546],
            [131072, 111.923],
            [262144, 216.492],
            [524288, 405.956],
            [1048576, 793.194]
          ],
          "det": true,
          "fixed_us": 43.550019816426826,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.3705769313715288,
          "points": 17,
          "q_len": 8,
          "rms_rel_err": 0.1492616657833185,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.044622519775234
        },
        {
          "backend": "cuda_fold",
          "batch": [
            [4, 4096, 98.775],
            [4, 32768, 103.491],
            [16, 4096, 108.209],
            [16, 32768, 397.172],
            [64, 4096, 190.1],
            [64, 32768, 1487.398]
          ],
          "curve": [
            [1024, 50.825],
            [2048, 93.083],
            [4096, 94.962],
            [8192, 96.447],
            [16384, 97.445],
            [32768, 96.309],
            [65536, 97.636],
            [131072, 103.16],
            [262144, 197.58],
            [524288, 389.564],
            [1048576, 747.692]
          ],
          "det": true,
          "fixed_us": 68.73907334198852,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.3630287479836647,
          "points": 17,
          "q_len": 1,
          "rms_rel_err": 0.21137519173709263,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.9099195897399933
        },
        {
          "backend": "cuda_fold",
          "batch": [
            [4, 4096, 100.288],
            [4, 32768, 199.392],
            [16, 4096, 121.92],
            [16, 32768, 742.574],
            [64, 4096, 373.776],
            [64, 32768, 2933.126]
          ],
          "curve": [
            [1024, 51.731],
            [2048, 93.48],
            [4096, 96.274],
            [8192, 96.927],
            [16384, 96.834],
            [32768, 97.755],
            [65536, 102.172],
            [131072, 195.229],
            [262144, 383.498],
            [524288, 736.534],
            [1048576, 1453.556]
          ],
          "det": true,
          "fixed_us": 65.06094939300603,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.3744638679805361,
          "points": 17,
          "q_len": 2,
          "rms_rel_err": 0.18392735209577973,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.9966568702430993
        },
        {
          "backend": "cuda_fold",
          "batch": [
            [4, 4096, 106.228],
            [4, 32768, 387.795],
            [16, 4096, 185.485],
            [16, 32768, 1463.552],
            [64, 4096, 734.39],
            [64, 32768, 5826.092]
          ],
          "curve": [
            [1024, 52.535],
            [2048, 94.01],
            [4096, 96.532],
            [8192, 96.141],
            [16384, 97.602],
            [32768, 102.357],
            [65536, 195.024],
            [131072, 380.643],
            [262144, 727.456],
            [524288, 1444.482],
            [1048576, 2887.946]
          ],
          "det": true,
          "fixed_us": 59.90112653258893,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.361514666153788,
          "points": 17,
          "q_len": 4,
          "rms_rel_err": 0.16486921946530908,
          "us_per_gflop": 0.0,
          "us_per_mb": 4.209944742315326
        },
        {
          "backend": "cuda_fold",
          "batch": [
            [4, 4096, 120.726],
            [4, 32768, 733.058],
            [16, 4096, 367.966],
            [16, 32768, 2917.192],
            [64, 4096, 1460.442],
            [64, 32768, 11621.682]
          ],
          "curve": [
            [1024, 52.489],
            [2048, 94.803],
            [4096, 99.13],
            [8192, 100.724],
            [16384, 104.931],
            [32768, 196.461],
            [65536, 381.489],
            [131072, 723.226],
            [262144, 1443.212],
            [524288, 2882.12],
            [1048576, 5753.326]
          ],
          "det": true,
          "fixed_us": 53.208742704634126,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.329277615376789,
          "points": 17,
          "q_len": 8,
          "rms_rel_err": 0.1404429937714,
          "us_per_gflop": 0.0,
          "us_per_mb": 8.797541766531337
        },
        {
          "backend": "cuda_rowwise",
          "batch": [
            [4, 4096, 39.794],
            [4, 32768, 48.868],
            [16, 4096, 41.25],
            [16, 32768, 172.696],
            [64, 4096, 92.88],
            [64, 32768, 716.29]
          ],
          "curve": [
            [1024, 35.32],
            [2048, 38.96],
            [4096, 39.313],
            [8192, 39.768],
            [16384, 39.74],
            [32768, 40.042],
            [65536, 40.866],
            [131072, 49.248],
            [262144, 92.424],
            [524288, 177.93],
            [1048576, 371.206]
          ],
          "det": true,
          "fixed_us": 32.297608968014416,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.29755931390021106,
          "points": 17,
          "q_len": 1,
          "rms_rel_err": 0.16565210180272769,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.20604344093197846
        },
        {
          "backend": "cuda_rowwise",
          "batch": [
            [4, 4096, 40.249],
            [4, 32768, 78.292],
            [16, 4096, 41.92],
            [16, 32768, 301.684],
            [64, 4096, 158.996],
            [64, 32768, 1194.584]
          ],
          "curve": [
            [1024, 35.122],
            [2048, 38.851],
            [4096, 39.3],
            [8192, 40.107],
            [16384, 40.031],
            [32768, 40.413],
            [65536, 41.582],
            [131072, 78.922],
            [262144, 150.88],
            [524288, 301.136],
            [1048576, 604.708]
          ],
          "det": true,
          "fixed_us": 30.131456200689723,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.402336804984907,
          "points": 17,
          "q_len": 2,
          "rms_rel_err": 0.1914679087742653,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.18663588694086933
        },
        {
          "backend": "cuda_rowwise",
          "batch": [
            [4, 4096, 40.042],
            [4, 32768, 146.846],
            [16, 4096, 79.248],
            [16, 32768, 587.044],
            [64, 4096, 312.72],
            [64, 32768, 2283.216]
          ],
          "curve": [
            [1024, 35.069],
            [2048, 38.948],
            [4096, 39.492],
            [8192, 40.184],
            [16384, 40.25],
            [32768, 40.743],
            [65536, 76.278],
            [131072, 146.382],
            [262144, 288.56],
            [524288, 581.89],
            [1048576, 1149.752]
          ],
          "det": true,
          "fixed_us": 28.392469682222536,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.439352598749976,
          "points": 17,
          "q_len": 4,
          "rms_rel_err": 0.1647859620682141,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.20034753843726946
        },
        {
          "backend": "cuda_rowwise",
          "batch": [
            [4, 4096, 40.806],
            [4, 32768, 285.692],
            [16, 4096, 153.2],
            [16, 32768, 1161.436],
            [64, 4096, 623.434],
            [64, 32768, 4463.114]
          ],
          "curve": [
            [1024, 35.046],
            [2048, 39.058],
            [4096, 39.546],
            [8192, 40.123],
            [16384, 40.768],
            [32768, 75.22],
            [65536, 144.64],
            [131072, 284.8],
            [262144, 570.692],
            [524288, 1148.336],
            [1048576, 2218.97]
          ],
          "det": true,
          "fixed_us": 24.309284172950907,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.3643537470419218,
          "points": 17,
          "q_len": 8,
          "rms_rel_err": 0.17833726621463547,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.20737904209912306
        },
        {
          "backend": "cuda_rowwise",
          "batch": [
            [4, 4096, 64.235],
            [4, 32768, 77.612],
            [16, 4096, 79.24],
            [16, 32768, 315.88],
            [64, 4096, 142.192],
            [64, 32768, 1304.806]
          ],
          "curve": [
            [1024, 33.482],
            [2048, 58.351],
            [4096, 61.604],
            [8192, 62.705],
            [16384, 63.705],
            [32768, 63.651],
            [65536, 65.811],
            [131072, 76.242],
            [262144, 153.364],
            [524288, 306.538],
            [1048576, 586.28]
          ],
          "det": true,
          "fixed_us": 44.64891863835012,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.34667084245088864,
          "points": 17,
          "q_len": 1,
          "rms_rel_err": 0.20630995253449427,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.3731170314261197
        },
        {
          "backend": "cuda_rowwise",
          "batch": [
            [4, 4096, 67.131],
            [4, 32768, 150.36],
            [16, 4096, 97.571],
            [16, 32768, 557.072],
            [64, 4096, 270.77],
            [64, 32768, 2255.316]
          ],
          "curve": [
            [1024, 33.972],
            [2048, 58.295],
            [4096, 62.879],
            [8192, 62.904],
            [16384, 63.359],
            [32768, 65.069],
            [65536, 72.88],
            [131072, 144.894],
            [262144, 291.738],
            [524288, 554.494],
            [1048576, 1107.338]
          ],
          "det": true,
          "fixed_us": 42.36663776405077,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.3817989259907093,
          "points": 17,
          "q_len": 2,
          "rms_rel_err": 0.17283057872991922,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.38636305458572123
        },
        {
          "backend": "cuda_rowwise",
          "batch": [
            [4, 4096, 73.488],
            [4, 32768, 289.154],
            [16, 4096, 130.723],
            [16, 32768, 1124.358],
            [64, 4096, 536.982],
            [64, 32768, 4380.796]
          ],
          "curve": [
            [1024, 34.299],
            [2048, 58.563],
            [4096, 62.915],
            [8192, 63.171],
            [16384, 64.818],
            [32768, 73.553],
            [65536, 141.547],
            [131072, 281.526],
            [262144, 531.942],
            [524288, 1062.718],
            [1048576, 2137.906]
          ],
          "det": true,
          "fixed_us": 38.61729935321978,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.3331430101627997,
          "points": 17,
          "q_len": 4,
          "rms_rel_err": 0.15831022580759327,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.3936489784550853
        },
        {
          "backend": "cuda_rowwise",
          "batch": [
            [4, 4096, 92.26],
            [4, 32768, 519.794],
            [16, 4096, 260.184],
            [16, 32768, 2110.06],
            [64, 4096, 1040.292],
            [64, 32768, 8460.446]
          ],
          "curve": [
            [1024, 34.487],
            [2048, 58.882],
            [4096, 65.939],
            [8192, 67.554],
            [16384, 73.951],
            [32768, 144.309],
            [65536, 281.282],
            [131072, 547.448],
            [262144, 1035.714],
            [524288, 2068.734],
            [1048576, 4166.726]
          ],
          "det": true,
          "fixed_us": 35.05348757500085,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.29676728573524147,
          "points": 17,
          "q_len": 8,
          "rms_rel_err": 0.12594882050352202,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4029514703677009
        },
        {
          "backend": "cuda_rowwise",
          "batch": [
            [4, 4096, 42.828],
            [4, 32768, 44.661],
            [16, 4096, 43.405],
            [16, 32768, 159.882],
            [64, 4096, 86.4],
            [64, 32768, 632.56]
          ],
          "curve": [
            [1024, 38.292],
            [2048, 41.615],
            [4096, 41.766],
            [8192, 42.123],
            [16384, 42.751],
            [32768, 42.788],
            [65536, 43.297],
            [131072, 45.568],
            [262144, 86.164],
            [524288, 166.138],
            [1048576, 329.162]
          ],
          "det": true,
          "fixed_us": 34.60487961410278,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.37847795323046585,
          "points": 17,
          "q_len": 1,
          "rms_rel_err": 0.18028731479851864,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.3570854600025892
        },
        {
          "backend": "cuda_rowwise",
          "batch": [
            [4, 4096, 42.725],
            [4, 32768, 82.678],
            [16, 4096, 44.204],
            [16, 32768, 313.93],
            [64, 4096, 167.784],
            [64, 32768, 1248.342]
          ],
          "curve": [
            [1024, 37.888],
            [2048, 41.413],
            [4096, 41.555],
            [8192, 42.878],
            [16384, 42.555],
            [32768, 42.75],
            [65536, 43.428],
            [131072, 82.453],
            [262144, 159.22],
            [524288, 316.442],
            [1048576, 635.108]
          ],
          "det": true,
          "fixed_us": 32.035705444842094,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.41576146173147244,
          "points": 17,
          "q_len": 2,
          "rms_rel_err": 0.1943909112090259,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.3900457612320549
        },
        {
          "backend": "cuda_rowwise",
          "batch": [
            [4, 4096, 43.059],
            [4, 32768, 157.512],
            [16, 4096, 84.73],
            [16, 32768, 627.59],
            [64, 4096, 332.606],
            [64, 32768, 2426.186]
          ],
          "curve": [
            [1024, 38.027],
            [2048, 41.307],
            [4096, 42.269],
            [8192, 42.823],
            [16384, 42.662],
            [32768, 43.233],
            [65536, 81.043],
            [131072, 156.696],
            [262144, 309.486],
            [524288, 620.026],
            [1048576, 1219.564]
          ],
          "det": true,
          "fixed_us": 30.323553308108103,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.44714601450299263,
          "points": 17,
          "q_len": 4,
          "rms_rel_err": 0.1663253949832645,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.42704101281468015
        },
        {
          "backend": "cuda_rowwise",
          "batch": [
            [4, 4096, 43.68],
            [4, 32768, 310.434],
            [16, 4096, 165.301],
            [16, 32768, 1230.068],
            [64, 4096, 660.31],
            [64, 32768, 4782.414]
          ],
          "curve": [
            [1024, 37.94],
            [2048, 42.111],
            [4096, 42.204],
            [8192, 42.864],
            [16384, 43.291],
            [32768, 80.68],
            [65536, 156.246],
            [131072, 308.883],
            [262144, 620.802],
            [524288, 1214.784],
            [1048576, 2378.548]
          ],
          "det": true,
          "fixed_us": 25.97300985918845,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.37615932734937596,
          "points": 17,
          "q_len": 8,
          "rms_rel_err": 0.18027069542226037,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.44507686836317967
        },
        {
          "backend": "cuda_rowwise",
          "batch": [
            [4, 4096, 99.13],
            [4, 32768, 103.182],
            [16, 4096, 108.416],
            [16, 32768, 394.624],
            [64, 4096, 190.15],
            [64, 32768, 1487.572]
          ],
          "curve": [
            [1024, 51.094],
            [2048, 93.078],
            [4096, 95.093],
            [8192, 96.746],
            [16384, 97.555],
            [32768, 96.605],
            [65536, 98.666],
            [131072, 103.126],
            [262144, 197.412],
            [524288, 385.294],
            [1048576, 747.0]
          ],
          "det": true,
          "fixed_us": 69.05596586233654,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.3619921805431463,
          "points": 17,
          "q_len": 1,
          "rms_rel_err": 0.21090561445562203,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.9056500032478919
        },
        {
          "backend": "cuda_rowwise",
          "batch": [
            [4, 4096, 100.909],
            [4, 32768, 199.282],
            [16, 4096, 121.833],
            [16, 32768, 737.848],
            [64, 4096, 373.052],
            [64, 32768, 2934.56]
          ],
          "curve": [
            [1024, 51.95],
            [2048, 93.642],
            [4096, 96.551],
            [8192, 97.099],
            [16384, 97.049],
            [32768, 97.749],
            [65536, 102.093],
            [131072, 194.69],
            [262144, 381.818],
            [524288, 737.976],
            [1048576, 1451.808]
          ],
          "det": true,
          "fixed_us": 65.27720051791589,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.37538022923847625,
          "points": 17,
          "q_len": 2,
          "rms_rel_err": 0.18426279406266644,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.9952600348245996
        },
        {
          "backend": "cuda_rowwise",
          "batch": [
            [4, 4096, 106.344],
            [4, 32768, 387.474],
            [16, 4096, 186.361],
            [16, 32768, 1463.724],
            [64, 4096, 736.344],
            [64, 32768, 5828.01]
          ],
          "curve": [
            [1024, 52.726],
            [2048, 94.095],
            [4096, 96.678],
            [8192, 96.382],
            [16384, 98.362],
            [32768, 102.284],
            [65536, 193.694],
            [131072, 380.39],
            [262144, 727.714],
            [524288, 1444.856],
            [1048576, 2888.772]
          ],
          "det": true,
          "fixed_us": 60.09949435526009,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.36407648066763354,
          "points": 17,
          "q_len": 4,
          "rms_rel_err": 0.16505492175345066,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.0520114400349523
        },
        {
          "backend": "cuda_rowwise",
          "batch": [
            [4, 4096, 120.634],
            [4, 32768, 734.051],
            [16, 4096, 368.668],
            [16, 32768, 2916.788],
            [64, 4096, 1462.872],
            [64, 32768, 11623.316]
          ],
          "curve": [
            [1024, 52.912],
            [2048, 94.898],
            [4096, 99.434],
            [8192, 100.924],
            [16384, 104.337],
            [32768, 196.013],
            [65536, 381.659],
            [131072, 722.582],
            [262144, 1442.37],
            [524288, 2881.36],
            [1048576, 5757.732]
          ],
          "det": true,
          "fixed_us": 53.38994694196258,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.3281559527326876,
          "points": 17,
          "q_len": 8,
          "rms_rel_err": 0.14153038202527832,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.098531624926816
        }
      ],
      "provisional": false,
      "reps": 30,
      "source": "mlaspec calibrate on NVIDIA H200, 2026-12-02T15:53:31Z (full grid, 30 reps)",
      "sweep_check": [
        {
          "config": "B=1,H=16,q=8,S=4096,kv=bf16",
          "cuda_fold_us": 18.67149956524372,
          "cuda_rowwise_us": 17.802624963223934,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=bf16",
          "cuda_fold_us": 25.482181798328053,
          "cuda_rowwise_us": 56.18545683947477,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=bf16",
          "cuda_fold_us": 47.23840057849884,
          "cuda_rowwise_us": 143.35039854049683,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=bf16",
          "cuda_fold_us": 131.62000477313995,
          "cuda_rowwise_us": 492.591992020607,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=bf16",
          "cuda_fold_us": 517.5839960575104,
          "cuda_rowwise_us": 1844.9759483337402,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=4096,kv=fp8",
          "cuda_fold_us": 22.307749837636948,
          "cuda_rowwise_us": 18.372874706983566,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=fp8",
          "cuda_fold_us": 28.037817640738055,
          "cuda_rowwise_us": 58.87618389996615,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=fp8",
          "cuda_fold_us": 59.42909013141285,
          "cuda_rowwise_us": 154.47199886495417,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=fp8",
          "cuda_fold_us": 185.45600026845932,
          "cuda_rowwise_us": 530.0619900226593,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=fp8",
          "cuda_fold_us": 679.1659891605377,
          "cuda_rowwise_us": 2014.1019821166992,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=4096,kv=bf16,det",
          "cuda_fold_us": 37.7616249024868,
          "cuda_rowwise_us": 39.37075100839138,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=bf16,det",
          "cuda_fold_us": 39.294181899590924,
          "cuda_rowwise_us": 40.725454688072205,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=bf16,det",
          "cuda_fold_us": 47.780799865722656,
          "cuda_rowwise_us": 143.83999705314636,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=bf16,det",
          "cuda_fold_us": 166.10999405384064,
          "cuda_rowwise_us": 576.4839947223663,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=bf16,det",
          "cuda_fold_us": 625.4839897155762,
          "cuda_rowwise_us": 2220.702052116394,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=4096,kv=fp8,det",
          "cuda_fold_us": 54.60837483406067,
          "cuda_rowwise_us": 42.46925003826618,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=fp8,det",
          "cuda_fold_us": 54.78291078047319,
          "cuda_rowwise_us": 43.40709068558433,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=fp8,det",
          "cuda_fold_us": 60.52436340938915,
          "cuda_rowwise_us": 156.6559997471896,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=fp8,det",
          "cuda_fold_us": 216.8620005249977,
          "cuda_rowwise_us": 616.8079972267151,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=fp8,det",
          "cuda_fold_us": 792.9079830646515,
          "cuda_rowwise_us": 2379.286050796509,
          "pick": "cuda_fold",
          "regret": 0.0
        }
      ],
      "sweep_regret_max": 0.0
    }
  },
  "version": 3
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
