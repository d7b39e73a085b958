// Built-in cost-model profiles, used when no profile file has an entry for this machine
// (docs/dispatch.md). Same JSON format as the file `mlaspec calibrate` writes.
//
// GPU profiles (kBuiltinGpuProfileJson): the whole file `mlaspec calibrate --out FILE` writes,
// pasted unchanged between the raw-string markers (write to a fresh FILE so it holds only the
// calibrated GPU). This string is the only place to edit; nothing else needs to change.
//
// NVIDIA H200 — MEASURED 2026-12-02 on the H200 by `scripts/gpu-check.sh` (`mlaspec calibrate`,
// full grid: B=1, H 16|128, q_len 2|4|8, S = 1k, 2k, ..., 1M, bf16 and fp8, median of 30 CUDA-graph
// replays per point) on the kernels of e7a78ae (the narrow kernel for row tiles of <= 16 rows,
// which rowwise runs at H = 16, its fp8 raw tiles freed behind each expansion step's publish
// fence; the 64-row kernel with v28's half-slots otherwise; v31's fp8 fold without clusters; the
// deterministic merge tree of v34; fp8 in f16 since v37, its raw codes in the half freed first
// since v40; v42's mask-free tiles; v44's lazy rescale; v45a's P0 re-store only where WG1 moved a
// max); report in docs/perf/dispatch-calibration-2026-12-02e.md.
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
          "grid_loo_regret_max": 0.11230787922205021,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=1024",
          "model": "cuda_rowwise below S=1024, cuda_fold from there (cheaper backend changes again at S=1773, 2420, 5368, 20028)",
          "model_seq_len": 1024,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.1441144669974599,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=10158, cuda_fold from there",
          "model_seq_len": 10158,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.14672793092889647,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=4965, cuda_fold from there",
          "model_seq_len": 4965,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.03922627529110545,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=4096",
          "model": "cuda_rowwise below S=3885, cuda_fold from there (cheaper backend changes again at S=701742, 1048577)",
          "model_seq_len": 3885,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.02336143760771181,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=4096",
          "model": "cuda_rowwise below S=2123, cuda_fold from there (cheaper backend changes again at S=323815, 716068)",
          "model_seq_len": 2123,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.0,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "never in grid",
          "model": "cuda_rowwise cheaper at every S",
          "model_seq_len": 0,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.05629376839713718,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=32768",
          "model": "cuda_rowwise below S=17786, cuda_fold from there",
          "model_seq_len": 17786,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.1204718434777805,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=9553, cuda_fold from there",
          "model_seq_len": 9553,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.11883620492976599,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=4782, cuda_fold from there",
          "model_seq_len": 4782,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.002126653071983897,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=29383, cuda_rowwise from there (cheaper backend changes again at S=132233, 420382, 961745, 1048577)",
          "model_seq_len": 29383,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.004847666336249334,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=17096, cuda_rowwise from there (cheaper backend changes again at S=67673, 234725, 517385, 1048577)",
          "model_seq_len": 17096,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.0010271517876692116,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=46989, cuda_rowwise from there (cheaper backend changes again at S=129554, 277846)",
          "model_seq_len": 46989,
          "q_len": 8
        }
      ],
      "grid_loo_regret_max": 0.14672793092889647,
      "grid_regret_max": 0.0,
      "measured_at": "2026-12-02T07:34:06Z",
      "models": [
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 17.923],
            [2048, 18.267],
            [4096, 18.308],
            [8192, 18.949],
            [16384, 21.555],
            [32768, 26.849],
            [65536, 35.827],
            [131072, 53.676],
            [262144, 90.63],
            [524288, 165.27],
            [1048576, 305.93]
          ],
          "fixed_us": 17.310776175505858,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.034082954785723985,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.015906031524902754,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.24197808949040403
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 20.019],
            [2048, 20.55],
            [4096, 20.811],
            [8192, 21.744],
            [16384, 24.942],
            [32768, 33.026],
            [65536, 41.454],
            [131072, 59.196],
            [262144, 94.75],
            [524288, 167.256],
            [1048576, 311.016]
          ],
          "fixed_us": 20.178976277744045,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.10324990355031083,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.04163198598274993,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.25000189334819856
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.021],
            [2048, 20.963],
            [4096, 21.775],
            [8192, 23.497],
            [16384, 29.123],
            [32768, 36.675],
            [65536, 50.47],
            [131072, 78.356],
            [262144, 137.994],
            [524288, 267.64],
            [1048576, 521.744]
          ],
          "fixed_us": 20.251370826243623,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.04314071015295462,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.025664408991909478,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.40346539007978804
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.427],
            [2048, 22.239],
            [4096, 23.585],
            [8192, 28.451],
            [16384, 35.235],
            [32768, 48.207],
            [65536, 74.832],
            [131072, 135.032],
            [262144, 255.414],
            [524288, 491.416],
            [1048576, 1058.454]
          ],
          "fixed_us": 20.23877582023365,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.08948164974948858,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.036061619822630696,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.7810717220963368
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.028],
            [2048, 23.212],
            [4096, 27.685],
            [8192, 34.419],
            [16384, 47.414],
            [32768, 73.211],
            [65536, 130.234],
            [131072, 247.734],
            [262144, 481.698],
            [524288, 996.138],
            [1048576, 1888.432]
          ],
          "fixed_us": 19.862717628205285,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.059915514058713204,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.029378478030042413,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.5175858141217649
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 23.319],
            [2048, 27.102],
            [4096, 33.41],
            [8192, 46.376],
            [16384, 73.488],
            [32768, 129.378],
            [65536, 243.214],
            [131072, 495.762],
            [262144, 944.172],
            [524288, 1884.988],
            [1048576, 3724.714]
          ],
          "fixed_us": 19.35282577011871,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.04105011850208329,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.02564885904324908,
          "us_per_gflop": 0.0,
          "us_per_mb": 3.020353387499768
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 20.547],
            [2048, 20.31],
            [4096, 20.364],
            [8192, 20.486],
            [16384, 21.579],
            [32768, 24.291],
            [65536, 35.998],
            [131072, 58.09],
            [262144, 102.846],
            [524288, 190.452],
            [1048576, 364.422]
          ],
          "fixed_us": 18.06015428795546,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.16178327945839333,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.07579669452845485,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.5383288601501539
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.303],
            [2048, 22.045],
            [4096, 22.099],
            [8192, 22.216],
            [16384, 23.755],
            [32768, 28.057],
            [65536, 39.352],
            [131072, 60.989],
            [262144, 106.492],
            [524288, 192.964],
            [1048576, 364.658]
          ],
          "fixed_us": 19.949495855615154,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.08395144910986874,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.04563881581644965,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.5543303100584924
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.227],
            [2048, 22.088],
            [4096, 22.151],
            [8192, 24.029],
            [16384, 28.311],
            [32768, 39.282],
            [65536, 59.952],
            [131072, 102.357],
            [262144, 186.344],
            [524288, 350.076],
            [1048576, 679.18]
          ],
          "fixed_us": 19.931488256548775,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.07467377770672179,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.03652060850027001,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.0778437266914473
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.777],
            [2048, 22.899],
            [4096, 24.115],
            [8192, 27.691],
            [16384, 38.505],
            [32768, 59.548],
            [65536, 100.431],
            [131072, 182.723],
            [262144, 344.198],
            [524288, 668.614],
            [1048576, 1313.836]
          ],
          "fixed_us": 19.758381855970672,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.07752821006292643,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.036821918697088916,
          "us_per_gflop": 0.0,
          "us_per_mb": 2.123561279867508
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.733],
            [2048, 23.749],
            [4096, 27.519],
            [8192, 38.189],
            [16384, 59.037],
            [32768, 100.329],
            [65536, 183.311],
            [131072, 347.88],
            [262144, 680.972],
            [524288, 1342.89],
            [1048576, 2666.334]
          ],
          "fixed_us": 18.702344204484124,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.0646901604409782,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.026979024844620034,
          "us_per_gflop": 0.0,
          "us_per_mb": 4.34076593447658
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 24.3],
            [2048, 27.067],
            [4096, 37.724],
            [8192, 58.686],
            [16384, 100.268],
            [32768, 183.034],
            [65536, 348.435],
            [131072, 678.699],
            [262144, 1339.998],
            [524288, 2663.28],
            [1048576, 5306.702]
          ],
          "fixed_us": 17.8958823611357,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.051799368033187854,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.021128381881866116,
          "us_per_gflop": 0.0,
          "us_per_mb": 8.724210258907155
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.126],
            [2048, 18.213],
            [4096, 18.48],
            [8192, 18.674],
            [16384, 19.379],
            [32768, 34.854],
            [65536, 50.272],
            [131072, 80.588],
            [262144, 140.36],
            [524288, 262.264],
            [1048576, 490.934]
          ],
          "fixed_us": 16.02488276210781,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.22330675283876955,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.087840584534104,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.20347761954334023
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.245],
            [2048, 18.558],
            [4096, 18.738],
            [8192, 19.005],
            [16384, 33.647],
            [32768, 63.35],
            [65536, 93.107],
            [131072, 151.868],
            [262144, 271.12],
            [524288, 501.85],
            [1048576, 955.0]
          ],
          "fixed_us": 15.52568839390243,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.24408704034598705,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.12461188743509703,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.21432014611650912
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.714],
            [2048, 18.694],
            [4096, 18.988],
            [8192, 33.565],
            [16384, 62.647],
            [32768, 91.607],
            [65536, 149.97],
            [131072, 265.548],
            [262144, 498.602],
            [524288, 949.354],
            [1048576, 1851.698]
          ],
          "fixed_us": 15.203966411252102,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.25509736237423364,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.12306231089897846,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.20836559878724864
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 21.055],
            [2048, 21.656],
            [4096, 23.637],
            [8192, 28.822],
            [16384, 35.741],
            [32768, 48.783],
            [65536, 75.106],
            [131072, 136.654],
            [262144, 260.516],
            [524288, 505.334],
            [1048576, 1018.502]
          ],
          "fixed_us": 20.077242308764742,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.06152020481280185,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.029468736274835202,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.39503886454818066
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 21.126],
            [2048, 23.186],
            [4096, 28.261],
            [8192, 35.078],
            [16384, 48.196],
            [32768, 76.831],
            [65536, 130.296],
            [131072, 249.688],
            [262144, 486.6],
            [524288, 973.398],
            [1048576, 1942.55]
          ],
          "fixed_us": 19.746019503631643,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.045188889894553386,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.025171099267295452,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.38556890307308606
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 22.975],
            [2048, 26.839],
            [4096, 33.183],
            [8192, 45.522],
            [16384, 72.403],
            [32768, 129.31],
            [65536, 237.229],
            [131072, 485.504],
            [262144, 922.162],
            [524288, 1836.962],
            [1048576, 3687.86]
          ],
          "fixed_us": 19.190508029424855,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.03822116165731937,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.024511671949369845,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.37073656151202183
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.809],
            [2048, 18.977],
            [4096, 19.176],
            [8192, 19.513],
            [16384, 20.429],
            [32768, 36.523],
            [65536, 52.808],
            [131072, 85.491],
            [262144, 150.998],
            [524288, 277.224],
            [1048576, 524.49]
          ],
          "fixed_us": 16.652942777123286,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.21649112472411347,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.08522329005607938,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4343563634441795
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.816],
            [2048, 19.278],
            [4096, 19.444],
            [8192, 19.827],
            [16384, 35.424],
            [32768, 66.376],
            [65536, 98.801],
            [131072, 164.027],
            [262144, 291.444],
            [524288, 541.194],
            [1048576, 1040.224]
          ],
          "fixed_us": 15.933109787201742,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.2448067696893772,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.12214125872717536,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.46348496141148937
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 19.414],
            [2048, 19.644],
            [4096, 19.798],
            [8192, 35.512],
            [16384, 66.304],
            [32768, 98.949],
            [65536, 163.513],
            [131072, 293.16],
            [262144, 541.16],
            [524288, 1038.108],
            [1048576, 2032.54]
          ],
          "fixed_us": 15.589696846917262,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.24493480686890456,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.12244732262767,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.45662465786310563
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 22.964],
            [2048, 23.055],
            [4096, 24.203],
            [8192, 27.737],
            [16384, 38.557],
            [32768, 59.533],
            [65536, 100.254],
            [131072, 182.718],
            [262144, 344.93],
            [524288, 667.95],
            [1048576, 1314.022]
          ],
          "fixed_us": 19.87219872275787,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.0801454906132375,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.03805227101909622,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.0606767649995033
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 22.86],
            [2048, 23.95],
            [4096, 27.528],
            [8192, 38.232],
            [16384, 59.039],
            [32768, 100.277],
            [65536, 183.268],
            [131072, 349.566],
            [262144, 680.348],
            [524288, 1342.914],
            [1048576, 2667.148]
          ],
          "fixed_us": 18.80471241062361,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.06540374596938592,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.027989777012861594,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.0850374867595074
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 24.397],
            [2048, 27.284],
            [4096, 37.931],
            [8192, 58.808],
            [16384, 100.271],
            [32768, 183.222],
            [65536, 348.105],
            [131072, 678.71],
            [262144, 1340.112],
            [524288, 2660.808],
            [1048576, 5304.708]
          ],
          "fixed_us": 18.0609675583416,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.04890982401573085,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.019934669702724436,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.0899726407862678
        }
      ],
      "provisional": false,
      "reps": 30,
      "source": "mlaspec calibrate on NVIDIA H200, 2026-12-02T07:34:02Z (full grid, 30 reps)",
      "sweep_check": [
        {
          "config": "B=1,H=16,q=8,S=4096,kv=bf16",
          "cuda_fold_us": 21.77987527102232,
          "cuda_rowwise_us": 18.995375372469425,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=bf16",
          "cuda_fold_us": 29.370180585167624,
          "cuda_rowwise_us": 62.94545531272888,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=bf16",
          "cuda_fold_us": 50.679999589920044,
          "cuda_rowwise_us": 150.72640180587769,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=bf16",
          "cuda_fold_us": 135.5080008506775,
          "cuda_rowwise_us": 496.44801020622253,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=bf16",
          "cuda_fold_us": 515.2640044689178,
          "cuda_rowwise_us": 1852.400004863739,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=4096,kv=fp8",
          "cuda_fold_us": 22.286375053226948,
          "cuda_rowwise_us": 19.759874790906906,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=fp8",
          "cuda_fold_us": 28.216544877399098,
          "cuda_rowwise_us": 65.9996352412484,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=fp8",
          "cuda_fold_us": 59.536727991971105,
          "cuda_rowwise_us": 162.46982054276899,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=fp8",
          "cuda_fold_us": 184.93399769067764,
          "cuda_rowwise_us": 541.6640043258667,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=fp8",
          "cuda_fold_us": 676.7880022525787,
          "cuda_rowwise_us": 2032.2660207748413,
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
