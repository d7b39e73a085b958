// Built-in cost-model profiles, used when no profile file has an entry for this machine
// (docs/dispatch.md). Same JSON format as the file `mlaspec calibrate` writes.
//
// GPU profiles (kBuiltinGpuProfileJson): the whole file `mlaspec calibrate --out FILE` writes,
// pasted unchanged between the raw-string markers (write to a fresh FILE so it holds only the
// calibrated GPU). This string is the only place to edit; nothing else needs to change.
//
// NVIDIA H200 — MEASURED 2026-12-02 on the H200 by `scripts/gpu-check.sh` (`mlaspec calibrate`,
// full grid: B=1, H 16|128, q_len 2|4|8, S = 1k, 2k, ..., 1M, bf16 and fp8, median of 30 CUDA-graph
// replays per point) on the kernels of v44 (the narrow kernel for row tiles of <= 16 rows, which
// rowwise runs at H = 16; the 64-row kernel with v28's half-slots otherwise; v31's fp8 fold
// without clusters; the deterministic merge tree of v34; fp8 in f16 since v37, its raw codes in
// the half freed first since v40; v42's mask-free tiles; v44's lazy rescale); report in
// docs/perf/dispatch-calibration-2026-12-02c.md.
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
          "grid_loo_regret_max": 0.0889793050365073,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=4096",
          "model": "cuda_rowwise below S=3133, cuda_fold from there (cheaper backend changes again at S=5672, 19453)",
          "model_seq_len": 3133,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.11008227143785243,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=9697, cuda_fold from there",
          "model_seq_len": 9697,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.12187753226389209,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=4840, cuda_fold from there",
          "model_seq_len": 4840,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.03363230851586696,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=4096",
          "model": "cuda_fold below S=1024, cuda_rowwise from there (cheaper backend changes again at S=2883, 757337, 1048577)",
          "model_seq_len": 1024,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.036422208570204395,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=4096",
          "model": "cuda_rowwise below S=2353, cuda_fold from there (cheaper backend changes again at S=47261, 156929, 384980, 689903)",
          "model_seq_len": 2353,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.008986259537670627,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=12757, cuda_fold from there (cheaper backend changes again at S=23368, 38493, 490354, 526983)",
          "model_seq_len": 12757,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.036594319714802204,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=32768",
          "model": "cuda_rowwise below S=17360, cuda_fold from there",
          "model_seq_len": 17360,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.10261885496671885,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=9341, cuda_fold from there",
          "model_seq_len": 9341,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.10648795450027726,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=4695, cuda_fold from there",
          "model_seq_len": 4695,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.00014373370492037907,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=135045, cuda_rowwise from there (cheaper backend changes again at S=990555, 1048577)",
          "model_seq_len": 135045,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.001403704562021879,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=24314, cuda_rowwise from there (cheaper backend changes again at S=42636, 1048577)",
          "model_seq_len": 24314,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.0004089218814475881,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=144478, cuda_rowwise from there (cheaper backend changes again at S=413862)",
          "model_seq_len": 144478,
          "q_len": 8
        }
      ],
      "grid_loo_regret_max": 0.12187753226389209,
      "grid_regret_max": 0.0,
      "measured_at": "2026-12-02T04:32:45Z",
      "models": [
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 18.191],
            [2048, 18.273],
            [4096, 18.325],
            [8192, 18.761],
            [16384, 21.211],
            [32768, 26.975],
            [65536, 36.165],
            [131072, 54.914],
            [262144, 91.18],
            [524288, 160.66],
            [1048576, 307.562]
          ],
          "fixed_us": 17.324816914150187,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.04514298490384361,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.02332054631759561,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.24197745941249468
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 20.349],
            [2048, 20.716],
            [4096, 20.755],
            [8192, 21.274],
            [16384, 24.485],
            [32768, 32.887],
            [65536, 41.314],
            [131072, 59.812],
            [262144, 96.002],
            [524288, 167.804],
            [1048576, 330.086]
          ],
          "fixed_us": 20.012833343681983,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.09697720451762926,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.0401211334497821,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2565681358604533
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.244],
            [2048, 21.071],
            [4096, 21.445],
            [8192, 23.32],
            [16384, 29.317],
            [32768, 36.703],
            [65536, 50.992],
            [131072, 79.608],
            [262144, 137.99],
            [524288, 251.108],
            [1048576, 545.336]
          ],
          "fixed_us": 20.275182026137323,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.07117110947701466,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.036879001993275345,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.40253720127337406
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.39],
            [2048, 21.799],
            [4096, 23.181],
            [8192, 28.351],
            [16384, 35.083],
            [32768, 48.345],
            [65536, 75.518],
            [131072, 133.508],
            [262144, 260.6],
            [524288, 506.12],
            [1048576, 1084.504]
          ],
          "fixed_us": 19.907073098729395,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.09664179662984407,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.04087934780558156,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.7945535244053478
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.613],
            [2048, 22.746],
            [4096, 27.891],
            [8192, 34.716],
            [16384, 47.765],
            [32768, 74.684],
            [65536, 134.619],
            [131072, 257.162],
            [262144, 495.686],
            [524288, 1032.82],
            [1048576, 1951.708]
          ],
          "fixed_us": 19.45146744568572,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.060808400357038606,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.031139846501070583,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.5738347962024781
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 23.276],
            [2048, 27.582],
            [4096, 34.13],
            [8192, 47.121],
            [16384, 74.781],
            [32768, 133.204],
            [65536, 246.344],
            [131072, 509.176],
            [262144, 968.604],
            [524288, 1953.294],
            [1048576, 3845.414]
          ],
          "fixed_us": 19.419137515513373,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.043443910058918345,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.028163943527479116,
          "us_per_gflop": 0.0,
          "us_per_mb": 3.1052884332855544
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.272],
            [2048, 20.301],
            [4096, 20.182],
            [8192, 20.34],
            [16384, 21.333],
            [32768, 24.646],
            [65536, 35.581],
            [131072, 57.59],
            [262144, 101.788],
            [524288, 188.644],
            [1048576, 361.734]
          ],
          "fixed_us": 18.119693384796268,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.14288961670944356,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.07755801329975247,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.5323713122223326
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.33],
            [2048, 22.021],
            [4096, 22.053],
            [8192, 22.072],
            [16384, 23.429],
            [32768, 28.103],
            [65536, 39.431],
            [131072, 60.962],
            [262144, 105.87],
            [524288, 192.952],
            [1048576, 366.222]
          ],
          "fixed_us": 19.867636621130863,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.07951205652360671,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.04713445682683969,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.5547303854227796
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.108],
            [2048, 21.998],
            [4096, 22.115],
            [8192, 23.609],
            [16384, 28.06],
            [32768, 38.729],
            [65536, 59.537],
            [131072, 101.995],
            [262144, 185.306],
            [524288, 346.756],
            [1048576, 673.812]
          ],
          "fixed_us": 19.7708569897638,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.07717724410047355,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.03904587898039948,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.0692646546553137
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.592],
            [2048, 22.688],
            [4096, 23.725],
            [8192, 27.74],
            [16384, 38.486],
            [32768, 59.247],
            [65536, 99.799],
            [131072, 180.984],
            [262144, 342.45],
            [524288, 664.112],
            [1048576, 1307.926]
          ],
          "fixed_us": 19.605966434603136,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.0770152618873704,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.03506448346258092,
          "us_per_gflop": 0.0,
          "us_per_mb": 2.112867071147779
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.448],
            [2048, 23.531],
            [4096, 27.536],
            [8192, 38.199],
            [16384, 59.015],
            [32768, 100.285],
            [65536, 181.863],
            [131072, 346.21],
            [262144, 675.23],
            [524288, 1334.0],
            [1048576, 2649.684]
          ],
          "fixed_us": 18.60347832358035,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.05772331985457135,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.02361986305239109,
          "us_per_gflop": 0.0,
          "us_per_mb": 4.320802471744232
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 23.892],
            [2048, 27.118],
            [4096, 37.733],
            [8192, 58.468],
            [16384, 99.749],
            [32768, 181.777],
            [65536, 346.234],
            [131072, 673.347],
            [262144, 1330.754],
            [524288, 2644.092],
            [1048576, 5270.892]
          ],
          "fixed_us": 17.816276681603185,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.0402268787864134,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.016663043113801585,
          "us_per_gflop": 0.0,
          "us_per_mb": 8.671031676106255
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.03],
            [2048, 18.127],
            [4096, 18.418],
            [8192, 18.654],
            [16384, 19.477],
            [32768, 34.951],
            [65536, 50.51],
            [131072, 80.566],
            [262144, 140.402],
            [524288, 263.444],
            [1048576, 500.134]
          ],
          "fixed_us": 15.970513615852662,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.21766142550317324,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.08563824547342337,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2052103607390592
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.185],
            [2048, 18.586],
            [4096, 18.765],
            [8192, 19.164],
            [16384, 33.888],
            [32768, 63.387],
            [65536, 93.17],
            [131072, 151.468],
            [262144, 273.298],
            [524288, 506.436],
            [1048576, 954.294]
          ],
          "fixed_us": 15.56774317607338,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.24178357454694577,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.12252413303020923,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.21519430727479386
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.892],
            [2048, 18.752],
            [4096, 19.116],
            [8192, 33.514],
            [16384, 62.82],
            [32768, 92.224],
            [65536, 150.733],
            [131072, 270.9],
            [262144, 499.472],
            [524288, 951.74],
            [1048576, 1850.426]
          ],
          "fixed_us": 15.292383488198771,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.2534177192097732,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.12328341585887843,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.20932914900816127
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 21.228],
            [2048, 21.679],
            [4096, 23.313],
            [8192, 29.382],
            [16384, 36.248],
            [32768, 49.549],
            [65536, 76.723],
            [131072, 136.62],
            [262144, 265.668],
            [524288, 523.142],
            [1048576, 1053.224]
          ],
          "fixed_us": 20.065433268119023,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.05839472496577103,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.035476488475975725,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4049009547100306
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 21.072],
            [2048, 22.616],
            [4096, 28.537],
            [8192, 35.253],
            [16384, 48.713],
            [32768, 76.943],
            [65536, 131.085],
            [131072, 253.954],
            [262144, 513.74],
            [524288, 1003.548],
            [1048576, 2039.188]
          ],
          "fixed_us": 19.3962078806764,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.06406875420998248,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.035647398527773544,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.3976524925985978
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 22.542],
            [2048, 27.278],
            [4096, 33.649],
            [8192, 46.381],
            [16384, 75.453],
            [32768, 132.074],
            [65536, 253.379],
            [131072, 514.254],
            [262144, 970.174],
            [524288, 1952.956],
            [1048576, 3935.782]
          ],
          "fixed_us": 18.770237975083166,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.043926273996962806,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.02933951637512395,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.3927070774803696
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.874],
            [2048, 18.882],
            [4096, 19.164],
            [8192, 19.496],
            [16384, 20.579],
            [32768, 36.6],
            [65536, 52.901],
            [131072, 86.152],
            [262144, 152.182],
            [524288, 282.3],
            [1048576, 540.74]
          ],
          "fixed_us": 16.597646210135608,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.21196708961741928,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.082930618893982,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.44207972714568583
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.915],
            [2048, 19.45],
            [4096, 19.538],
            [8192, 20.018],
            [16384, 35.596],
            [32768, 66.679],
            [65536, 99.565],
            [131072, 166.051],
            [262144, 299.364],
            [524288, 560.114],
            [1048576, 1078.334]
          ],
          "fixed_us": 15.922244839058303,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.244196374929198,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.11782183389845519,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4760100540844538
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 19.631],
            [2048, 19.733],
            [4096, 19.987],
            [8192, 35.687],
            [16384, 66.58],
            [32768, 100.205],
            [65536, 166.932],
            [131072, 302.242],
            [262144, 562.022],
            [524288, 1078.386],
            [1048576, 2114.55]
          ],
          "fixed_us": 15.514865881447234,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.23168352397500303,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.11748798359280936,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4720622409208359
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 22.711],
            [2048, 22.885],
            [4096, 23.784],
            [8192, 27.983],
            [16384, 38.541],
            [32768, 59.257],
            [65536, 99.833],
            [131072, 180.995],
            [262144, 341.988],
            [524288, 663.046],
            [1048576, 1308.114]
          ],
          "fixed_us": 19.749368013626665,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.0755965258084581,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.03463811779474154,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.0550980465066042
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 22.637],
            [2048, 23.794],
            [4096, 27.661],
            [8192, 38.372],
            [16384, 59.082],
            [32768, 100.199],
            [65536, 182.118],
            [131072, 346.339],
            [262144, 675.668],
            [524288, 1334.926],
            [1048576, 2650.438]
          ],
          "fixed_us": 18.790863938165348,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.05734805521562014,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.023935081359288176,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.079761499374328
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 23.971],
            [2048, 27.326],
            [4096, 37.883],
            [8192, 58.637],
            [16384, 99.988],
            [32768, 182.162],
            [65536, 346.438],
            [131072, 673.392],
            [262144, 1330.21],
            [524288, 2644.652],
            [1048576, 5272.1]
          ],
          "fixed_us": 17.9569418835579,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.03744971832359689,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.015551516259283957,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.0843217007738384
        }
      ],
      "provisional": false,
      "reps": 30,
      "source": "mlaspec calibrate on NVIDIA H200, 2026-12-02T04:32:42Z (full grid, 30 reps)",
      "sweep_check": [
        {
          "config": "B=1,H=16,q=8,S=4096,kv=bf16",
          "cuda_fold_us": 21.28800004720688,
          "cuda_rowwise_us": 19.011874683201313,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=bf16",
          "cuda_fold_us": 29.410909522663463,
          "cuda_rowwise_us": 62.68399953842163,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=bf16",
          "cuda_fold_us": 50.4720002412796,
          "cuda_rowwise_us": 149.36000108718872,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=bf16",
          "cuda_fold_us": 139.6920010447502,
          "cuda_rowwise_us": 503.51399183273315,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=bf16",
          "cuda_fold_us": 536.300003528595,
          "cuda_rowwise_us": 1849.7459888458252,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=4096,kv=fp8",
          "cuda_fold_us": 22.18249998986721,
          "cuda_rowwise_us": 19.933249801397324,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=fp8",
          "cuda_fold_us": 28.0627269636501,
          "cuda_rowwise_us": 66.33654507723722,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=fp8",
          "cuda_fold_us": 59.17963656512174,
          "cuda_rowwise_us": 166.42327200282705,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=fp8",
          "cuda_fold_us": 184.42799896001816,
          "cuda_rowwise_us": 561.6739988327026,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=fp8",
          "cuda_fold_us": 675.0479936599731,
          "cuda_rowwise_us": 2114.1780614852905,
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
