// Built-in cost-model profiles, used when no profile file has an entry for this machine
// (docs/dispatch.md). Same JSON format as the file `mlaspec calibrate` writes.
//
// GPU profiles (kBuiltinGpuProfileJson): the whole file `mlaspec calibrate --out FILE` writes,
// pasted unchanged between the raw-string markers (write to a fresh FILE so it holds only the
// calibrated GPU). This string is the only place to edit; nothing else needs to change.
//
// NVIDIA H200 — MEASURED 2026-12-01 on the H200 by `scripts/gpu-check.sh` (`mlaspec calibrate`,
// full grid: B=1, H 16|128, q_len 2|4|8, S = 1k, 2k, ..., 1M, bf16 and fp8, median of 30 CUDA-graph
// replays per point) on the kernels of v34 (the narrow kernel for row tiles of <= 16 rows, which
// rowwise runs at H = 16; the 64-row kernel with v28's half-slots otherwise; v31's fp8 fold
// without clusters; the deterministic merge tree of v34); report in
// docs/perf/dispatch-calibration-2026-12-01i.md.
// Recalibrate whenever the kernels change.
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
          "grid_loo_regret_max": 0.12561285608983486,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=32768",
          "model": "cuda_rowwise below S=20263, cuda_fold from there",
          "model_seq_len": 20263,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.15231331886269284,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=10277, cuda_fold from there",
          "model_seq_len": 10277,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.15014353187013385,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=5033, cuda_fold from there",
          "model_seq_len": 5033,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.05059817460827576,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=4096",
          "model": "cuda_fold below S=1024, cuda_rowwise from there (cheaper backend changes again at S=3063, 73058, 148736, 729569, 1048577)",
          "model_seq_len": 1024,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.08976479221646838,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=4096",
          "model": "cuda_rowwise below S=2294, cuda_fold from there (cheaper backend changes again at S=88603, 137487, 477201, 685922)",
          "model_seq_len": 2294,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.006050266130666282,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=13366, cuda_fold from there",
          "model_seq_len": 13366,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.11512167139811003,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=32768",
          "model": "cuda_rowwise below S=19202, cuda_fold from there",
          "model_seq_len": 19202,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.1836038463230698,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=10379, cuda_fold from there",
          "model_seq_len": 10379,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.1768885195696246,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=5146, cuda_fold from there",
          "model_seq_len": 5146,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.0018483426533442149,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=25373, cuda_rowwise from there (cheaper backend changes again at S=36616, 160520, 453030, 1048577)",
          "model_seq_len": 25373,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.0,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=92779, cuda_rowwise from there (cheaper backend changes again at S=764511)",
          "model_seq_len": 92779,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.001616355461922847,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=2048",
          "model": "cuda_fold below S=1024, cuda_rowwise from there (cheaper backend changes again at S=1247, 271220, 1039584)",
          "model_seq_len": 1024,
          "q_len": 8
        }
      ],
      "grid_loo_regret_max": 0.1836038463230698,
      "grid_regret_max": 0.0,
      "measured_at": "2026-12-01T21:05:05Z",
      "models": [
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 18.072],
            [2048, 18.293],
            [4096, 18.53],
            [8192, 19.253],
            [16384, 21.79],
            [32768, 26.621],
            [65536, 36.13],
            [131072, 53.742],
            [262144, 89.272],
            [524288, 159.512],
            [1048576, 316.714]
          ],
          "fixed_us": 17.471368265161484,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.026973308030634247,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.01570736173121398,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.24065359684993937
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 20.269],
            [2048, 20.713],
            [4096, 21.147],
            [8192, 21.89],
            [16384, 25.108],
            [32768, 32.653],
            [65536, 41.96],
            [131072, 60.002],
            [262144, 97.014],
            [524288, 168.578],
            [1048576, 332.188]
          ],
          "fixed_us": 20.26143196235713,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.08107768915029301,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.03512416788446592,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.25813374994547156
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.405],
            [2048, 21.538],
            [4096, 21.887],
            [8192, 24.087],
            [16384, 29.919],
            [32768, 38.005],
            [65536, 52.899],
            [131072, 82.946],
            [262144, 146.844],
            [524288, 282.916],
            [1048576, 556.954]
          ],
          "fixed_us": 20.545192388635655,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.04134121443743244,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.025298619086197356,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.43108646662149785
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.646],
            [2048, 22.275],
            [4096, 24.024],
            [8192, 28.691],
            [16384, 36.316],
            [32768, 50.348],
            [65536, 79.163],
            [131072, 145.442],
            [262144, 272.496],
            [524288, 519.84],
            [1048576, 1134.022]
          ],
          "fixed_us": 20.269863122898176,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.08944204190864691,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.03440851366622097,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.8380436990885887
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.842],
            [2048, 23.739],
            [4096, 27.43],
            [8192, 34.724],
            [16384, 48.994],
            [32768, 77.433],
            [65536, 140.229],
            [131072, 261.02],
            [262144, 511.136],
            [524288, 1056.418],
            [1048576, 2054.036]
          ],
          "fixed_us": 19.916307315428497,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.05403703087842715,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.030385427630548367,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.621603875982705
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 24.043],
            [2048, 27.621],
            [4096, 34.757],
            [8192, 48.76],
            [16384, 77.892],
            [32768, 138.887],
            [65536, 260.445],
            [131072, 523.87],
            [262144, 979.046],
            [524288, 1977.21],
            [1048576, 3888.736]
          ],
          "fixed_us": 19.84595253405936,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.04104322471857125,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.018982978828070676,
          "us_per_gflop": 0.0,
          "us_per_mb": 3.1956219247395845
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.537],
            [2048, 22.705],
            [4096, 22.786],
            [8192, 22.547],
            [16384, 23.816],
            [32768, 26.577],
            [65536, 40.642],
            [131072, 67.886],
            [262144, 121.392],
            [524288, 225.454],
            [1048576, 431.286]
          ],
          "fixed_us": 19.726869906398875,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.19423367002022207,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.08830068418451492,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.63641617386928
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 23.768],
            [2048, 24.6],
            [4096, 24.781],
            [8192, 24.728],
            [16384, 26.982],
            [32768, 32.029],
            [65536, 45.767],
            [131072, 72.494],
            [262144, 125.386],
            [524288, 230.912],
            [1048576, 437.768]
          ],
          "fixed_us": 22.20869198144856,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.08704797774633866,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.04577827436464102,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.6679996873910724
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 24.704],
            [2048, 24.797],
            [4096, 24.66],
            [8192, 26.897],
            [16384, 31.345],
            [32768, 44.763],
            [65536, 70.576],
            [131072, 123.117],
            [262144, 226.534],
            [524288, 426.138],
            [1048576, 824.862]
          ],
          "fixed_us": 21.84781165346149,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.09178939848320966,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.0469214494427509,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.3112835708776993
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 25.173],
            [2048, 25.125],
            [4096, 26.84],
            [8192, 30.82],
            [16384, 44.262],
            [32768, 70.464],
            [65536, 121.083],
            [131072, 222.702],
            [262144, 421.69],
            [524288, 815.012],
            [1048576, 1598.424]
          ],
          "fixed_us": 21.390181442593246,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.09261904380225272,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.04302333717632031,
          "us_per_gflop": 0.0,
          "us_per_mb": 2.603332464897674
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 24.773],
            [2048, 26.529],
            [4096, 30.469],
            [8192, 43.824],
            [16384, 69.513],
            [32768, 120.427],
            [65536, 221.929],
            [131072, 424.989],
            [262144, 829.444],
            [524288, 1633.324],
            [1048576, 3241.76]
          ],
          "fixed_us": 20.04398533747288,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.06861282580966166,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.030442135551578927,
          "us_per_gflop": 0.0,
          "us_per_mb": 5.304623981033047
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 26.723],
            [2048, 30.219],
            [4096, 43.373],
            [8192, 69.234],
            [16384, 120.08],
            [32768, 220.93],
            [65536, 421.095],
            [131072, 820.626],
            [262144, 1619.214],
            [524288, 3217.236],
            [1048576, 6407.876]
          ],
          "fixed_us": 19.1510280623033,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.04946337940594059,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.02167421855769726,
          "us_per_gflop": 0.0,
          "us_per_mb": 10.596453773105692
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.025],
            [2048, 18.079],
            [4096, 18.358],
            [8192, 18.594],
            [16384, 19.358],
            [32768, 34.794],
            [65536, 50.307],
            [131072, 80.428],
            [262144, 142.644],
            [524288, 287.096],
            [1048576, 493.698]
          ],
          "fixed_us": 15.817000225925941,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.22493081223305555,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.08989412109046872,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2091575503802084
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.122],
            [2048, 18.509],
            [4096, 18.696],
            [8192, 18.997],
            [16384, 33.611],
            [32768, 63.523],
            [65536, 92.851],
            [131072, 151.456],
            [262144, 277.292],
            [524288, 503.808],
            [1048576, 954.034]
          ],
          "fixed_us": 15.448482176373147,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.24470131932416528,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.12411557177734535,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.21543957321663668
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.673],
            [2048, 18.678],
            [4096, 19.03],
            [8192, 33.531],
            [16384, 62.554],
            [32768, 91.97],
            [65536, 150.501],
            [131072, 269.096],
            [262144, 499.932],
            [524288, 946.784],
            [1048576, 1847.034]
          ],
          "fixed_us": 15.193159285022753,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.2529791796628914,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.1230872777906936,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.20885544378767196
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 21.603],
            [2048, 22.089],
            [4096, 24.17],
            [8192, 29.111],
            [16384, 36.862],
            [32768, 50.727],
            [65536, 79.32],
            [131072, 143.9],
            [262144, 285.832],
            [524288, 543.746],
            [1048576, 1079.406]
          ],
          "fixed_us": 20.298476302417498,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.06215032536244558,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.029808413731784774,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4235326529018091
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 21.512],
            [2048, 23.654],
            [4096, 27.939],
            [8192, 35.451],
            [16384, 49.609],
            [32768, 79.575],
            [65536, 140.918],
            [131072, 259.364],
            [262144, 557.018],
            [524288, 1042.248],
            [1048576, 2098.316]
          ],
          "fixed_us": 19.54084204070874,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.06284462510827904,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.031015238625890593,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.41596722407227515
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 23.576],
            [2048, 27.416],
            [4096, 34.531],
            [8192, 48.057],
            [16384, 78.364],
            [32768, 139.879],
            [65536, 272.512],
            [131072, 524.742],
            [262144, 1008.762],
            [524288, 2047.338],
            [1048576, 4123.828]
          ],
          "fixed_us": 19.15271494095427,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.045167156806946496,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.024994138510608943,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.41160041024402527
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 19.883],
            [2048, 20.473],
            [4096, 20.326],
            [8192, 20.382],
            [16384, 21.358],
            [32768, 38.36],
            [65536, 56.727],
            [131072, 93.682],
            [262144, 166.73],
            [524288, 311.122],
            [1048576, 595.642]
          ],
          "fixed_us": 17.32592948574576,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.23880392947331042,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.09188929339778017,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4838304842398235
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 20.362],
            [2048, 20.582],
            [4096, 20.638],
            [8192, 20.892],
            [16384, 37.353],
            [32768, 70.436],
            [65536, 107.473],
            [131072, 181.083],
            [262144, 329.126],
            [524288, 615.424],
            [1048576, 1184.222]
          ],
          "fixed_us": 16.589939162061082,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.2639699260637596,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.12030378989358192,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.5201275735551477
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 20.69],
            [2048, 20.86],
            [4096, 20.954],
            [8192, 37.495],
            [16384, 70.198],
            [32768, 107.38],
            [65536, 180.872],
            [131072, 326.794],
            [262144, 612.144],
            [524288, 1174.614],
            [1048576, 2301.07]
          ],
          "fixed_us": 16.082666561819984,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.22921298836928705,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.11592075006111484,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.5125527269536861
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 25.418],
            [2048, 25.363],
            [4096, 27.004],
            [8192, 30.859],
            [16384, 44.305],
            [32768, 70.424],
            [65536, 121.444],
            [131072, 222.872],
            [262144, 420.912],
            [524288, 815.414],
            [1048576, 1598.768]
          ],
          "fixed_us": 21.556079021545063,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.09620565878825005,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.044581392485126055,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.3004030533358282
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 24.955],
            [2048, 26.575],
            [4096, 30.741],
            [8192, 43.936],
            [16384, 69.744],
            [32768, 120.784],
            [65536, 222.052],
            [131072, 424.755],
            [262144, 828.49],
            [524288, 1632.546],
            [1048576, 3243.054]
          ],
          "fixed_us": 20.202702288117127,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.06505058941329811,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.029580903500636937,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.32617670026589
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 26.68],
            [2048, 30.342],
            [4096, 43.621],
            [8192, 69.473],
            [16384, 120.255],
            [32768, 221.104],
            [65536, 421.315],
            [131072, 820.955],
            [262144, 1619.27],
            [524288, 3215.082],
            [1048576, 6407.93]
          ],
          "fixed_us": 19.22735059671415,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.04591074225715097,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.020216107769519032,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.3254161212860223
        }
      ],
      "provisional": false,
      "reps": 30,
      "source": "mlaspec calibrate on NVIDIA H200, 2026-12-01T21:05:02Z (full grid, 30 reps)",
      "sweep_check": [
        {
          "config": "B=1,H=16,q=8,S=4096,kv=bf16",
          "cuda_fold_us": 21.701375022530556,
          "cuda_rowwise_us": 18.980249762535095,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=bf16",
          "cuda_fold_us": 29.677091674371198,
          "cuda_rowwise_us": 62.71563605828719,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=bf16",
          "cuda_fold_us": 53.21439802646637,
          "cuda_rowwise_us": 150.51680207252502,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=bf16",
          "cuda_fold_us": 143.3420032262802,
          "cuda_rowwise_us": 498.93200397491455,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=bf16",
          "cuda_fold_us": 553.7199974060059,
          "cuda_rowwise_us": 1858.7679862976074,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=4096,kv=fp8",
          "cuda_fold_us": 24.92037508636713,
          "cuda_rowwise_us": 21.04512508958578,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=fp8",
          "cuda_fold_us": 31.301455064253375,
          "cuda_rowwise_us": 70.307273756374,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=fp8",
          "cuda_fold_us": 70.49963691017845,
          "cuda_rowwise_us": 180.49163709987295,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=fp8",
          "cuda_fold_us": 226.3760045170784,
          "cuda_rowwise_us": 612.0839715003967,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=fp8",
          "cuda_fold_us": 824.0419924259186,
          "cuda_rowwise_us": 2300.1179695129395,
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
