// Built-in cost-model profiles, used when no profile file has an entry for this machine
// (docs/dispatch.md). Same JSON format as the file `mlaspec calibrate` writes.
//
// GPU profiles (kBuiltinGpuProfileJson): the whole file `mlaspec calibrate --out FILE` writes,
// pasted unchanged between the raw-string markers (write to a fresh FILE so it holds only the
// calibrated GPU). This string is the only place to edit; nothing else needs to change.
//
// NVIDIA H200 — MEASURED 2026-12-01 on the H200 by `scripts/gpu-check.sh` (`mlaspec calibrate`,
// full grid: B=1, H 16|128, q_len 2|4|8, S = 1k, 2k, ..., 1M, bf16 and fp8, median of 30 CUDA-graph
// replays per point) on the kernels of v28 (the narrow kernel for row tiles of <= 16 rows, which
// rowwise runs at H = 16; the 64-row kernel with v28's half-slots otherwise) and v24's combine;
// report in docs/perf/dispatch-calibration-2026-12-01g.md. Recalibrate whenever the kernels change.
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
          "grid_loo_regret_max": 0.11395325138454493,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=1024",
          "model": "cuda_rowwise below S=1024, cuda_fold from there (cheaper backend changes again at S=5283, 19827)",
          "model_seq_len": 1024,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.14237138633608715,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=10104, cuda_fold from there",
          "model_seq_len": 10104,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.139624879208206,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=4936, cuda_fold from there",
          "model_seq_len": 4936,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.05245261152486025,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=4096",
          "model": "cuda_rowwise below S=3944, cuda_fold from there (cheaper backend changes again at S=751999, 1048577)",
          "model_seq_len": 3944,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.053051019448308256,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=2048",
          "model": "cuda_rowwise below S=2001, cuda_fold from there (cheaper backend changes again at S=41146, 131874, 478391, 618283)",
          "model_seq_len": 2001,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.007537288112686946,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=13428, cuda_fold from there",
          "model_seq_len": 13428,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.0963693169609694,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=32768",
          "model": "cuda_rowwise below S=18737, cuda_fold from there",
          "model_seq_len": 18737,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.1734621917601471,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=10175, cuda_fold from there",
          "model_seq_len": 10175,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.22214084180635885,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=5334, cuda_fold from there",
          "model_seq_len": 5334,
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
          "model": "cuda_fold below S=832, cuda_rowwise from there",
          "model_seq_len": 832,
          "q_len": 8
        }
      ],
      "grid_loo_regret_max": 0.22214084180635885,
      "grid_regret_max": 0.0,
      "measured_at": "2026-12-01T18:54:03Z",
      "models": [
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 17.812],
            [2048, 17.973],
            [4096, 18.135],
            [8192, 18.832],
            [16384, 21.442],
            [32768, 26.134],
            [65536, 36.344],
            [131072, 53.736],
            [262144, 90.546],
            [524288, 160.094],
            [1048576, 316.342]
          ],
          "fixed_us": 17.11260995811099,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.03045598259815585,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.017646874234744283,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.24292865868950866
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 20.035],
            [2048, 20.377],
            [4096, 20.724],
            [8192, 21.625],
            [16384, 24.709],
            [32768, 32.378],
            [65536, 41.758],
            [131072, 59.616],
            [262144, 96.084],
            [524288, 168.886],
            [1048576, 329.832]
          ],
          "fixed_us": 19.945104823727526,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.08368720299043264,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.03579015184139781,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2575831285422245
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 20.964],
            [2048, 20.777],
            [4096, 21.614],
            [8192, 23.468],
            [16384, 29.079],
            [32768, 37.419],
            [65536, 52.819],
            [131072, 82.872],
            [262144, 143.158],
            [524288, 280.484],
            [1048576, 557.434]
          ],
          "fixed_us": 20.02386408136909,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.04461728860535419,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.026260112333077738,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.42889337265887867
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.197],
            [2048, 22.002],
            [4096, 23.279],
            [8192, 28.037],
            [16384, 35.532],
            [32768, 49.762],
            [65536, 78.328],
            [131072, 142.832],
            [262144, 266.896],
            [524288, 510.404],
            [1048576, 1112.81]
          ],
          "fixed_us": 19.83643049914684,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.08734694205957028,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.03288616795421641,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.8243429816581528
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.119],
            [2048, 23.114],
            [4096, 27.327],
            [8192, 34.772],
            [16384, 48.459],
            [32768, 77.558],
            [65536, 137.883],
            [131072, 261.71],
            [262144, 501.216],
            [524288, 1020.426],
            [1048576, 1985.926]
          ],
          "fixed_us": 19.620709965294342,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.035178974859281786,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.020237697764515238,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.5975828396376517
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 23.357],
            [2048, 26.993],
            [4096, 34.297],
            [8192, 48.134],
            [16384, 76.179],
            [32768, 135.424],
            [65536, 251.238],
            [131072, 509.914],
            [262144, 966.128],
            [524288, 1947.7],
            [1048576, 3800.302]
          ],
          "fixed_us": 19.421199923987437,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.036046961168831215,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.01798951710627337,
          "us_per_gflop": 0.0,
          "us_per_mb": 3.1266737750220215
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.223],
            [2048, 22.525],
            [4096, 22.56],
            [8192, 22.379],
            [16384, 23.411],
            [32768, 26.174],
            [65536, 40.002],
            [131072, 67.128],
            [262144, 120.48],
            [524288, 223.542],
            [1048576, 423.754]
          ],
          "fixed_us": 19.485963243772428,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.19751180516625033,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.09025816252988793,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.6282325642100829
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 23.272],
            [2048, 24.121],
            [4096, 24.436],
            [8192, 24.344],
            [16384, 26.218],
            [32768, 31.35],
            [65536, 44.881],
            [131072, 71.381],
            [262144, 123.74],
            [524288, 228.204],
            [1048576, 429.818]
          ],
          "fixed_us": 21.749128856107525,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.08990476279253734,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.048151304711986004,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.6579922561072364
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 24.571],
            [2048, 25.129],
            [4096, 25.441],
            [8192, 26.952],
            [16384, 31.263],
            [32768, 45.001],
            [65536, 71.897],
            [131072, 126.347],
            [262144, 234.062],
            [524288, 440.648],
            [1048576, 850.204]
          ],
          "fixed_us": 21.904174903944288,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.10794716643655611,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.05206342962614936,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.349351756286992
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 25.3],
            [2048, 25.957],
            [4096, 26.987],
            [8192, 30.806],
            [16384, 44.319],
            [32768, 71.217],
            [65536, 123.36],
            [131072, 228.31],
            [262144, 432.804],
            [524288, 837.216],
            [1048576, 1645.242]
          ],
          "fixed_us": 21.48090290779371,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.105276367558512,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.04922864179817756,
          "us_per_gflop": 0.0,
          "us_per_mb": 2.663498847053561
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 25.532],
            [2048, 26.602],
            [4096, 30.426],
            [8192, 43.848],
            [16384, 70.279],
            [32768, 123.158],
            [65536, 227.146],
            [131072, 434.68],
            [262144, 847.004],
            [524288, 1673.29],
            [1048576, 3326.224]
          ],
          "fixed_us": 20.083917342779003,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.08815841528473523,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.03901751393155781,
          "us_per_gflop": 0.0,
          "us_per_mb": 5.420058186265272
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 26.756],
            [2048, 30.213],
            [4096, 43.702],
            [8192, 70.029],
            [16384, 122.439],
            [32768, 225.195],
            [65536, 430.033],
            [131072, 838.523],
            [262144, 1654.042],
            [524288, 3284.182],
            [1048576, 6546.48]
          ],
          "fixed_us": 18.962603582639616,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.05253621960660315,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.023086741625550647,
          "us_per_gflop": 0.0,
          "us_per_mb": 10.829101813068581
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 17.961],
            [2048, 18.029],
            [4096, 18.315],
            [8192, 18.514],
            [16384, 19.249],
            [32768, 34.724],
            [65536, 50.318],
            [131072, 80.594],
            [262144, 142.866],
            [524288, 260.05],
            [1048576, 492.764]
          ],
          "fixed_us": 15.85460093417519,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.22445450129346267,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.08859985021279249,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.20436681931066358
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.021],
            [2048, 18.476],
            [4096, 18.631],
            [8192, 18.93],
            [16384, 33.584],
            [32768, 63.25],
            [65536, 92.899],
            [131072, 151.796],
            [262144, 271.336],
            [524288, 507.118],
            [1048576, 957.866]
          ],
          "fixed_us": 15.384895988987344,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.2429976901459564,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.12352467189394176,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.21521010260800166
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.588],
            [2048, 18.619],
            [4096, 18.966],
            [8192, 33.481],
            [16384, 62.644],
            [32768, 92.071],
            [65536, 150.846],
            [131072, 267.564],
            [262144, 500.466],
            [524288, 946.616],
            [1048576, 1845.542]
          ],
          "fixed_us": 15.127555341062454,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.25520703274731327,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.12389505140579242,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.20881179471454472
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 21.068],
            [2048, 21.453],
            [4096, 23.313],
            [8192, 28.345],
            [16384, 35.971],
            [32768, 50.231],
            [65536, 79.259],
            [131072, 145.18],
            [262144, 275.448],
            [524288, 537.176],
            [1048576, 1061.59]
          ],
          "fixed_us": 19.688582019653726,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.04814162620878393,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.022376741658469746,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4197907687003717
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 21.111],
            [2048, 23.152],
            [4096, 27.976],
            [8192, 35.242],
            [16384, 49.452],
            [32768, 77.99],
            [65536, 136.326],
            [131072, 261.59],
            [262144, 527.806],
            [524288, 1012.424],
            [1048576, 2036.646]
          ],
          "fixed_us": 19.40337921737979,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.041695111151955455,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.02460859313526146,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4059975726786191
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 23.057],
            [2048, 26.723],
            [4096, 33.746],
            [8192, 47.245],
            [16384, 76.753],
            [32768, 136.685],
            [65536, 259.75],
            [131072, 523.698],
            [262144, 984.164],
            [524288, 1964.26],
            [1048576, 4001.828]
          ],
          "fixed_us": 18.785803481174153,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.04033419891172296,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.023588427570004955,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.40050120753748863
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 19.846],
            [2048, 20.383],
            [4096, 20.257],
            [8192, 20.393],
            [16384, 21.353],
            [32768, 38.402],
            [65536, 56.911],
            [131072, 94.283],
            [262144, 168.032],
            [524288, 312.88],
            [1048576, 597.806]
          ],
          "fixed_us": 17.27167795367462,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.23924430782976813,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.09182983459280578,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4869285848797645
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 20.176],
            [2048, 20.424],
            [4096, 20.483],
            [8192, 20.746],
            [16384, 37.267],
            [32768, 70.411],
            [65536, 108.134],
            [131072, 182.094],
            [262144, 330.864],
            [524288, 619.206],
            [1048576, 1181.014]
          ],
          "fixed_us": 16.412000843433084,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.26624579382625324,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.12164407454622637,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.5222625378887187
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 20.455],
            [2048, 20.88],
            [4096, 20.817],
            [8192, 37.337],
            [16384, 70.304],
            [32768, 107.594],
            [65536, 182.065],
            [131072, 330.006],
            [262144, 615.746],
            [524288, 1180.984],
            [1048576, 2308.526]
          ],
          "fixed_us": 15.917124211635933,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.2321899854184144,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.1163514830775326,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.5156764208283587
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 24.905],
            [2048, 24.901],
            [4096, 26.522],
            [8192, 30.422],
            [16384, 43.61],
            [32768, 68.619],
            [65536, 119.121],
            [131072, 218.182],
            [262144, 413.242],
            [524288, 801.424],
            [1048576, 1569.082]
          ],
          "fixed_us": 21.180764581630473,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.09186107671409816,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.043100911966998855,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.2753483525478762
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 24.529],
            [2048, 26.484],
            [4096, 29.975],
            [8192, 42.815],
            [16384, 68.029],
            [32768, 118.252],
            [65536, 217.647],
            [131072, 417.147],
            [262144, 814.138],
            [524288, 1606.512],
            [1048576, 3184.044]
          ],
          "fixed_us": 19.864074695080433,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.07186457092752874,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.032707809985762254,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.2996957503213777
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 26.694],
            [2048, 29.95],
            [4096, 42.766],
            [8192, 68.067],
            [16384, 118.065],
            [32768, 216.916],
            [65536, 412.529],
            [131072, 802.638],
            [262144, 1582.792],
            [524288, 3143.104],
            [1048576, 6262.168]
          ],
          "fixed_us": 19.187390630284415,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.0522948308063802,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.022853267761884198,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.2949906804121085
        }
      ],
      "provisional": false,
      "reps": 30,
      "source": "mlaspec calibrate on NVIDIA H200, 2026-12-01T18:54:00Z (full grid, 30 reps)",
      "sweep_check": [
        {
          "config": "B=1,H=16,q=8,S=4096,kv=bf16",
          "cuda_fold_us": 21.671749651432037,
          "cuda_rowwise_us": 18.94799992442131,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=bf16",
          "cuda_fold_us": 29.18472615155307,
          "cuda_rowwise_us": 62.956726009195506,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=bf16",
          "cuda_fold_us": 52.78080105781555,
          "cuda_rowwise_us": 150.56959986686707,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=bf16",
          "cuda_fold_us": 143.65000277757645,
          "cuda_rowwise_us": 499.6520131826401,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=bf16",
          "cuda_fold_us": 548.7460196018219,
          "cuda_rowwise_us": 1847.9180335998535,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=4096,kv=fp8",
          "cuda_fold_us": 25.643625296652317,
          "cuda_rowwise_us": 20.95074951648712,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=fp8",
          "cuda_fold_us": 31.308546662330627,
          "cuda_rowwise_us": 70.38436423648487,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=fp8",
          "cuda_fold_us": 72.14690880341963,
          "cuda_rowwise_us": 181.7745403809981,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=fp8",
          "cuda_fold_us": 234.54000055789948,
          "cuda_rowwise_us": 619.0859973430634,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=fp8",
          "cuda_fold_us": 851.4460027217865,
          "cuda_rowwise_us": 2314.5099878311157,
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
