// Built-in cost-model profiles, used when no profile file has an entry for this machine
// (docs/dispatch.md). Same JSON format as the file `mlaspec calibrate` writes.
//
// GPU profiles (kBuiltinGpuProfileJson): the whole file `mlaspec calibrate --out FILE` writes,
// pasted unchanged between the raw-string markers (write to a fresh FILE so it holds only the
// calibrated GPU). This string is the only place to edit; nothing else needs to change.
//
// NVIDIA H200 — MEASURED 2026-12-01 on the H200 by `scripts/gpu-check.sh` (`mlaspec calibrate`,
// full grid: B=1, H 16|128, q_len 2|4|8, S = 1k, 2k, ..., 1M, bf16 and fp8, median of 30 CUDA-graph
// replays per point) on the kernel of v19 (bf16 stage halves freed in FlashMLA's seesaw order, L2
// evict_first KV copies); report in docs/perf/dispatch-calibration-2026-12-01c.md. Recalibrate
// whenever the kernels change.
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
          "grid_loo_regret_max": 0.01591649906703041,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=32768",
          "model": "cuda_rowwise below S=16982, cuda_fold from there",
          "model_seq_len": 16982,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.11287168772670864,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=9774, cuda_fold from there",
          "model_seq_len": 9774,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.13430523696028107,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=4944, cuda_fold from there",
          "model_seq_len": 4944,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.0639034751853167,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=7858, cuda_fold from there (cheaper backend changes again at S=27642, 80737, 247226, 268118, 713604, 1048577)",
          "model_seq_len": 7858,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.05276081837202895,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=4096",
          "model": "cuda_rowwise below S=3103, cuda_fold from there (cheaper backend changes again at S=383994, 852300)",
          "model_seq_len": 3103,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.018303659633012614,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=131072",
          "model": "cuda_rowwise below S=77702, cuda_fold from there (cheaper backend changes again at S=196483, 975251, 1048577)",
          "model_seq_len": 77702,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.0,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=11595, cuda_fold from there",
          "model_seq_len": 11595,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.04448260271403881,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=8720, cuda_fold from there",
          "model_seq_len": 8720,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.099447383028481,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=4645, cuda_fold from there",
          "model_seq_len": 4645,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.0,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "never in grid",
          "model": "cuda_rowwise cheaper at every S",
          "model_seq_len": 0,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.0,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "never in grid",
          "model": "cuda_rowwise cheaper at every S",
          "model_seq_len": 0,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.0,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "never in grid",
          "model": "cuda_fold below S=346, cuda_rowwise from there",
          "model_seq_len": 346,
          "q_len": 8
        }
      ],
      "grid_loo_regret_max": 0.13430523696028107,
      "grid_regret_max": 0.0,
      "measured_at": "2026-12-01T13:16:44Z",
      "models": [
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 17.084],
            [2048, 17.425],
            [4096, 17.867],
            [8192, 18.843],
            [16384, 21.725],
            [32768, 27.999],
            [65536, 38.886],
            [131072, 58.542],
            [262144, 94.208],
            [524288, 168.008],
            [1048576, 325.438]
          ],
          "fixed_us": 16.910897709919144,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.059241603704013546,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.030375445868021024,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.26056248856354297
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 19.582],
            [2048, 19.465],
            [4096, 20.059],
            [8192, 21.223],
            [16384, 24.487],
            [32768, 32.991],
            [65536, 43.459],
            [131072, 62.046],
            [262144, 98.136],
            [524288, 173.168],
            [1048576, 328.704]
          ],
          "fixed_us": 19.449517258489223,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.10557323729343904,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.04999776616455295,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.26644889875416866
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 20.501],
            [2048, 20.32],
            [4096, 21.075],
            [8192, 22.877],
            [16384, 28.371],
            [32768, 37.222],
            [65536, 53.27],
            [131072, 83.94],
            [262144, 151.764],
            [524288, 289.56],
            [1048576, 649.432]
          ],
          "fixed_us": 19.21637359828959,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.11759432622865773,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.04461400913839035,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4584972320473063
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.703],
            [2048, 22.549],
            [4096, 23.469],
            [8192, 27.714],
            [16384, 35.329],
            [32768, 50.057],
            [65536, 79.442],
            [131072, 140.302],
            [262144, 270.17],
            [524288, 521.118],
            [1048576, 1142.36]
          ],
          "fixed_us": 20.02543672895489,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.10415506525342566,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.0391089297987973,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.8306171810002732
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 25.13],
            [2048, 25.761],
            [4096, 29.747],
            [8192, 37.257],
            [16384, 51.871],
            [32768, 80.659],
            [65536, 141.366],
            [131072, 263.728],
            [262144, 514.852],
            [524288, 1073.678],
            [1048576, 2005.112]
          ],
          "fixed_us": 22.183929886756907,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.06562349882687335,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.028043874717600836,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.6242854772490645
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 30.216],
            [2048, 33.521],
            [4096, 40.968],
            [8192, 55.396],
            [16384, 83.837],
            [32768, 143.03],
            [65536, 265.382],
            [131072, 526.124],
            [262144, 1000.866],
            [524288, 2017.178],
            [1048576, 3944.706]
          ],
          "fixed_us": 25.802073192197803,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.03161513791037329,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.019291394218497966,
          "us_per_gflop": 0.0,
          "us_per_mb": 3.215235453645277
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.336],
            [2048, 21.863],
            [4096, 22.26],
            [8192, 22.665],
            [16384, 24.791],
            [32768, 29.373],
            [65536, 43.337],
            [131072, 70.826],
            [262144, 123.784],
            [524288, 224.178],
            [1048576, 424.35]
          ],
          "fixed_us": 19.896585290287206,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.10126314303818251,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.04608929102535968,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.6596521127351012
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.606],
            [2048, 23.416],
            [4096, 23.985],
            [8192, 24.49],
            [16384, 27.141],
            [32768, 33.39],
            [65536, 46.918],
            [131072, 73.475],
            [262144, 125.036],
            [524288, 226.978],
            [1048576, 427.11]
          ],
          "fixed_us": 21.836928629749657,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.038406017906400525,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.022318991844247973,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.6724439434115413
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 23.717],
            [2048, 24.392],
            [4096, 25.045],
            [8192, 26.593],
            [16384, 31.121],
            [32768, 44.763],
            [65536, 71.415],
            [131072, 125.446],
            [262144, 230.82],
            [524288, 437.414],
            [1048576, 847.814]
          ],
          "fixed_us": 21.43728156871008,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.09672155131999971,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.04560381289466861,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.345114089199078
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 25.598],
            [2048, 26.298],
            [4096, 27.307],
            [8192, 31.066],
            [16384, 44.464],
            [32768, 71.058],
            [65536, 123.612],
            [131072, 227.168],
            [262144, 431.328],
            [524288, 833.714],
            [1048576, 1639.508]
          ],
          "fixed_us": 21.794363592572044,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.10424308517489544,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.048969343550454014,
          "us_per_gflop": 0.0,
          "us_per_mb": 2.6512841572467987
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 28.566],
            [2048, 29.488],
            [4096, 33.319],
            [8192, 46.602],
            [16384, 73.101],
            [32768, 125.802],
            [65536, 229.719],
            [131072, 436.568],
            [262144, 850.856],
            [524288, 1674.416],
            [1048576, 3322.364]
          ],
          "fixed_us": 22.95305021365468,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.08461383833277958,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.0367141044301442,
          "us_per_gflop": 0.0,
          "us_per_mb": 5.418929194849668
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 33.607],
            [2048, 37.139],
            [4096, 50.483],
            [8192, 77.034],
            [16384, 129.22],
            [32768, 232.47],
            [65536, 437.025],
            [131072, 845.805],
            [262144, 1662.062],
            [524288, 3286.778],
            [1048576, 6542.064]
          ],
          "fixed_us": 25.79594571099633,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.04220197437063744,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.018632639615527573,
          "us_per_gflop": 0.0,
          "us_per_mb": 10.837830649950984
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 16.263],
            [2048, 16.519],
            [4096, 16.711],
            [8192, 18.186],
            [16384, 21.384],
            [32768, 37.438],
            [65536, 52.808],
            [131072, 81.982],
            [262144, 140.638],
            [524288, 269.188],
            [1048576, 523.406]
          ],
          "fixed_us": 15.16033028816117,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.158257505202696,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.06844541458621466,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.21659893803834662
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 16.36],
            [2048, 16.338],
            [4096, 17.293],
            [8192, 19.071],
            [16384, 33.487],
            [32768, 60.751],
            [65536, 88.63],
            [131072, 143.752],
            [262144, 261.93],
            [524288, 501.396],
            [1048576, 967.07]
          ],
          "fixed_us": 14.246639181552085,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.2358526843436779,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.1063267362577782,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.21309510143197674
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 16.527],
            [2048, 17.178],
            [4096, 18.58],
            [8192, 32.095],
            [16384, 58.056],
            [32768, 84.844],
            [65536, 139.029],
            [131072, 248.61],
            [262144, 474.302],
            [524288, 912.16],
            [1048576, 1813.2]
          ],
          "fixed_us": 14.034342497304864,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.24003038464056992,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.10620416710712192,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.19925470611227533
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 21.098],
            [2048, 21.833],
            [4096, 23.337],
            [8192, 27.724],
            [16384, 35.718],
            [32768, 49.879],
            [65536, 78.827],
            [131072, 142.858],
            [262144, 269.72],
            [524288, 547.628],
            [1048576, 1073.744]
          ],
          "fixed_us": 19.68204871013925,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.04984769787707011,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.026966850032990246,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.41772596157727376
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 24.253],
            [2048, 25.48],
            [4096, 29.966],
            [8192, 37.543],
            [16384, 52.001],
            [32768, 81.475],
            [65536, 141.738],
            [131072, 264.686],
            [262144, 542.016],
            [524288, 1029.574],
            [1048576, 2041.308]
          ],
          "fixed_us": 21.868293230090405,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.04438081000558536,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.022351073150268838,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.41068643102151925
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 29.471],
            [2048, 33.15],
            [4096, 40.302],
            [8192, 54.149],
            [16384, 82.728],
            [32768, 139.706],
            [65536, 263.819],
            [131072, 535.754],
            [262144, 988.02],
            [524288, 1977.106],
            [1048576, 3953.962]
          ],
          "fixed_us": 25.182335739419663,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.05310229677617795,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.025683435726034272,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.39912089025778247
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 21.298],
            [2048, 21.487],
            [4096, 21.515],
            [8192, 22.426],
            [16384, 25.054],
            [32768, 45.196],
            [65536, 72.348],
            [131072, 124.894],
            [262144, 228.776],
            [524288, 423.138],
            [1048576, 814.074]
          ],
          "fixed_us": 18.005949984088687,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.2224149570297984,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.0890168963690505,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.6686547367359936
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 21.329],
            [2048, 21.134],
            [4096, 21.683],
            [8192, 23.447],
            [16384, 42.148],
            [32768, 79.209],
            [65536, 132.252],
            [131072, 233.21],
            [262144, 433.94],
            [524288, 822.198],
            [1048576, 1597.828]
          ],
          "fixed_us": 16.392683113812346,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.25092979833655327,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.10796110482176188,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.6854977466190588
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 21.129],
            [2048, 21.577],
            [4096, 22.78],
            [8192, 40.803],
            [16384, 76.536],
            [32768, 128.139],
            [65536, 228.078],
            [131072, 426.522],
            [262144, 810.17],
            [524288, 1571.284],
            [1048576, 3091.142]
          ],
          "fixed_us": 15.094263685854152,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.21926622203547375,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.09619378922275659,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.6718192975815542
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 25.156],
            [2048, 25.406],
            [4096, 26.944],
            [8192, 30.842],
            [16384, 43.838],
            [32768, 69.118],
            [65536, 119.169],
            [131072, 217.125],
            [262144, 412.84],
            [524288, 799.04],
            [1048576, 1568.852]
          ],
          "fixed_us": 21.583593972127282,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.08905026258024873,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.04141839291443396,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.2721276422485943
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 27.564],
            [2048, 29.1],
            [4096, 32.972],
            [8192, 45.789],
            [16384, 71.173],
            [32768, 121.179],
            [65536, 220.713],
            [131072, 419.339],
            [262144, 815.924],
            [524288, 1606.738],
            [1048576, 3186.566]
          ],
          "fixed_us": 22.718564446996222,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.06441257496004793,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.029299015050336163,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.3012714013178364
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 33.225],
            [2048, 36.786],
            [4096, 49.731],
            [8192, 75.076],
            [16384, 125.114],
            [32768, 223.843],
            [65536, 419.445],
            [131072, 810.234],
            [262144, 1592.038],
            [524288, 3149.422],
            [1048576, 6268.518]
          ],
          "fixed_us": 25.886463928198875,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.03667952646356354,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.01675842234649944,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.2978914362487088
        }
      ],
      "provisional": false,
      "reps": 30,
      "source": "mlaspec calibrate on NVIDIA H200, 2026-12-01T13:16:40Z (full grid, 30 reps)",
      "sweep_check": [
        {
          "config": "B=1,H=16,q=8,S=4096,kv=bf16",
          "cuda_fold_us": 21.12062554806471,
          "cuda_rowwise_us": 18.67649983614683,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=bf16",
          "cuda_fold_us": 28.388363393870264,
          "cuda_rowwise_us": 57.969453659924596,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=bf16",
          "cuda_fold_us": 52.823999524116516,
          "cuda_rowwise_us": 138.31200003623962,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=bf16",
          "cuda_fold_us": 145.6020027399063,
          "cuda_rowwise_us": 472.89200127124786,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=bf16",
          "cuda_fold_us": 563.8619959354401,
          "cuda_rowwise_us": 1807.520031929016,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=4096,kv=fp8",
          "cuda_fold_us": 25.656625628471375,
          "cuda_rowwise_us": 22.944875061511993,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=fp8",
          "cuda_fold_us": 31.191090291196648,
          "cuda_rowwise_us": 76.54018293727528,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=fp8",
          "cuda_fold_us": 71.67709144678983,
          "cuda_rowwise_us": 228.44291817058217,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=fp8",
          "cuda_fold_us": 231.42199963331223,
          "cuda_rowwise_us": 810.155987739563,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=fp8",
          "cuda_fold_us": 848.8300144672394,
          "cuda_rowwise_us": 3093.0479764938354,
          "pick": "cuda_fold",
          "regret": 0.0
        }
      ],
      "sweep_regret_max": 0.0
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
