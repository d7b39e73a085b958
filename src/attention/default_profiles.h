// Built-in cost-model profiles, used when no profile file has an entry for this machine
// (docs/dispatch.md). Same JSON format as the file `mlaspec calibrate` writes.
//
// GPU profiles (kBuiltinGpuProfileJson): the whole file `mlaspec calibrate --out FILE` writes,
// pasted unchanged between the raw-string markers (write to a fresh FILE so it holds only the
// calibrated GPU). This string is the only place to edit; nothing else needs to change.
//
// NVIDIA H200 — MEASURED 2026-12-01 on the H200 by `scripts/gpu-check.sh` (`mlaspec calibrate`,
// full grid: B=1, H 16|128, q_len 2|4|8, S = 1k, 2k, ..., 1M, bf16 and fp8, median of 30 CUDA-graph
// replays per point) with the ping-pong kernel (fp8 dequantised in place, v12); report in
// docs/perf/dispatch-calibration-2026-12-01.md. Recalibrate whenever the kernels change.
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
          "grid_loo_regret_max": 0.0,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=11817, cuda_fold from there",
          "model_seq_len": 11817,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.11837021055601027,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=9677, cuda_fold from there",
          "model_seq_len": 9677,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.1807610453947397,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=5123, cuda_fold from there",
          "model_seq_len": 5123,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.06231524410946476,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=5493, cuda_fold from there (cheaper backend changes again at S=47499, 70749, 648595, 1048577)",
          "model_seq_len": 5493,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.04597647206057198,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=32768",
          "model": "cuda_rowwise below S=22884, cuda_fold from there (cheaper backend changes again at S=89606, 146297, 367174)",
          "model_seq_len": 22884,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.048025799421717696,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=32768",
          "model": "cuda_rowwise below S=22913, cuda_fold from there (cheaper backend changes again at S=112872)",
          "model_seq_len": 22913,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.0,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=11780, cuda_fold from there",
          "model_seq_len": 11780,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.023892256303166715,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=8463, cuda_fold from there",
          "model_seq_len": 8463,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.0636111160835704,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=4440, cuda_fold from there",
          "model_seq_len": 4440,
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
          "model": "cuda_fold below S=369, cuda_rowwise from there",
          "model_seq_len": 369,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.0,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "never in grid",
          "model": "cuda_fold below S=185, cuda_rowwise from there",
          "model_seq_len": 185,
          "q_len": 8
        }
      ],
      "grid_loo_regret_max": 0.1807610453947397,
      "grid_regret_max": 0.0,
      "measured_at": "2026-12-01T10:28:44Z",
      "models": [
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 17.338],
            [2048, 17.653],
            [4096, 18.031],
            [8192, 19.261],
            [16384, 22.599],
            [32768, 29.908],
            [65536, 41.275],
            [131072, 59.95],
            [262144, 96.936],
            [524288, 171.132],
            [1048576, 332.714]
          ],
          "fixed_us": 17.31998814865641,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.08854514620305742,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.04452601065677435,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2688897114145676
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 20.46],
            [2048, 20.332],
            [4096, 20.838],
            [8192, 21.834],
            [16384, 25.6],
            [32768, 34.839],
            [65536, 46.424],
            [131072, 64.87],
            [262144, 103.582],
            [524288, 180.136],
            [1048576, 350.318]
          ],
          "fixed_us": 20.238570581054066,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.1138471002170367,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.05560068033445129,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.28169703855889217
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.473],
            [2048, 20.877],
            [4096, 21.818],
            [8192, 23.599],
            [16384, 29.297],
            [32768, 39.433],
            [65536, 56.509],
            [131072, 89.982],
            [262144, 160.766],
            [524288, 301.218],
            [1048576, 623.89]
          ],
          "fixed_us": 19.991975971509774,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.044502954906234904,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.02813176359513839,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.47694731003896473
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.306],
            [2048, 22.748],
            [4096, 23.934],
            [8192, 28.262],
            [16384, 37.067],
            [32768, 54.235],
            [65536, 84.778],
            [131072, 148.176],
            [262144, 285.546],
            [524288, 549.456],
            [1048576, 1169.692]
          ],
          "fixed_us": 20.43312048694401,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.07181553383394879,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.030002325310068825,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.8818646317069897
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 25.342],
            [2048, 26.143],
            [4096, 30.05],
            [8192, 38.133],
            [16384, 54.16],
            [32768, 85.302],
            [65536, 146.578],
            [131072, 278.73],
            [262144, 537.15],
            [524288, 1095.97],
            [1048576, 2152.508]
          ],
          "fixed_us": 22.332633944949755,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.03913426181503121,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.022700873009700705,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.7105662383140112
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 30.651],
            [2048, 34.001],
            [4096, 41.882],
            [8192, 57.43],
            [16384, 88.159],
            [32768, 149.363],
            [65536, 272.72],
            [131072, 558.338],
            [262144, 1045.832],
            [524288, 2103.318],
            [1048576, 4141.858]
          ],
          "fixed_us": 26.07306909880612,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.04108611976563126,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.020279613846057108,
          "us_per_gflop": 0.0,
          "us_per_mb": 3.3731262191570166
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 25.513],
            [2048, 25.239],
            [4096, 25.587],
            [8192, 26.0],
            [16384, 27.93],
            [32768, 32.269],
            [65536, 50.36],
            [131072, 83.064],
            [262144, 146.788],
            [524288, 270.592],
            [1048576, 515.114]
          ],
          "fixed_us": 22.60451082403631,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.1597023812946523,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.06934469552281858,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.7850651818110028
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 25.189],
            [2048, 26.204],
            [4096, 26.579],
            [8192, 27.004],
            [16384, 29.754],
            [32768, 36.14],
            [65536, 53.815],
            [131072, 85.714],
            [262144, 149.624],
            [524288, 275.69],
            [1048576, 522.39]
          ],
          "fixed_us": 23.763815548877727,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.08239838560376489,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.039934131846479565,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.8134666785747368
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 26.491],
            [2048, 26.943],
            [4096, 27.447],
            [8192, 29.053],
            [16384, 33.393],
            [32768, 49.905],
            [65536, 83.622],
            [131072, 150.837],
            [262144, 281.522],
            [524288, 536.682],
            [1048576, 1041.806]
          ],
          "fixed_us": 22.913997334001998,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.14791109047970252,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.06902004051861955,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.63373785667003
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 27.655],
            [2048, 28.11],
            [4096, 29.501],
            [8192, 33.004],
            [16384, 49.171],
            [32768, 82.113],
            [65536, 147.919],
            [131072, 274.246],
            [262144, 522.012],
            [524288, 1012.928],
            [1048576, 1991.914]
          ],
          "fixed_us": 22.569657154697246,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.14310198513994044,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.06556395916924912,
          "us_per_gflop": 0.0,
          "us_per_mb": 3.212216032393358
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 30.33],
            [2048, 31.501],
            [4096, 35.185],
            [8192, 51.255],
            [16384, 83.469],
            [32768, 148.012],
            [65536, 275.409],
            [131072, 527.536],
            [262144, 1028.2],
            [524288, 2025.714],
            [1048576, 4018.752]
          ],
          "fixed_us": 23.253582740866815,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.10590059410530239,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.04889242240407052,
          "us_per_gflop": 0.0,
          "us_per_mb": 6.551305240114042
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 35.538],
            [2048, 39.079],
            [4096, 55.17],
            [8192, 87.08],
            [16384, 150.258],
            [32768, 276.43],
            [65536, 526.254],
            [131072, 1021.944],
            [262144, 2011.316],
            [524288, 3991.178],
            [1048576, 7944.466]
          ],
          "fixed_us": 25.584548858549617,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.06206397843148048,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.025935459379781412,
          "us_per_gflop": 0.0,
          "us_per_mb": 13.136214798519676
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 16.628],
            [2048, 16.769],
            [4096, 17.347],
            [8192, 18.726],
            [16384, 23.174],
            [32768, 43.597],
            [65536, 66.621],
            [131072, 102.202],
            [262144, 175.674],
            [524288, 332.224],
            [1048576, 638.51]
          ],
          "fixed_us": 15.158971763836773,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.17646215665967424,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.08699880546172276,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.27477584532553273
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 16.812],
            [2048, 16.931],
            [4096, 17.741],
            [8192, 19.523],
            [16384, 36.46],
            [32768, 71.722],
            [65536, 112.622],
            [131072, 182.892],
            [262144, 340.708],
            [524288, 647.296],
            [1048576, 1423.948]
          ],
          "fixed_us": 13.397500419062819,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.2354417147556005,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.11621722193369977,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2840278192579276
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 16.93],
            [2048, 17.701],
            [4096, 18.478],
            [8192, 33.455],
            [16384, 63.805],
            [32768, 98.237],
            [65536, 161.968],
            [131072, 301.992],
            [262144, 567.076],
            [524288, 1217.552],
            [1048576, 2176.052]
          ],
          "fixed_us": 13.126480076137602,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.21697298168186874,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.1079289156207607,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.24394799195278297
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 21.848],
            [2048, 22.205],
            [4096, 23.885],
            [8192, 28.341],
            [16384, 37.267],
            [32768, 54.513],
            [65536, 84.403],
            [131072, 153.564],
            [262144, 287.998],
            [524288, 564.366],
            [1048576, 1101.078]
          ],
          "fixed_us": 20.205098770855756,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.0329467672852084,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.016427077661222287,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.44358381126169033
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 24.512],
            [2048, 25.885],
            [4096, 29.943],
            [8192, 38.045],
            [16384, 54.028],
            [32768, 85.526],
            [65536, 147.547],
            [131072, 276.506],
            [262144, 560.482],
            [524288, 1047.796],
            [1048576, 2067.462]
          ],
          "fixed_us": 22.06438153138876,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.044275865465846165,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.01632565649532067,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.42518130348265565
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 29.968],
            [2048, 33.565],
            [4096, 41.384],
            [8192, 56.613],
            [16384, 87.219],
            [32768, 151.081],
            [65536, 285.818],
            [131072, 551.182],
            [262144, 1024.352],
            [524288, 2041.672],
            [1048576, 4052.01]
          ],
          "fixed_us": 25.639746660989612,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.03433650147811329,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.015950770657951648,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4193986402184117
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 24.531],
            [2048, 24.523],
            [4096, 24.782],
            [8192, 25.669],
            [16384, 28.257],
            [32768, 51.964],
            [65536, 88.694],
            [131072, 154.806],
            [262144, 281.42],
            [524288, 526.672],
            [1048576, 1022.156]
          ],
          "fixed_us": 20.08653164983806,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.26413271180068776,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.10401990449715107,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.8282921697361293
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 24.57],
            [2048, 24.456],
            [4096, 25.053],
            [8192, 26.374],
            [16384, 48.055],
            [32768, 94.065],
            [65536, 162.209],
            [131072, 291.864],
            [262144, 543.296],
            [524288, 1038.332],
            [1048576, 2025.356]
          ],
          "fixed_us": 18.014510676854513,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.29346066250491765,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.12147844021077088,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.8529417001790672
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 24.82],
            [2048, 25.089],
            [4096, 25.805],
            [8192, 46.481],
            [16384, 88.053],
            [32768, 151.789],
            [65536, 278.033],
            [131072, 526.851],
            [262144, 1001.29],
            [524288, 1941.614],
            [1048576, 3821.72]
          ],
          "fixed_us": 16.644464425103592,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.24498394235891308,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.10198334629513073,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.8203006965414267
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 27.139],
            [2048, 27.456],
            [4096, 29.056],
            [8192, 32.818],
            [16384, 48.475],
            [32768, 80.21],
            [65536, 142.556],
            [131072, 261.53],
            [262144, 494.352],
            [524288, 959.956],
            [1048576, 1886.244]
          ],
          "fixed_us": 22.51486048874487,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.12672582749310446,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.057034938445010286,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.5323920916797737
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 29.835],
            [2048, 31.199],
            [4096, 34.868],
            [8192, 50.497],
            [16384, 81.241],
            [32768, 142.682],
            [65536, 264.676],
            [131072, 504.619],
            [262144, 983.316],
            [524288, 1938.084],
            [1048576, 3844.808]
          ],
          "fixed_us": 23.311913041960143,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.09456625789798168,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.044018041755699434,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.5690338898727612
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 35.239],
            [2048, 38.703],
            [4096, 54.203],
            [8192, 84.821],
            [16384, 145.601],
            [32768, 266.994],
            [65536, 508.356],
            [131072, 986.376],
            [262144, 1945.884],
            [524288, 3854.148],
            [1048576, 7667.96]
          ],
          "fixed_us": 25.634016418022757,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.06049085873010307,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.024946030162097912,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.5838830389756322
        }
      ],
      "provisional": false,
      "reps": 30,
      "source": "mlaspec calibrate on NVIDIA H200, 2026-12-01T10:28:40Z (full grid, 30 reps)",
      "sweep_check": [
        {
          "config": "B=1,H=16,q=8,S=4096,kv=bf16",
          "cuda_fold_us": 21.884375251829624,
          "cuda_rowwise_us": 18.594125285744667,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=bf16",
          "cuda_fold_us": 29.288363727656275,
          "cuda_rowwise_us": 63.91745263879949,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=bf16",
          "cuda_fold_us": 56.08319938182831,
          "cuda_rowwise_us": 162.20960021018982,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=bf16",
          "cuda_fold_us": 152.85399556159973,
          "cuda_rowwise_us": 563.6339783668518,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=bf16",
          "cuda_fold_us": 584.6180021762848,
          "cuda_rowwise_us": 2277.477979660034,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=4096,kv=fp8",
          "cuda_fold_us": 28.181499801576138,
          "cuda_rowwise_us": 25.926250033080578,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=fp8",
          "cuda_fold_us": 33.183091066100374,
          "cuda_rowwise_us": 88.24381774122065,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=fp8",
          "cuda_fold_us": 84.2436362396587,
          "cuda_rowwise_us": 278.9781852201982,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=fp8",
          "cuda_fold_us": 280.8859944343567,
          "cuda_rowwise_us": 996.146023273468,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=fp8",
          "cuda_fold_us": 1037.4240279197693,
          "cuda_rowwise_us": 3796.854019165039,
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
