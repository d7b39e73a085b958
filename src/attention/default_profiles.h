// Built-in cost-model profiles, used when no profile file has an entry for this machine
// (docs/dispatch.md). Same JSON format as the file `mlaspec calibrate` writes.
//
// GPU profiles (kBuiltinGpuProfileJson): the whole file `mlaspec calibrate --out FILE` writes,
// pasted unchanged between the raw-string markers (write to a fresh FILE so it holds only the
// calibrated GPU). This string is the only place to edit; nothing else needs to change.
//
// NVIDIA H200 — MEASURED 2026-12-01 on the H200 by `scripts/gpu-check.sh` (`mlaspec calibrate`,
// full grid: B=1, H 16|128, q_len 2|4|8, S = 1k, 2k, ..., 1M, bf16 and fp8, median of 30 CUDA-graph
// replays per point) on the kernel of v16 (split-major grid; fp8 dequantised in place, 3 column
// blocks per step); report in docs/perf/dispatch-calibration-2026-12-01b.md. Recalibrate whenever
// the kernels change.
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
          "model": "cuda_rowwise below S=13250, cuda_fold from there",
          "model_seq_len": 13250,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.09811686545809639,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=9610, cuda_fold from there",
          "model_seq_len": 9610,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.11569565223872535,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=4838, cuda_fold from there",
          "model_seq_len": 4838,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.028483959490985367,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=4096",
          "model": "cuda_rowwise below S=3452, cuda_fold from there (cheaper backend changes again at S=22510, 76861, 629378)",
          "model_seq_len": 3452,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.05506061654318928,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=4096",
          "model": "cuda_rowwise below S=2404, cuda_fold from there (cheaper backend changes again at S=48731, 162451, 408863)",
          "model_seq_len": 2404,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.06086430576464874,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=65536",
          "model": "cuda_rowwise below S=34273, cuda_fold from there (cheaper backend changes again at S=118050)",
          "model_seq_len": 34273,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.0,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=10195, cuda_fold from there",
          "model_seq_len": 10195,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.04155734287086177,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=8705, cuda_fold from there",
          "model_seq_len": 8705,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.09687489295342488,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=4630, cuda_fold from there",
          "model_seq_len": 4630,
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
          "model": "cuda_fold below S=926, cuda_rowwise from there",
          "model_seq_len": 926,
          "q_len": 8
        }
      ],
      "grid_loo_regret_max": 0.11569565223872535,
      "grid_regret_max": 0.0,
      "measured_at": "2026-12-01T12:02:32Z",
      "models": [
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 17.632],
            [2048, 17.836],
            [4096, 18.34],
            [8192, 19.546],
            [16384, 22.925],
            [32768, 29.226],
            [65536, 41.68],
            [131072, 59.574],
            [262144, 95.778],
            [524288, 171.8],
            [1048576, 324.208]
          ],
          "fixed_us": 17.592004547749664,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.09846457571498901,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.042089422846689255,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2646974887362294
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 20.505],
            [2048, 20.605],
            [4096, 21.15],
            [8192, 22.075],
            [16384, 25.841],
            [32768, 35.027],
            [65536, 46.754],
            [131072, 65.148],
            [262144, 102.216],
            [524288, 176.83],
            [1048576, 355.7]
          ],
          "fixed_us": 20.478022577102045,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.11361835927488062,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.05756202841824831,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.27998783154051265
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.282],
            [2048, 21.214],
            [4096, 21.608],
            [8192, 23.664],
            [16384, 29.556],
            [32768, 39.301],
            [65536, 56.76],
            [131072, 87.96],
            [262144, 153.442],
            [524288, 305.212],
            [1048576, 649.962]
          ],
          "fixed_us": 20.005500088888798,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.0867761430032068,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.041198951983235685,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.47481334189385366
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.094],
            [2048, 22.443],
            [4096, 24.097],
            [8192, 28.355],
            [16384, 37.275],
            [32768, 54.391],
            [65536, 85.246],
            [131072, 150.892],
            [262144, 289.19],
            [524288, 558.154],
            [1048576, 1166.714]
          ],
          "fixed_us": 20.315950150777088,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.05802409411613174,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.024626116519670095,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.8929939226947056
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 25.097],
            [2048, 26.336],
            [4096, 30.245],
            [8192, 38.34],
            [16384, 54.467],
            [32768, 85.185],
            [65536, 150.098],
            [131072, 281.31],
            [262144, 538.97],
            [524288, 1099.676],
            [1048576, 2166.196]
          ],
          "fixed_us": 22.342717212724118,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.031958986830038394,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.01882336603810086,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.7255358639087723
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 30.804],
            [2048, 33.988],
            [4096, 42.018],
            [8192, 57.43],
            [16384, 87.94],
            [32768, 152.134],
            [65536, 271.87],
            [131072, 555.532],
            [262144, 1041.998],
            [524288, 2113.726],
            [1048576, 4133.794]
          ],
          "fixed_us": 26.163749405860642,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.035621735895352113,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.019397074090004643,
          "us_per_gflop": 0.0,
          "us_per_mb": 3.374809983827417
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.851],
            [2048, 22.7],
            [4096, 23.125],
            [8192, 23.551],
            [16384, 25.629],
            [32768, 30.233],
            [65536, 45.249],
            [131072, 73.754],
            [262144, 128.34],
            [524288, 231.378],
            [1048576, 437.962]
          ],
          "fixed_us": 20.771964283512062,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.1122562174919457,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.051138469355859625,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.6810598840089063
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 23.195],
            [2048, 24.492],
            [4096, 24.833],
            [8192, 25.301],
            [16384, 28.316],
            [32768, 34.43],
            [65536, 49.193],
            [131072, 76.312],
            [262144, 130.932],
            [524288, 236.436],
            [1048576, 442.628]
          ],
          "fixed_us": 22.614934474162975,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.042848731848236676,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.024019102191560636,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.7011718025385142
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 24.642],
            [2048, 25.271],
            [4096, 25.736],
            [8192, 27.16],
            [16384, 31.557],
            [32768, 45.915],
            [65536, 74.648],
            [131072, 131.13],
            [262144, 241.068],
            [524288, 453.256],
            [1048576, 878.034]
          ],
          "fixed_us": 21.975785338613747,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.11442124324261593,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.05328875835287242,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.3979074507144087
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 26.028],
            [2048, 26.485],
            [4096, 27.67],
            [8192, 31.244],
            [16384, 44.998],
            [32768, 73.012],
            [65536, 129.015],
            [131072, 237.867],
            [262144, 447.01],
            [524288, 862.736],
            [1048576, 1688.938]
          ],
          "fixed_us": 21.861510747765344,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.11526300882053109,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.0545169266904368,
          "us_per_gflop": 0.0,
          "us_per_mb": 2.7515302412985934
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 28.559],
            [2048, 29.86],
            [4096, 33.409],
            [8192, 47.003],
            [16384, 74.177],
            [32768, 128.7],
            [65536, 238.375],
            [131072, 451.984],
            [262144, 874.852],
            [524288, 1720.302],
            [1048576, 3411.12]
          ],
          "fixed_us": 22.855692714956177,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.08437870168624084,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.039140223792639706,
          "us_per_gflop": 0.0,
          "us_per_mb": 5.58315401656365
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 33.93],
            [2048, 37.24],
            [4096, 50.779],
            [8192, 77.783],
            [16384, 130.853],
            [32768, 237.423],
            [65536, 449.453],
            [131072, 869.853],
            [262144, 1704.98],
            [524288, 3375.476],
            [1048576, 6706.16]
          ],
          "fixed_us": 25.655998754014497,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.05068409473673474,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.021232777412631465,
          "us_per_gflop": 0.0,
          "us_per_mb": 11.112883248993844
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 16.885],
            [2048, 17.052],
            [4096, 17.51],
            [8192, 19.07],
            [16384, 23.176],
            [32768, 40.315],
            [65536, 59.342],
            [131072, 90.742],
            [262144, 152.748],
            [524288, 291.234],
            [1048576, 556.06]
          ],
          "fixed_us": 15.83344330159916,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.16337587802641507,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.07528607669530146,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2370275782498479
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 17.178],
            [2048, 17.124],
            [4096, 18.062],
            [8192, 20.102],
            [16384, 35.337],
            [32768, 66.518],
            [65536, 99.403],
            [131072, 161.378],
            [262144, 284.848],
            [524288, 532.684],
            [1048576, 1022.478]
          ],
          "fixed_us": 14.846794432074795,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.25181970399099807,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.11761648485384733,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.23126951270945711
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 17.306],
            [2048, 17.952],
            [4096, 19.368],
            [8192, 33.468],
            [16384, 60.867],
            [32768, 93.324],
            [65536, 153.501],
            [131072, 269.692],
            [262144, 515.936],
            [524288, 983.52],
            [1048576, 1920.076]
          ],
          "fixed_us": 14.469368873283488,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.22701251729492233,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.10886299130305527,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.21577060362306713
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 21.823],
            [2048, 22.078],
            [4096, 24.227],
            [8192, 28.651],
            [16384, 37.434],
            [32768, 54.118],
            [65536, 84.534],
            [131072, 155.19],
            [262144, 289.98],
            [524288, 568.342],
            [1048576, 1109.212]
          ],
          "fixed_us": 20.249233146881267,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.03683428497597174,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.015393417339998914,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4463654873129689
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 24.256],
            [2048, 26.217],
            [4096, 30.705],
            [8192, 39.271],
            [16384, 55.191],
            [32768, 87.044],
            [65536, 147.698],
            [131072, 274.628],
            [262144, 568.646],
            [524288, 1067.192],
            [1048576, 2117.232]
          ],
          "fixed_us": 22.338132047502604,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.044883153678326404,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.020137600627274183,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4311280575610772
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 30.227],
            [2048, 33.566],
            [4096, 41.428],
            [8192, 56.727],
            [16384, 87.926],
            [32768, 151.513],
            [65536, 288.418],
            [131072, 549.726],
            [262144, 1023.768],
            [524288, 2058.524],
            [1048576, 4058.644]
          ],
          "fixed_us": 25.74426181232857,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.02964613331031285,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.016267781805531373,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4207473216908152
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 22.165],
            [2048, 22.269],
            [4096, 22.438],
            [8192, 23.336],
            [16384, 26.144],
            [32768, 46.748],
            [65536, 76.135],
            [131072, 132.334],
            [262144, 238.898],
            [524288, 440.956],
            [1048576, 846.704]
          ],
          "fixed_us": 18.72163046025978,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.221076620260104,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.08943867873226358,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.6994893342617912
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 22.136],
            [2048, 22.009],
            [4096, 22.614],
            [8192, 24.292],
            [16384, 43.268],
            [32768, 82.372],
            [65536, 139.067],
            [131072, 245.571],
            [262144, 454.18],
            [524288, 857.51],
            [1048576, 1654.27]
          ],
          "fixed_us": 16.98775460996613,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.25474255661503364,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.11024747482879597,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.7148391906119602
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 22.047],
            [2048, 22.376],
            [4096, 23.463],
            [8192, 41.794],
            [16384, 78.31],
            [32768, 132.629],
            [65536, 237.943],
            [131072, 441.832],
            [262144, 840.622],
            [524288, 1622.932],
            [1048576, 3173.352]
          ],
          "fixed_us": 15.611271919430665,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.223390249621781,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.09791864409088713,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.6937153881746372
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 25.597],
            [2048, 25.777],
            [4096, 27.527],
            [8192, 31.106],
            [16384, 44.179],
            [32768, 70.738],
            [65536, 124.612],
            [131072, 227.379],
            [262144, 427.792],
            [524288, 827.408],
            [1048576, 1616.696]
          ],
          "fixed_us": 21.758151519907177,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.09970678399452826,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.0473021679455592,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.319134476571349
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 27.885],
            [2048, 29.422],
            [4096, 33.182],
            [8192, 46.204],
            [16384, 72.277],
            [32768, 124.692],
            [65536, 230.553],
            [131072, 436.093],
            [262144, 844.79],
            [524288, 1659.484],
            [1048576, 3285.266]
          ],
          "fixed_us": 22.69482174890665,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.07215282852153393,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.033897268637145116,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.3472917362779537
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 33.508],
            [2048, 37.038],
            [4096, 50.151],
            [8192, 75.936],
            [16384, 127.118],
            [32768, 228.906],
            [65536, 430.155],
            [131072, 828.626],
            [262144, 1624.528],
            [524288, 3205.86],
            [1048576, 6368.342]
          ],
          "fixed_us": 25.929928709332465,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.039575278380296175,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.018360224401129246,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.3248914843020787
        }
      ],
      "provisional": false,
      "reps": 30,
      "source": "mlaspec calibrate on NVIDIA H200, 2026-12-01T12:02:29Z (full grid, 30 reps)",
      "sweep_check": [
        {
          "config": "B=1,H=16,q=8,S=4096,kv=bf16",
          "cuda_fold_us": 21.634500473737717,
          "cuda_rowwise_us": 19.499500282108784,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=bf16",
          "cuda_fold_us": 29.44290908900174,
          "cuda_rowwise_us": 61.06254458427429,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=bf16",
          "cuda_fold_us": 56.62879943847656,
          "cuda_rowwise_us": 153.07679772377014,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=bf16",
          "cuda_fold_us": 152.2359997034073,
          "cuda_rowwise_us": 508.34599137306213,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=bf16",
          "cuda_fold_us": 590.5280113220215,
          "cuda_rowwise_us": 1940.970003604889,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=4096,kv=fp8",
          "cuda_fold_us": 25.92799998819828,
          "cuda_rowwise_us": 23.685249499976635,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=fp8",
          "cuda_fold_us": 31.49236332286488,
          "cuda_rowwise_us": 78.30781828273426,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=fp8",
          "cuda_fold_us": 74.56290992823514,
          "cuda_rowwise_us": 237.69164085388184,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=fp8",
          "cuda_fold_us": 240.46000093221664,
          "cuda_rowwise_us": 837.8919959068298,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=fp8",
          "cuda_fold_us": 874.9019801616669,
          "cuda_rowwise_us": 3172.7499961853027,
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
