// Built-in cost-model profiles, used when no profile file has an entry for this machine
// (docs/dispatch.md). Same JSON format as the file `mlaspec calibrate` writes.
//
// GPU profiles (kBuiltinGpuProfileJson): the whole file `mlaspec calibrate --out FILE` writes,
// pasted unchanged between the raw-string markers (write to a fresh FILE so it holds only the
// calibrated GPU). This string is the only place to edit; nothing else needs to change.
//
// NVIDIA H200 — MEASURED 2026-12-01 on the H200 by `scripts/gpu-check.sh` (`mlaspec calibrate`,
// full grid: B=1, H 16|128, q_len 2|4|8, S = 1k, 2k, ..., 1M, bf16 and fp8, median of 30 CUDA-graph
// replays per point) on the kernel of v13 (split-major grid; fp8 dequantised in place); report in
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
          "model": "cuda_rowwise below S=10819, cuda_fold from there",
          "model_seq_len": 10819,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.0821081995119155,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=9367, cuda_fold from there",
          "model_seq_len": 9367,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.08975750597231813,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=4677, cuda_fold from there",
          "model_seq_len": 4677,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.03165983495131197,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=4096",
          "model": "cuda_rowwise below S=3602, cuda_fold from there (cheaper backend changes again at S=29565, 80643, 586182)",
          "model_seq_len": 3602,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.03407541444239737,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=4096",
          "model": "cuda_fold below S=1024, cuda_rowwise from there (cheaper backend changes again at S=2342, 366529, 1048577)",
          "model_seq_len": 1024,
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
          "grid_loo_regret_max": 0.0,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=12687, cuda_fold from there",
          "model_seq_len": 12687,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.025992174807590862,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=8480, cuda_fold from there",
          "model_seq_len": 8480,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.06763796113049803,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=4448, cuda_fold from there",
          "model_seq_len": 4448,
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
          "model": "cuda_fold below S=5, cuda_rowwise from there",
          "model_seq_len": 5,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.0,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "never in grid",
          "model": "cuda_fold below S=647, cuda_rowwise from there",
          "model_seq_len": 647,
          "q_len": 8
        }
      ],
      "grid_loo_regret_max": 0.08975750597231813,
      "grid_regret_max": 0.0,
      "measured_at": "2026-12-01T10:41:51Z",
      "models": [
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 17.756],
            [2048, 17.975],
            [4096, 18.223],
            [8192, 19.335],
            [16384, 22.663],
            [32768, 29.316],
            [65536, 41.208],
            [131072, 59.332],
            [262144, 96.514],
            [524288, 173.768],
            [1048576, 330.488]
          ],
          "fixed_us": 17.50867013775389,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.08528276975306781,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.03784372478479921,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.26735991804279746
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 20.737],
            [2048, 20.677],
            [4096, 20.985],
            [8192, 22.122],
            [16384, 25.444],
            [32768, 34.921],
            [65536, 46.387],
            [131072, 64.998],
            [262144, 101.84],
            [524288, 178.674],
            [1048576, 340.888]
          ],
          "fixed_us": 20.508263201689534,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.11419656049847549,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.0565158864116123,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.27615858379108166
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.472],
            [2048, 21.098],
            [4096, 21.593],
            [8192, 23.334],
            [16384, 29.368],
            [32768, 39.119],
            [65536, 56.416],
            [131072, 87.75],
            [262144, 151.474],
            [524288, 303.056],
            [1048576, 656.328]
          ],
          "fixed_us": 19.936461310565747,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.10048856452795452,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.04636053074767818,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4722327602600291
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.272],
            [2048, 22.349],
            [4096, 23.594],
            [8192, 28.496],
            [16384, 37.366],
            [32768, 54.582],
            [65536, 85.382],
            [131072, 145.926],
            [262144, 288.134],
            [524288, 553.564],
            [1048576, 1186.174]
          ],
          "fixed_us": 20.274607418707447,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.07851871749653005,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.035106935197026075,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.8880781703255999
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 24.738],
            [2048, 25.795],
            [4096, 30.351],
            [8192, 38.649],
            [16384, 54.587],
            [32768, 85.621],
            [65536, 147.338],
            [131072, 278.032],
            [262144, 536.322],
            [524288, 1101.644],
            [1048576, 2149.588]
          ],
          "fixed_us": 22.182339144674447,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.03775790753093222,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.019754939650229578,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.7183785122184267
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 30.22],
            [2048, 34.159],
            [4096, 42.087],
            [8192, 57.611],
            [16384, 87.877],
            [32768, 152.081],
            [65536, 276.923],
            [131072, 553.634],
            [262144, 1039.416],
            [524288, 2090.482],
            [1048576, 4097.404]
          ],
          "fixed_us": 26.057823162083636,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.03263747502049319,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.013715578355779662,
          "us_per_gflop": 0.0,
          "us_per_mb": 3.3743313823836485
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 25.903],
            [2048, 25.921],
            [4096, 26.086],
            [8192, 26.347],
            [16384, 28.093],
            [32768, 32.547],
            [65536, 50.321],
            [131072, 83.914],
            [262144, 148.746],
            [524288, 273.076],
            [1048576, 518.772]
          ],
          "fixed_us": 22.94756758709486,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.16284093644269926,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.07323736234912029,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.7893715121166992
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 26.519],
            [2048, 26.875],
            [4096, 27.07],
            [8192, 27.459],
            [16384, 29.62],
            [32768, 36.417],
            [65536, 54.122],
            [131072, 86.278],
            [262144, 151.282],
            [524288, 277.034],
            [1048576, 522.332]
          ],
          "fixed_us": 24.296490342102363,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.08836195698978488,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.04826647067829427,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.8126621821319238
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 27.289],
            [2048, 27.492],
            [4096, 27.901],
            [8192, 28.956],
            [16384, 33.537],
            [32768, 50.493],
            [65536, 84.629],
            [131072, 152.506],
            [262144, 280.836],
            [524288, 534.498],
            [1048576, 1038.968]
          ],
          "fixed_us": 23.29720913303364,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.15430089097177202,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.07309188788685599,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.6333320336755555
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 28.183],
            [2048, 28.486],
            [4096, 29.421],
            [8192, 33.306],
            [16384, 49.986],
            [32768, 83.081],
            [65536, 149.463],
            [131072, 277.709],
            [262144, 528.406],
            [524288, 1026.754],
            [1048576, 2014.634]
          ],
          "fixed_us": 22.776045447815758,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.14459313303720966,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.06744200139373559,
          "us_per_gflop": 0.0,
          "us_per_mb": 3.2521935154419466
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 30.578],
            [2048, 31.299],
            [4096, 35.54],
            [8192, 51.731],
            [16384, 83.72],
            [32768, 149.797],
            [65536, 279.964],
            [131072, 536.808],
            [262144, 1042.53],
            [524288, 2058.454],
            [1048576, 4087.73]
          ],
          "fixed_us": 23.222089740000914,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.11221096719721035,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.0494629318369305,
          "us_per_gflop": 0.0,
          "us_per_mb": 6.653306277701662
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 35.343],
            [2048, 39.262],
            [4096, 55.34],
            [8192, 87.114],
            [16384, 149.93],
            [32768, 276.489],
            [65536, 527.681],
            [131072, 1025.379],
            [262144, 2014.93],
            [524288, 3992.796],
            [1048576, 7953.65]
          ],
          "fixed_us": 25.575662184867614,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.05680242586204176,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.023785779092448427,
          "us_per_gflop": 0.0,
          "us_per_mb": 13.15587504090029
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 16.959],
            [2048, 17.015],
            [4096, 17.369],
            [8192, 18.947],
            [16384, 23.359],
            [32768, 40.269],
            [65536, 59.25],
            [131072, 91.504],
            [262144, 154.58],
            [524288, 289.14],
            [1048576, 556.174]
          ],
          "fixed_us": 15.800146445658765,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.16193426365818675,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.075525801418284,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.23772979349130546
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 17.068],
            [2048, 16.956],
            [4096, 17.915],
            [8192, 20.443],
            [16384, 35.368],
            [32768, 66.324],
            [65536, 98.877],
            [131072, 159.796],
            [262144, 284.902],
            [524288, 528.992],
            [1048576, 1017.14]
          ],
          "fixed_us": 14.838947482679052,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.2517087619626571,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.11502305745271317,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.23040803043017694
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 17.203],
            [2048, 17.773],
            [4096, 19.815],
            [8192, 33.565],
            [16384, 60.999],
            [32768, 92.676],
            [65536, 152.821],
            [131072, 270.86],
            [262144, 507.546],
            [524288, 968.362],
            [1048576, 1894.042]
          ],
          "fixed_us": 14.59812597304687,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.23144272882654415,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.10801276672487656,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2138002166949171
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 21.698],
            [2048, 21.967],
            [4096, 23.687],
            [8192, 29.007],
            [16384, 37.793],
            [32768, 54.474],
            [65536, 84.253],
            [131072, 150.546],
            [262144, 290.474],
            [524288, 562.54],
            [1048576, 1090.792]
          ],
          "fixed_us": 20.21093212520185,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.032454932347135035,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.02000452723276651,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.44224186280908195
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 24.166],
            [2048, 25.672],
            [4096, 30.962],
            [8192, 39.535],
            [16384, 55.623],
            [32768, 86.015],
            [65536, 149.746],
            [131072, 281.746],
            [262144, 553.416],
            [524288, 1065.342],
            [1048576, 2126.09]
          ],
          "fixed_us": 22.22171329699199,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.02483054048440092,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.016063083145438712,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4326375948966622
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 29.713],
            [2048, 33.741],
            [4096, 41.684],
            [8192, 56.886],
            [16384, 87.555],
            [32768, 150.972],
            [65536, 271.645],
            [131072, 548.51],
            [262144, 1025.794],
            [524288, 2043.974],
            [1048576, 4055.842]
          ],
          "fixed_us": 25.749416948736293,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.03586109365317691,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.013488692003019389,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4164795321259966
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 25.271],
            [2048, 25.158],
            [4096, 24.868],
            [8192, 25.837],
            [16384, 28.416],
            [32768, 51.521],
            [65536, 85.787],
            [131072, 152.234],
            [262144, 279.95],
            [524288, 523.006],
            [1048576, 1002.9]
          ],
          "fixed_us": 20.46493497703889,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.2602342198206846,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.10450413724167687,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.8130661972450873
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 24.889],
            [2048, 24.468],
            [4096, 25.076],
            [8192, 26.763],
            [16384, 48.396],
            [32768, 92.856],
            [65536, 159.567],
            [131072, 285.123],
            [262144, 533.722],
            [524288, 1010.978],
            [1048576, 1972.12]
          ],
          "fixed_us": 18.400762730966687,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.27683245337222484,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.11622633629441283,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.8355746987323429
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 24.605],
            [2048, 24.98],
            [4096, 26.134],
            [8192, 47.081],
            [16384, 88.934],
            [32768, 152.652],
            [65536, 277.834],
            [131072, 518.896],
            [262144, 991.364],
            [524288, 1925.862],
            [1048576, 3792.488]
          ],
          "fixed_us": 16.829791332137265,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.2339337185941781,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.09875782162489587,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.8168416310990434
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 27.859],
            [2048, 27.82],
            [4096, 28.823],
            [8192, 33.091],
            [16384, 48.674],
            [32768, 80.244],
            [65536, 143.674],
            [131072, 266.168],
            [262144, 506.712],
            [524288, 985.168],
            [1048576, 1935.9]
          ],
          "fixed_us": 22.580711041712817,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.12727662929639383,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.06310249371033774,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.5600140726878995
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 29.688],
            [2048, 30.782],
            [4096, 35.335],
            [8192, 50.745],
            [16384, 81.402],
            [32768, 142.616],
            [65536, 265.455],
            [131072, 507.778],
            [262144, 989.206],
            [524288, 1951.51],
            [1048576, 3875.13]
          ],
          "fixed_us": 23.22296369892884,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.09227113149813715,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.04032454778702473,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.5790095325033766
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 34.748],
            [2048, 39.09],
            [4096, 54.595],
            [8192, 85.127],
            [16384, 145.745],
            [32768, 266.119],
            [65536, 505.241],
            [131072, 981.098],
            [262144, 1930.954],
            [524288, 3824.856],
            [1048576, 7611.482]
          ],
          "fixed_us": 25.778330834369076,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.04407201581351028,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.019169950264527853,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.5764224441219288
        }
      ],
      "provisional": false,
      "reps": 30,
      "source": "mlaspec calibrate on NVIDIA H200, 2026-12-01T10:41:47Z (full grid, 30 reps)",
      "sweep_check": [
        {
          "config": "B=1,H=16,q=8,S=4096,kv=bf16",
          "cuda_fold_us": 21.565250121057034,
          "cuda_rowwise_us": 19.995749928057194,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=bf16",
          "cuda_fold_us": 29.468362981622867,
          "cuda_rowwise_us": 61.48763678290627,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=bf16",
          "cuda_fold_us": 56.58240020275116,
          "cuda_rowwise_us": 153.5423994064331,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=bf16",
          "cuda_fold_us": 153.08599919080734,
          "cuda_rowwise_us": 507.1139931678772,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=bf16",
          "cuda_fold_us": 586.7179930210114,
          "cuda_rowwise_us": 1901.3519883155823,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=4096,kv=fp8",
          "cuda_fold_us": 28.304874897003174,
          "cuda_rowwise_us": 26.411250233650208,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=fp8",
          "cuda_fold_us": 33.37363627823916,
          "cuda_rowwise_us": 88.43236348845741,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=fp8",
          "cuda_fold_us": 84.30472829125145,
          "cuda_rowwise_us": 275.8407267657193,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=fp8",
          "cuda_fold_us": 281.4140021800995,
          "cuda_rowwise_us": 992.1539723873138,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=fp8",
          "cuda_fold_us": 1036.7319583892822,
          "cuda_rowwise_us": 3795.956015586853,
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
