// Built-in cost-model profiles, used when no profile file has an entry for this machine
// (docs/dispatch.md). Same JSON format as the file `mlaspec calibrate` writes.
//
// GPU profiles (kBuiltinGpuProfileJson): the whole file `mlaspec calibrate --out FILE` writes,
// pasted unchanged between the raw-string markers (write to a fresh FILE so it holds only the
// calibrated GPU). This string is the only place to edit; nothing else needs to change.
//
// NVIDIA H200 — MEASURED 2026-12-01 on the H200 by `scripts/gpu-check.sh` (`mlaspec calibrate`,
// full grid: B=1, H 16|128, q_len 2|4|8, S = 1k, 2k, ..., 1M, bf16 and fp8, median of 30 CUDA-graph
// replays per point) on the kernel of v20 (bf16 stage halves freed in FlashMLA's seesaw order,
// one-tile splits freeing stage 1 first, L2 evict_first KV copies); report in
// docs/perf/dispatch-calibration-2026-12-01d.md. Recalibrate whenever the kernels change.
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
          "grid_loo_regret_max": 0.03917979778288072,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=32768",
          "model": "cuda_rowwise below S=17807, cuda_fold from there",
          "model_seq_len": 17807,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.12374105668806634,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=10002, cuda_fold from there",
          "model_seq_len": 10002,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.12517092956062137,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=4885, cuda_fold from there",
          "model_seq_len": 4885,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.060021417451203485,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=5068, cuda_fold from there (cheaper backend changes again at S=200670, 369637, 602890, 1048577)",
          "model_seq_len": 5068,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.06115286351518012,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=4096",
          "model": "cuda_rowwise below S=3037, cuda_fold from there (cheaper backend changes again at S=82357, 142543, 421568, 1048577)",
          "model_seq_len": 3037,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.011460230049799458,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=12275, cuda_fold from there (cheaper backend changes again at S=283736, 860624)",
          "model_seq_len": 12275,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.004176375729304294,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=32768",
          "model": "cuda_rowwise below S=16489, cuda_fold from there",
          "model_seq_len": 16489,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.064536886705725,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=8944, cuda_fold from there",
          "model_seq_len": 8944,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.12620140669115965,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=4771, cuda_fold from there",
          "model_seq_len": 4771,
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
          "model": "cuda_fold below S=326, cuda_rowwise from there",
          "model_seq_len": 326,
          "q_len": 8
        }
      ],
      "grid_loo_regret_max": 0.12620140669115965,
      "grid_regret_max": 0.0,
      "measured_at": "2026-12-01T13:29:49Z",
      "models": [
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 17.109],
            [2048, 17.558],
            [4096, 17.936],
            [8192, 18.949],
            [16384, 22.096],
            [32768, 28.118],
            [65536, 38.48],
            [131072, 56.02],
            [262144, 91.37],
            [524288, 165.126],
            [1048576, 325.272]
          ],
          "fixed_us": 17.053766180545523,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.05786550593295148,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.029249125206967378,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.25430742811761
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 20.079],
            [2048, 19.716],
            [4096, 20.296],
            [8192, 21.463],
            [16384, 25.051],
            [32768, 32.51],
            [65536, 42.518],
            [131072, 60.296],
            [262144, 97.066],
            [524288, 176.33],
            [1048576, 344.744]
          ],
          "fixed_us": 19.63983181145387,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.08459384794855218,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.03843211643556792,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2680846045799789
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 20.338],
            [2048, 20.296],
            [4096, 21.086],
            [8192, 22.622],
            [16384, 28.445],
            [32768, 37.058],
            [65536, 53.16],
            [131072, 83.628],
            [262144, 149.948],
            [524288, 288.674],
            [1048576, 633.612]
          ],
          "fixed_us": 19.174099434013556,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.10376318022295039,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.04133894123862161,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.45423067600782785
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.652],
            [2048, 22.344],
            [4096, 23.578],
            [8192, 27.603],
            [16384, 35.281],
            [32768, 49.785],
            [65536, 79.219],
            [131072, 142.968],
            [262144, 277.996],
            [524288, 538.696],
            [1048576, 1139.716]
          ],
          "fixed_us": 19.852228867650087,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.08751954838554721,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.03798079869454888,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.8444954237598278
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 25.929],
            [2048, 25.842],
            [4096, 29.756],
            [8192, 37.144],
            [16384, 51.603],
            [32768, 79.633],
            [65536, 141.813],
            [131072, 267.81],
            [262144, 521.12],
            [524288, 1059.37],
            [1048576, 2079.466]
          ],
          "fixed_us": 22.297023766078084,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.0657534751037977,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.03483829297910164,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.6335844180339076
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 30.204],
            [2048, 33.596],
            [4096, 40.886],
            [8192, 55.089],
            [16384, 83.501],
            [32768, 142.337],
            [65536, 264.846],
            [131072, 529.486],
            [262144, 998.672],
            [524288, 2020.056],
            [1048576, 3960.092]
          ],
          "fixed_us": 25.74721471944448,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.03492409418471443,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.022264196498382603,
          "us_per_gflop": 0.0,
          "us_per_mb": 3.214416233953938
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.518],
            [2048, 21.788],
            [4096, 22.154],
            [8192, 22.77],
            [16384, 24.568],
            [32768, 28.482],
            [65536, 42.969],
            [131072, 69.566],
            [262144, 122.688],
            [524288, 223.712],
            [1048576, 423.668]
          ],
          "fixed_us": 19.794572032017882,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.1272131816249764,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.053728129710504925,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.652255984288478
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.707],
            [2048, 23.238],
            [4096, 23.692],
            [8192, 24.388],
            [16384, 27.018],
            [32768, 33.147],
            [65536, 47.041],
            [131072, 73.158],
            [262144, 125.804],
            [524288, 227.73],
            [1048576, 428.256]
          ],
          "fixed_us": 21.703574378953427,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.039009910670533054,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.023218739299662196,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.6747783386882225
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 23.771],
            [2048, 24.308],
            [4096, 24.989],
            [8192, 26.524],
            [16384, 30.985],
            [32768, 44.681],
            [65536, 71.316],
            [131072, 125.36],
            [262144, 230.588],
            [524288, 436.228],
            [1048576, 846.622]
          ],
          "fixed_us": 21.392875099735313,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.09940208086480906,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.04658239019568374,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.3427731839563846
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 25.551],
            [2048, 26.326],
            [4096, 27.263],
            [8192, 30.884],
            [16384, 44.425],
            [32768, 71.163],
            [65536, 123.736],
            [131072, 227.422],
            [262144, 431.706],
            [524288, 835.776],
            [1048576, 1642.93]
          ],
          "fixed_us": 21.729116989888457,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.10928904902576697,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.05042126462768409,
          "us_per_gflop": 0.0,
          "us_per_mb": 2.655517781746423
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 28.631],
            [2048, 29.398],
            [4096, 33.309],
            [8192, 46.546],
            [16384, 73.103],
            [32768, 125.531],
            [65536, 229.694],
            [131072, 436.898],
            [262144, 850.076],
            [524288, 1674.116],
            [1048576, 3323.988]
          ],
          "fixed_us": 22.934547308900676,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.08737642673868351,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.037289497511418024,
          "us_per_gflop": 0.0,
          "us_per_mb": 5.417267693676257
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 33.475],
            [2048, 37.038],
            [4096, 50.386],
            [8192, 76.88],
            [16384, 129.103],
            [32768, 231.881],
            [65536, 436.85],
            [131072, 844.33],
            [262144, 1660.742],
            [524288, 3288.622],
            [1048576, 6557.836]
          ],
          "fixed_us": 25.67948978812622,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.04195093527974203,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.01833982531824308,
          "us_per_gflop": 0.0,
          "us_per_mb": 10.83598261391179
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 16.18],
            [2048, 16.351],
            [4096, 16.522],
            [8192, 18.162],
            [16384, 21.263],
            [32768, 37.258],
            [65536, 52.493],
            [131072, 81.492],
            [262144, 141.872],
            [524288, 279.75],
            [1048576, 536.038]
          ],
          "fixed_us": 14.95645113254347,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.15177863208391718,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.06544257822401298,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.22049393945464071
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 16.379],
            [2048, 16.192],
            [4096, 17.282],
            [8192, 19.1],
            [16384, 33.429],
            [32768, 60.911],
            [65536, 89.074],
            [131072, 143.626],
            [262144, 273.254],
            [524288, 507.85],
            [1048576, 988.154]
          ],
          "fixed_us": 14.120277816635042,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.2300391023465127,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.1036938813103875,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.21708687768222865
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 16.456],
            [2048, 17.351],
            [4096, 18.74],
            [8192, 31.991],
            [16384, 58.204],
            [32768, 85.221],
            [65536, 138.541],
            [131072, 249.85],
            [262144, 481.206],
            [524288, 931.872],
            [1048576, 1826.504]
          ],
          "fixed_us": 14.050633426382234,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.23671198503711255,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.10250211701025974,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2011690244469319
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 21.215],
            [2048, 21.708],
            [4096, 23.392],
            [8192, 28.101],
            [16384, 36.133],
            [32768, 50.849],
            [65536, 81.39],
            [131072, 146.302],
            [262144, 274.004],
            [524288, 546.68],
            [1048576, 1075.182]
          ],
          "fixed_us": 19.768360842342776,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.03088134163564238,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.01871348214273731,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4247525175929101
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 24.106],
            [2048, 25.443],
            [4096, 30.11],
            [8192, 37.776],
            [16384, 52.197],
            [32768, 82.98],
            [65536, 142.384],
            [131072, 265.63],
            [262144, 552.988],
            [524288, 1030.898],
            [1048576, 2060.36]
          ],
          "fixed_us": 21.82826732675653,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.054257704426170394,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.023871475153570073,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4148780193380005
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 29.509],
            [2048, 33.256],
            [4096, 40.491],
            [8192, 54.505],
            [16384, 84.139],
            [32768, 145.364],
            [65536, 272.517],
            [131072, 544.986],
            [262144, 1000.14],
            [524288, 1997.168],
            [1048576, 3978.118]
          ],
          "fixed_us": 25.18436140166937,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.051217261258637126,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.02155604177215565,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4072064567641321
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 21.332],
            [2048, 21.595],
            [4096, 21.532],
            [8192, 22.54],
            [16384, 24.466],
            [32768, 44.674],
            [65536, 71.726],
            [131072, 124.288],
            [262144, 226.888],
            [524288, 422.848],
            [1048576, 814.192]
          ],
          "fixed_us": 17.942566430906282,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.24544423247721858,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.0945769986307481,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.6637943957080289
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 21.282],
            [2048, 21.128],
            [4096, 21.521],
            [8192, 22.909],
            [16384, 41.589],
            [32768, 78.737],
            [65536, 131.741],
            [131072, 232.637],
            [262144, 432.688],
            [524288, 822.182],
            [1048576, 1598.052]
          ],
          "fixed_us": 16.16770895279582,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.26835928275655596,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.11336824119933789,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.6829160782191485
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 21.1],
            [2048, 21.423],
            [4096, 22.189],
            [8192, 40.429],
            [16384, 76.083],
            [32768, 127.343],
            [65536, 227.189],
            [131072, 424.482],
            [262144, 808.654],
            [524288, 1569.538],
            [1048576, 3087.852]
          ],
          "fixed_us": 14.800407110085374,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.23650488467336372,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.10145911705742419,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.6694841181657906
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 25.027],
            [2048, 25.304],
            [4096, 26.786],
            [8192, 30.529],
            [16384, 43.457],
            [32768, 68.831],
            [65536, 119.014],
            [131072, 217.12],
            [262144, 411.802],
            [524288, 800.356],
            [1048576, 1570.196]
          ],
          "fixed_us": 21.399112809009786,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.09388790752007825,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.043591201865095276,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.2712056407233898
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 27.506],
            [2048, 28.951],
            [4096, 32.723],
            [8192, 45.62],
            [16384, 70.972],
            [32768, 121.045],
            [65536, 220.357],
            [131072, 419.208],
            [262144, 816.526],
            [524288, 1605.96],
            [1048576, 3184.206]
          ],
          "fixed_us": 22.572272900242492,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.0678128701414803,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.03073526944873805,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.300635005433183
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 33.17],
            [2048, 36.618],
            [4096, 49.49],
            [8192, 74.903],
            [16384, 124.787],
            [32768, 223.578],
            [65536, 418.861],
            [131072, 809.171],
            [262144, 1587.398],
            [524288, 3149.17],
            [1048576, 6262.254]
          ],
          "fixed_us": 25.767209406899212,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.0387963588376945,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.0175337528645493,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.296080523372463
        }
      ],
      "provisional": false,
      "reps": 30,
      "source": "mlaspec calibrate on NVIDIA H200, 2026-12-01T13:29:46Z (full grid, 30 reps)",
      "sweep_check": [
        {
          "config": "B=1,H=16,q=8,S=4096,kv=bf16",
          "cuda_fold_us": 21.105125546455383,
          "cuda_rowwise_us": 18.62099952995777,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=bf16",
          "cuda_fold_us": 28.392363678325307,
          "cuda_rowwise_us": 58.216000145131886,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=bf16",
          "cuda_fold_us": 52.88320183753967,
          "cuda_rowwise_us": 138.94399404525757,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=bf16",
          "cuda_fold_us": 145.59800177812576,
          "cuda_rowwise_us": 487.9180043935776,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=bf16",
          "cuda_fold_us": 573.6699998378754,
          "cuda_rowwise_us": 1847.3100066184998,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=4096,kv=fp8",
          "cuda_fold_us": 25.57187434285879,
          "cuda_rowwise_us": 22.386000491678715,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=fp8",
          "cuda_fold_us": 31.094727191058073,
          "cuda_rowwise_us": 76.0632726279172,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=fp8",
          "cuda_fold_us": 71.40581987120888,
          "cuda_rowwise_us": 227.6625416495583,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=fp8",
          "cuda_fold_us": 230.51399737596512,
          "cuda_rowwise_us": 808.0579936504364,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=fp8",
          "cuda_fold_us": 846.231997013092,
          "cuda_rowwise_us": 3085.520029067993,
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
