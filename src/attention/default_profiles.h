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
// rowwise runs at H = 16; the 64-row kernel with v28's half-slots otherwise), v24's combine and
// v31's fp8 fold without clusters; report in docs/perf/dispatch-calibration-2026-12-01h.md.
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
          "grid_loo_regret_max": 0.09053799064732604,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=2048",
          "model": "cuda_rowwise below S=1156, cuda_fold from there (cheaper backend changes again at S=7300, 19256)",
          "model_seq_len": 1156,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.11241130962281454,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=9752, cuda_fold from there",
          "model_seq_len": 9752,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.11350504672753914,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=4793, cuda_fold from there",
          "model_seq_len": 4793,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.036478083383642,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=4096",
          "model": "cuda_rowwise below S=3651, cuda_fold from there (cheaper backend changes again at S=739396, 1048577)",
          "model_seq_len": 3651,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.016577002400959717,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=2048",
          "model": "cuda_rowwise below S=1971, cuda_fold from there (cheaper backend changes again at S=474272, 755203)",
          "model_seq_len": 1971,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.009200231711484319,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=32768",
          "model": "cuda_rowwise below S=20215, cuda_fold from there",
          "model_seq_len": 20215,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.09688757208581111,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=32768",
          "model": "cuda_rowwise below S=18735, cuda_fold from there",
          "model_seq_len": 18735,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.16523164019471737,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=10093, cuda_fold from there",
          "model_seq_len": 10093,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.15612974208188324,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=5013, cuda_fold from there",
          "model_seq_len": 5013,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.006462950580489402,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=3186, cuda_rowwise from there (cheaper backend changes again at S=5338, 32545, 33022, 122841, 229235)",
          "model_seq_len": 3186,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.001023474862233975,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=8292, cuda_rowwise from there (cheaper backend changes again at S=59583, 71841, 221237, 477966, 574278, 1048577)",
          "model_seq_len": 8292,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.0012052421788095735,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=7719, cuda_rowwise from there (cheaper backend changes again at S=10503, 29112, 38198, 137265, 343036, 940917)",
          "model_seq_len": 7719,
          "q_len": 8
        }
      ],
      "grid_loo_regret_max": 0.16523164019471737,
      "grid_regret_max": 0.0,
      "measured_at": "2026-12-01T19:05:15Z",
      "models": [
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 17.929],
            [2048, 17.927],
            [4096, 18.163],
            [8192, 18.611],
            [16384, 21.177],
            [32768, 26.353],
            [65536, 36.131],
            [131072, 54.428],
            [262144, 90.124],
            [524288, 163.256],
            [1048576, 300.016]
          ],
          "fixed_us": 17.11850253474357,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.04176504638954803,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.021205996978621116,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.24052531486229545
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 20.125],
            [2048, 20.321],
            [4096, 20.381],
            [8192, 20.983],
            [16384, 24.359],
            [32768, 32.108],
            [65536, 41.37],
            [131072, 59.516],
            [262144, 95.74],
            [524288, 173.55],
            [1048576, 315.116]
          ],
          "fixed_us": 19.725910950308606,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.0849961572447101,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.03893259411184146,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2557092156868284
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 20.892],
            [2048, 20.782],
            [4096, 21.105],
            [8192, 23.208],
            [16384, 28.985],
            [32768, 37.228],
            [65536, 52.715],
            [131072, 82.264],
            [262144, 143.526],
            [524288, 284.428],
            [1048576, 534.486]
          ],
          "fixed_us": 19.87034766299971,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.037178389498548126,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.026934856769023775,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4258221815239621
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.214],
            [2048, 21.515],
            [4096, 23.057],
            [8192, 28.061],
            [16384, 35.266],
            [32768, 49.762],
            [65536, 78.186],
            [131072, 140.446],
            [262144, 268.7],
            [524288, 518.074],
            [1048576, 1120.75]
          ],
          "fixed_us": 19.616235076560145,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.09057626777316408,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.03547229688335116,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.8275280128894376
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 23.282],
            [2048, 22.789],
            [4096, 27.253],
            [8192, 34.513],
            [16384, 48.756],
            [32768, 77.489],
            [65536, 137.17],
            [131072, 260.124],
            [262144, 505.674],
            [524288, 1038.472],
            [1048576, 2037.236]
          ],
          "fixed_us": 19.744863316233047,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.07056355824610205,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.03406806218772647,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.6056008333052099
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 23.403],
            [2048, 27.103],
            [4096, 34.196],
            [8192, 48.083],
            [16384, 77.064],
            [32768, 136.828],
            [65536, 256.139],
            [131072, 519.46],
            [262144, 977.444],
            [524288, 1987.968],
            [1048576, 3859.566]
          ],
          "fixed_us": 19.3024022715061,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.039364450640943294,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.02006636334455985,
          "us_per_gflop": 0.0,
          "us_per_mb": 3.1769893774400857
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 24.437],
            [2048, 22.485],
            [4096, 22.425],
            [8192, 22.305],
            [16384, 23.433],
            [32768, 26.199],
            [65536, 40.211],
            [131072, 67.384],
            [262144, 120.932],
            [524288, 223.716],
            [1048576, 421.52]
          ],
          "fixed_us": 19.745186733366378,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.204391912152043,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.1000576856882667,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.6256403920931383
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 23.606],
            [2048, 24.147],
            [4096, 24.321],
            [8192, 24.226],
            [16384, 26.221],
            [32768, 31.373],
            [65536, 44.916],
            [131072, 71.328],
            [262144, 123.884],
            [524288, 226.578],
            [1048576, 427.592]
          ],
          "fixed_us": 21.79444755824811,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.0889777130902234,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.0487058136202775,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.6554150827405675
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 24.02],
            [2048, 24.234],
            [4096, 24.155],
            [8192, 26.28],
            [16384, 30.911],
            [32768, 43.981],
            [65536, 69.764],
            [131072, 121.286],
            [262144, 222.14],
            [524288, 418.838],
            [1048576, 811.778]
          ],
          "fixed_us": 21.361861237641342,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.0856388782612092,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.04462271706394653,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.292316583921848
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 24.562],
            [2048, 24.688],
            [4096, 26.226],
            [8192, 30.364],
            [16384, 43.348],
            [32768, 69.071],
            [65536, 118.607],
            [131072, 218.254],
            [262144, 413.79],
            [524288, 801.154],
            [1048576, 1574.34]
          ],
          "fixed_us": 20.946044648863662,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.08717261417204547,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.04169521718865194,
          "us_per_gflop": 0.0,
          "us_per_mb": 2.556791692572456
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 24.446],
            [2048, 26.048],
            [4096, 30.022],
            [8192, 42.859],
            [16384, 68.095],
            [32768, 118.342],
            [65536, 217.657],
            [131072, 417.827],
            [262144, 814.636],
            [524288, 1606.788],
            [1048576, 3188.642]
          ],
          "fixed_us": 19.715897669524423,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.06780181134076813,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.031155515769188995,
          "us_per_gflop": 0.0,
          "us_per_mb": 5.208790582744761
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 26.348],
            [2048, 29.754],
            [4096, 42.62],
            [8192, 68.002],
            [16384, 117.971],
            [32768, 216.607],
            [65536, 412.168],
            [131072, 802.79],
            [262144, 1582.264],
            [524288, 3139.35],
            [1048576, 6254.58]
          ],
          "fixed_us": 18.95128406813133,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.04876946480214761,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.021842199810348576,
          "us_per_gflop": 0.0,
          "us_per_mb": 10.361364454058293
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 17.913],
            [2048, 18.003],
            [4096, 18.266],
            [8192, 18.59],
            [16384, 19.419],
            [32768, 35.056],
            [65536, 50.675],
            [131072, 81.254],
            [262144, 141.386],
            [524288, 266.85],
            [1048576, 497.188]
          ],
          "fixed_us": 15.861290069337441,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.21831588068954644,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.08657208471163672,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.20656368539098988
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.103],
            [2048, 18.369],
            [4096, 18.533],
            [8192, 18.863],
            [16384, 33.449],
            [32768, 63.162],
            [65536, 92.747],
            [131072, 151.098],
            [262144, 272.064],
            [524288, 507.258],
            [1048576, 952.568]
          ],
          "fixed_us": 15.335650531703923,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.2437827692724912,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.1243556483393137,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2147666527205552
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.628],
            [2048, 18.627],
            [4096, 18.954],
            [8192, 33.505],
            [16384, 62.651],
            [32768, 92.372],
            [65536, 151.035],
            [131072, 273.18],
            [262144, 497.55],
            [524288, 948.57],
            [1048576, 1847.342]
          ],
          "fixed_us": 15.1200793395092,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.25377309968757056,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.12465435236812875,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.20948856162459908
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 21.165],
            [2048, 21.236],
            [4096, 23.117],
            [8192, 28.421],
            [16384, 35.816],
            [32768, 50.288],
            [65536, 79.374],
            [131072, 145.828],
            [262144, 279.418],
            [524288, 536.666],
            [1048576, 1081.306]
          ],
          "fixed_us": 19.561107875272246,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.05173436988223523,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.026007464246588195,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.42332328997332047
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 20.945],
            [2048, 22.932],
            [4096, 27.899],
            [8192, 35.255],
            [16384, 49.679],
            [32768, 78.727],
            [65536, 139.432],
            [131072, 268.408],
            [262144, 557.306],
            [524288, 1021.538],
            [1048576, 2067.582]
          ],
          "fixed_us": 19.10999095123513,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.06359278512753708,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.028964750834290048,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.41620214823312957
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 23.115],
            [2048, 26.842],
            [4096, 33.898],
            [8192, 47.361],
            [16384, 76.362],
            [32768, 139.737],
            [65536, 269.045],
            [131072, 520.45],
            [262144, 1006.162],
            [524288, 2025.834],
            [1048576, 4085.298]
          ],
          "fixed_us": 18.667193706068677,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.05136364136120841,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.026270966026973503,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4080722283281988
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 19.867],
            [2048, 20.268],
            [4096, 20.182],
            [8192, 20.355],
            [16384, 21.363],
            [32768, 38.527],
            [65536, 57.246],
            [131072, 94.954],
            [262144, 168.466],
            [524288, 311.566],
            [1048576, 594.018]
          ],
          "fixed_us": 17.25247158767498,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.23802069788204472,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.09227552080211911,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.487193919199552
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 20.146],
            [2048, 20.409],
            [4096, 20.497],
            [8192, 20.791],
            [16384, 37.403],
            [32768, 70.608],
            [65536, 108.404],
            [131072, 182.402],
            [262144, 328.708],
            [524288, 613.082],
            [1048576, 1179.2]
          ],
          "fixed_us": 16.455300108714074,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.26417713142072463,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.12211543291426323,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.5206836731207147
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 20.458],
            [2048, 20.85],
            [4096, 20.893],
            [8192, 37.411],
            [16384, 70.393],
            [32768, 108.269],
            [65536, 182.597],
            [131072, 327.571],
            [262144, 614.06],
            [524288, 1179.768],
            [1048576, 2312.506]
          ],
          "fixed_us": 15.956804954618782,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.22937067531750244,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.11647530241865076,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.5154229918704647
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 24.831],
            [2048, 24.756],
            [4096, 26.185],
            [8192, 30.441],
            [16384, 43.664],
            [32768, 69.066],
            [65536, 119.373],
            [131072, 218.109],
            [262144, 413.856],
            [524288, 801.796],
            [1048576, 1574.386]
          ],
          "fixed_us": 21.047496469326298,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.09160201068069118,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.0428972904346574,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.2795241594170101
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 24.514],
            [2048, 26.262],
            [4096, 30.069],
            [8192, 42.86],
            [16384, 68.005],
            [32768, 118.226],
            [65536, 217.691],
            [131072, 417.4],
            [262144, 814.906],
            [524288, 1606.706],
            [1048576, 3189.718]
          ],
          "fixed_us": 19.81258823759292,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.0672445554813148,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.0315872673012516,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.3010506324387865
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 26.457],
            [2048, 29.865],
            [4096, 42.928],
            [8192, 67.956],
            [16384, 118.114],
            [32768, 216.553],
            [65536, 412.53],
            [131072, 802.811],
            [262144, 1581.684],
            [524288, 3141.166],
            [1048576, 6253.91]
          ],
          "fixed_us": 19.084671151109294,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.048270369724975115,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.021413653483893694,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.29512324021184
        }
      ],
      "provisional": false,
      "reps": 30,
      "source": "mlaspec calibrate on NVIDIA H200, 2026-12-01T19:05:12Z (full grid, 30 reps)",
      "sweep_check": [
        {
          "config": "B=1,H=16,q=8,S=4096,kv=bf16",
          "cuda_fold_us": 21.111249923706055,
          "cuda_rowwise_us": 18.90812534838915,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=bf16",
          "cuda_fold_us": 28.966909105127506,
          "cuda_rowwise_us": 62.58218125863509,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=bf16",
          "cuda_fold_us": 52.08960175514221,
          "cuda_rowwise_us": 150.25599598884583,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=bf16",
          "cuda_fold_us": 143.18399876356125,
          "cuda_rowwise_us": 494.7520047426224,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=bf16",
          "cuda_fold_us": 556.881994009018,
          "cuda_rowwise_us": 1845.438003540039,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=4096,kv=fp8",
          "cuda_fold_us": 24.271625094115734,
          "cuda_rowwise_us": 20.878625102341175,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=fp8",
          "cuda_fold_us": 30.777272852984343,
          "cuda_rowwise_us": 70.05854628302833,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=fp8",
          "cuda_fold_us": 68.97381760857323,
          "cuda_rowwise_us": 181.62254853682083,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=fp8",
          "cuda_fold_us": 221.7560037970543,
          "cuda_rowwise_us": 614.22199010849,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=fp8",
          "cuda_fold_us": 809.5220029354095,
          "cuda_rowwise_us": 2309.0360164642334,
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
