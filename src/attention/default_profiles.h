// Built-in cost-model profiles, used when no profile file has an entry for this machine
// (docs/dispatch.md). Same JSON format as the file `mlaspec calibrate` writes.
//
// GPU profiles (kBuiltinGpuProfileJson): the whole file `mlaspec calibrate --out FILE` writes,
// pasted unchanged between the raw-string markers (write to a fresh FILE so it holds only the
// calibrated GPU). This string is the only place to edit; nothing else needs to change.
//
// NVIDIA H200 — MEASURED 2026-12-02 on the H200 by `scripts/gpu-check.sh` (`mlaspec calibrate`,
// full grid: B=1, H 16|128, q_len 2|4|8, S = 1k, 2k, ..., 1M, bf16 and fp8, median of 30 CUDA-graph
// replays per point) on the kernels of v40 (the narrow kernel for row tiles of <= 16 rows, which
// rowwise runs at H = 16; the 64-row kernel with v28's half-slots otherwise; v31's fp8 fold
// without clusters; the deterministic merge tree of v34; fp8 in f16 since v37, its raw codes in
// the half freed first since v40); report in docs/perf/dispatch-calibration-2026-12-02b.md.
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
          "grid_loo_regret_max": 0.12326593874907887,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=1024",
          "model": "cuda_rowwise below S=1024, cuda_fold from there (cheaper backend changes again at S=1174, 20292)",
          "model_seq_len": 1024,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.15599550152560004,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=10292, cuda_fold from there",
          "model_seq_len": 10292,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.1675583826406566,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=5098, cuda_fold from there",
          "model_seq_len": 5098,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.04823082386416777,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=1024",
          "model": "cuda_rowwise below S=1024, cuda_fold from there (cheaper backend changes again at S=1118, 4758, 805556, 1048577)",
          "model_seq_len": 1024,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.0023424546835899562,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=4096",
          "model": "cuda_rowwise below S=2915, cuda_fold from there (cheaper backend changes again at S=62926, 70723)",
          "model_seq_len": 2915,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.0,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=13925, cuda_fold from there",
          "model_seq_len": 13925,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.05419795273326056,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=32768",
          "model": "cuda_rowwise below S=17748, cuda_fold from there",
          "model_seq_len": 17748,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.13726796325565838,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=9735, cuda_fold from there",
          "model_seq_len": 9735,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.14528767531964126,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=4918, cuda_fold from there",
          "model_seq_len": 4918,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.0029237600889142623,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=26617, cuda_rowwise from there (cheaper backend changes again at S=49047, 82287, 421142, 757362)",
          "model_seq_len": 26617,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.0025636269440614257,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=57269, cuda_rowwise from there (cheaper backend changes again at S=74196, 233692, 935301, 1048577)",
          "model_seq_len": 57269,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.0014599962610559736,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=10026, cuda_rowwise from there (cheaper backend changes again at S=26550, 49465, 250855, 375423)",
          "model_seq_len": 10026,
          "q_len": 8
        }
      ],
      "grid_loo_regret_max": 0.1675583826406566,
      "grid_regret_max": 0.0,
      "measured_at": "2026-12-02T01:37:43Z",
      "models": [
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 17.896],
            [2048, 18.402],
            [4096, 18.686],
            [8192, 19.27],
            [16384, 21.907],
            [32768, 26.865],
            [65536, 36.661],
            [131072, 54.156],
            [262144, 89.924],
            [524288, 163.418],
            [1048576, 316.608]
          ],
          "fixed_us": 17.508230998206706,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.027986391855057136,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.01387271883370399,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.24384967050533146
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 20.413],
            [2048, 20.969],
            [4096, 21.318],
            [8192, 22.093],
            [16384, 25.115],
            [32768, 32.94],
            [65536, 42.304],
            [131072, 60.284],
            [262144, 97.07],
            [524288, 174.218],
            [1048576, 332.11]
          ],
          "fixed_us": 20.40459893363241,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.08155715130746333,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.03333452450621599,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.26089814865299565
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.289],
            [2048, 21.349],
            [4096, 22.259],
            [8192, 23.996],
            [16384, 29.668],
            [32768, 37.957],
            [65536, 53.438],
            [131072, 83.136],
            [262144, 145.426],
            [524288, 286.616],
            [1048576, 573.122]
          ],
          "fixed_us": 20.47460883358797,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.046649712268016175,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.027844464075293254,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4353717050216419
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.814],
            [2048, 22.631],
            [4096, 23.914],
            [8192, 28.582],
            [16384, 35.776],
            [32768, 50.329],
            [65536, 79.157],
            [131072, 141.97],
            [262144, 273.184],
            [524288, 517.76],
            [1048576, 1122.864]
          ],
          "fixed_us": 20.359117993658522,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.08873037192981348,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.034335635207081786,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.8302204715743505
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.316],
            [2048, 23.756],
            [4096, 27.328],
            [8192, 34.621],
            [16384, 48.733],
            [32768, 77.465],
            [65536, 141.04],
            [131072, 264.036],
            [262144, 511.136],
            [524288, 1039.164],
            [1048576, 2048.286]
          ],
          "fixed_us": 19.72424351851724,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.04560729716087675,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.02511621796989314,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.623211949246708
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 23.732],
            [2048, 27.661],
            [4096, 34.691],
            [8192, 48.712],
            [16384, 78.28],
            [32768, 138.53],
            [65536, 249.765],
            [131072, 526.922],
            [262144, 987.67],
            [524288, 1989.77],
            [1048576, 3916.114]
          ],
          "fixed_us": 19.719925136831055,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.04798002299933268,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.023875978981951852,
          "us_per_gflop": 0.0,
          "us_per_mb": 3.191632253037714
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.502],
            [2048, 20.849],
            [4096, 20.865],
            [8192, 20.811],
            [16384, 21.774],
            [32768, 24.457],
            [65536, 36.67],
            [131072, 59.728],
            [262144, 106.408],
            [524288, 197.318],
            [1048576, 371.69]
          ],
          "fixed_us": 18.402120820319702,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.1785974810319828,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.08514946853333927,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.5522502083051506
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.689],
            [2048, 22.521],
            [4096, 22.657],
            [8192, 22.68],
            [16384, 24.098],
            [32768, 28.634],
            [65536, 40.41],
            [131072, 62.773],
            [262144, 109.65],
            [524288, 200.112],
            [1048576, 376.536]
          ],
          "fixed_us": 20.31167770009974,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.08714919255787179,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.04796225387719586,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.5731556473753049
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.441],
            [2048, 22.683],
            [4096, 22.803],
            [8192, 24.381],
            [16384, 28.504],
            [32768, 39.963],
            [65536, 61.94],
            [131072, 105.138],
            [262144, 190.544],
            [524288, 356.582],
            [1048576, 692.164]
          ],
          "fixed_us": 20.287559871397132,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.07664033697664996,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.03859662938262444,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.1021706971984417
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 23.379],
            [2048, 23.498],
            [4096, 24.392],
            [8192, 28.214],
            [16384, 39.551],
            [32768, 61.401],
            [65536, 103.084],
            [131072, 186.675],
            [262144, 350.522],
            [524288, 677.962],
            [1048576, 1333.506]
          ],
          "fixed_us": 20.216823728894973,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.08062834102706518,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.038651726662591604,
          "us_per_gflop": 0.0,
          "us_per_mb": 2.1659194253114475
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 23.107],
            [2048, 24.028],
            [4096, 27.895],
            [8192, 39.111],
            [16384, 60.587],
            [32768, 102.923],
            [65536, 186.908],
            [131072, 353.928],
            [262144, 690.268],
            [524288, 1360.146],
            [1048576, 2672.954]
          ],
          "fixed_us": 19.040074852287717,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.06342494636556928,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.02661948993929868,
          "us_per_gflop": 0.0,
          "us_per_mb": 4.410806041901531
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 24.489],
            [2048, 27.455],
            [4096, 38.605],
            [8192, 60.226],
            [16384, 102.639],
            [32768, 186.241],
            [65536, 353.658],
            [131072, 685.968],
            [262144, 1346.802],
            [524288, 2675.646],
            [1048576, 5326.376]
          ],
          "fixed_us": 18.26037810093561,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.04443715869389431,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.019399347307361727,
          "us_per_gflop": 0.0,
          "us_per_mb": 8.828381558395506
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 17.967],
            [2048, 18.106],
            [4096, 18.419],
            [8192, 18.728],
            [16384, 19.503],
            [32768, 34.858],
            [65536, 50.333],
            [131072, 80.584],
            [262144, 143.18],
            [524288, 269.97],
            [1048576, 493.042]
          ],
          "fixed_us": 15.948855107091147,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.21743330678962014,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.08509918686451824,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.20647561551822083
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.174],
            [2048, 18.565],
            [4096, 18.758],
            [8192, 19.111],
            [16384, 33.752],
            [32768, 63.293],
            [65536, 92.946],
            [131072, 152.434],
            [262144, 272.724],
            [524288, 502.372],
            [1048576, 955.462]
          ],
          "fixed_us": 15.543952203026068,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.2418411619239148,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.1229673821660694,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.21485662683269613
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.678],
            [2048, 18.704],
            [4096, 19.064],
            [8192, 33.575],
            [16384, 62.635],
            [32768, 92.188],
            [65536, 150.592],
            [131072, 269.516],
            [262144, 513.33],
            [524288, 947.536],
            [1048576, 1847.446]
          ],
          "fixed_us": 15.18062016825688,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.2511999048033815,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.12257397981268027,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.21007413530293917
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 21.891],
            [2048, 22.086],
            [4096, 23.833],
            [8192, 28.936],
            [16384, 36.287],
            [32768, 51.032],
            [65536, 81.902],
            [131072, 148.476],
            [262144, 279.0],
            [524288, 542.732],
            [1048576, 1090.86]
          ],
          "fixed_us": 20.23506960557058,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.03528796676165147,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.021723936514615617,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.42722069982873884
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 21.494],
            [2048, 23.385],
            [4096, 27.746],
            [8192, 35.276],
            [16384, 49.498],
            [32768, 80.433],
            [65536, 140.71],
            [131072, 269.094],
            [262144, 558.822],
            [524288, 1050.886],
            [1048576, 2107.304]
          ],
          "fixed_us": 19.322064140627003,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.05573386122122481,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.027364008593835715,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4208374633702015
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 23.567],
            [2048, 27.16],
            [4096, 34.234],
            [8192, 48.142],
            [16384, 78.563],
            [32768, 140.729],
            [65536, 277.509],
            [131072, 537.554],
            [262144, 1003.988],
            [524288, 2070.788],
            [1048576, 4129.336]
          ],
          "fixed_us": 18.94032189496924,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.04478790291527668,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.02789646466682895,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4153547856212385
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.741],
            [2048, 19.061],
            [4096, 19.143],
            [8192, 19.443],
            [16384, 20.655],
            [32768, 36.659],
            [65536, 53.148],
            [131072, 86.739],
            [262144, 153.234],
            [524288, 285.51],
            [1048576, 541.248]
          ],
          "fixed_us": 16.587296909542147,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.20984477725081607,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.08284038250916152,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.44515065336479165
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 19.13],
            [2048, 19.41],
            [4096, 19.5],
            [8192, 19.943],
            [16384, 35.527],
            [32768, 66.787],
            [65536, 100.136],
            [131072, 167.838],
            [262144, 301.644],
            [524288, 562.496],
            [1048576, 1088.158]
          ],
          "fixed_us": 15.881205272498006,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.24993266362701005,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.11955415393882181,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4792684784868426
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 19.562],
            [2048, 19.715],
            [4096, 19.911],
            [8192, 35.607],
            [16384, 66.548],
            [32768, 100.183],
            [65536, 168.083],
            [131072, 303.317],
            [262144, 562.806],
            [524288, 1079.546],
            [1048576, 2114.956]
          ],
          "fixed_us": 15.441427547908207,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.23127704225984302,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.1180436078219476,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.47306576419229757
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 23.622],
            [2048, 23.609],
            [4096, 24.456],
            [8192, 28.246],
            [16384, 39.667],
            [32768, 61.324],
            [65536, 103.177],
            [131072, 186.331],
            [262144, 350.162],
            [524288, 678.284],
            [1048576, 1332.946]
          ],
          "fixed_us": 20.330986896136384,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.08532689405879623,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.040058706342981254,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.0814787106235768
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 23.274],
            [2048, 24.194],
            [4096, 27.91],
            [8192, 39.178],
            [16384, 60.621],
            [32768, 103.117],
            [65536, 186.823],
            [131072, 354.667],
            [262144, 689.982],
            [524288, 1356.668],
            [1048576, 2674.306]
          ],
          "fixed_us": 19.15761483477217,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.06513312323662301,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.027667956143804674,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.1020278911443786
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 24.678],
            [2048, 27.616],
            [4096, 38.708],
            [8192, 60.262],
            [16384, 102.49],
            [32768, 186.359],
            [65536, 353.505],
            [131072, 682.642],
            [262144, 1347.246],
            [524288, 2674.826],
            [1048576, 5325.336]
          ],
          "fixed_us": 18.42846936530765,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.04384988359061759,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.01939120993232945,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.1018359157879687
        }
      ],
      "provisional": false,
      "reps": 30,
      "source": "mlaspec calibrate on NVIDIA H200, 2026-12-02T01:37:39Z (full grid, 30 reps)",
      "sweep_check": [
        {
          "config": "B=1,H=16,q=8,S=4096,kv=bf16",
          "cuda_fold_us": 22.151625715196133,
          "cuda_rowwise_us": 19.06187552958727,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=bf16",
          "cuda_fold_us": 29.4792733409188,
          "cuda_rowwise_us": 62.72399967366999,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=bf16",
          "cuda_fold_us": 52.97279953956604,
          "cuda_rowwise_us": 150.41120052337646,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=bf16",
          "cuda_fold_us": 144.9420005083084,
          "cuda_rowwise_us": 500.0540018081665,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=bf16",
          "cuda_fold_us": 568.2739913463593,
          "cuda_rowwise_us": 1849.4439721107483,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=4096,kv=fp8",
          "cuda_fold_us": 22.932499647140503,
          "cuda_rowwise_us": 19.867250695824623,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=fp8",
          "cuda_fold_us": 28.446545655077152,
          "cuda_rowwise_us": 66.26890735192733,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=fp8",
          "cuda_fold_us": 61.35854395953092,
          "cuda_rowwise_us": 166.70981320467862,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=fp8",
          "cuda_fold_us": 187.89199739694595,
          "cuda_rowwise_us": 562.1860027313232,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=fp8",
          "cuda_fold_us": 690.993994474411,
          "cuda_rowwise_us": 2109.231948852539,
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
