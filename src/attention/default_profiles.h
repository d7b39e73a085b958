// Built-in cost-model profiles, used when no profile file has an entry for this machine
// (docs/dispatch.md). Same JSON format as the file `mlaspec calibrate` writes.
//
// GPU profiles (kBuiltinGpuProfileJson): the whole file `mlaspec calibrate --out FILE` writes,
// pasted unchanged between the raw-string markers (write to a fresh FILE so it holds only the
// calibrated GPU). This string is the only place to edit; nothing else needs to change.
//
// NVIDIA H200 — MEASURED 2026-11-29 on the H200 by `scripts/gpu-check.sh` (`mlaspec calibrate`,
// full grid: B=1, H 16|128, q_len 2|4|8, S = 1k, 2k, ..., 1M, bf16 and fp8, median of 30 CUDA-graph
// replays per point) with the ping-pong bf16 kernel; report in
// docs/perf/dispatch-calibration-2026-11-29.md. Recalibrate whenever the kernels change.
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
          "model": "cuda_rowwise below S=14149, cuda_fold from there",
          "model_seq_len": 14149,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.11106103478809781,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=9597, cuda_fold from there",
          "model_seq_len": 9597,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.16927844300322437,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=5028, cuda_fold from there",
          "model_seq_len": 5028,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.020378381780082444,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=4096",
          "model": "cuda_rowwise below S=3854, cuda_fold from there (cheaper backend changes again at S=20699, 78203, 600963)",
          "model_seq_len": 3854,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.07943678518995867,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=262144",
          "model": "cuda_rowwise below S=154327, cuda_fold from there (cheaper backend changes again at S=398408)",
          "model_seq_len": 154327,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.03383315483705185,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=65536",
          "model": "cuda_rowwise below S=33171, cuda_fold from there (cheaper backend changes again at S=101905)",
          "model_seq_len": 33171,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.021566938583053474,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=32768",
          "model": "cuda_rowwise below S=16915, cuda_fold from there",
          "model_seq_len": 16915,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.11320367342155424,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=9396, cuda_fold from there",
          "model_seq_len": 9396,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.19473996558053264,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=5082, cuda_fold from there",
          "model_seq_len": 5082,
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
          "model": "cuda_fold below S=670, cuda_rowwise from there",
          "model_seq_len": 670,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.0,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "never in grid",
          "model": "cuda_fold below S=960, cuda_rowwise from there",
          "model_seq_len": 960,
          "q_len": 8
        }
      ],
      "grid_loo_regret_max": 0.19473996558053264,
      "grid_regret_max": 0.0,
      "measured_at": "2026-11-29T16:14:32Z",
      "models": [
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 17.36],
            [2048, 17.683],
            [4096, 18.167],
            [8192, 19.281],
            [16384, 22.596],
            [32768, 29.676],
            [65536, 41.68],
            [131072, 59.3],
            [262144, 96.014],
            [524288, 170.648],
            [1048576, 329.898]
          ],
          "fixed_us": 17.378171255021893,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.10008360822345075,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.04494007908826687,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2666359909819473
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 20.294],
            [2048, 20.375],
            [4096, 20.881],
            [8192, 21.974],
            [16384, 25.543],
            [32768, 34.925],
            [65536, 46.39],
            [131072, 64.234],
            [262144, 101.686],
            [524288, 178.316],
            [1048576, 349.754]
          ],
          "fixed_us": 20.268185188235503,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.11844455440656787,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.05657564276198428,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.27869059702215326
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.287],
            [2048, 20.922],
            [4096, 21.825],
            [8192, 23.358],
            [16384, 29.23],
            [32768, 39.245],
            [65536, 56.582],
            [131072, 88.242],
            [262144, 159.188],
            [524288, 297.848],
            [1048576, 622.384]
          ],
          "fixed_us": 19.94137062341569,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.051482273060279526,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.030721664743925285,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.47220198435999083
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.981],
            [2048, 22.688],
            [4096, 23.625],
            [8192, 28.419],
            [16384, 37.295],
            [32768, 54.612],
            [65536, 85.448],
            [131072, 145.558],
            [262144, 284.254],
            [524288, 547.444],
            [1048576, 1180.624]
          ],
          "fixed_us": 20.3257272164892,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.08039076158731029,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.0339121002044815,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.8819724270009931
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 25.43],
            [2048, 25.978],
            [4096, 30.132],
            [8192, 38.415],
            [16384, 54.44],
            [32768, 85.321],
            [65536, 148.52],
            [131072, 273.874],
            [262144, 535.344],
            [524288, 1082.288],
            [1048576, 2124.724]
          ],
          "fixed_us": 22.447043364023724,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.03838927542164161,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.01964429368987543,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.7009114803777778
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 30.483],
            [2048, 34.152],
            [4096, 42.218],
            [8192, 57.537],
            [16384, 87.943],
            [32768, 149.392],
            [65536, 273.909],
            [131072, 551.374],
            [262144, 1035.93],
            [524288, 2092.916],
            [1048576, 4091.354]
          ],
          "fixed_us": 26.21434904562547,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.034049363958402634,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.01642616923927353,
          "us_per_gflop": 0.0,
          "us_per_mb": 3.3536602028477818
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 25.442],
            [2048, 25.494],
            [4096, 25.648],
            [8192, 26.42],
            [16384, 28.231],
            [32768, 32.768],
            [65536, 48.365],
            [131072, 80.051],
            [262144, 142.712],
            [524288, 261.794],
            [1048576, 488.636]
          ],
          "fixed_us": 22.95939141013685,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.13295958997931767,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.06195577887300631,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.750533212092101
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 27.206],
            [2048, 27.569],
            [4096, 28.029],
            [8192, 29.097],
            [16384, 31.219],
            [32768, 37.12],
            [65536, 52.863],
            [131072, 84.462],
            [262144, 147.806],
            [524288, 268.458],
            [1048576, 497.242]
          ],
          "fixed_us": 25.47578642170262,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.08144678904326641,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.0397584464304207,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.7771339393982009
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 29.434],
            [2048, 29.845],
            [4096, 30.754],
            [8192, 31.691],
            [16384, 35.883],
            [32768, 53.2],
            [65536, 88.161],
            [131072, 163.232],
            [262144, 307.594],
            [524288, 587.736],
            [1048576, 1146.994]
          ],
          "fixed_us": 25.166946221218524,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.16459618620039573,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.08109939958313621,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.761301739011561
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 30.845],
            [2048, 31.602],
            [4096, 32.482],
            [8192, 36.063],
            [16384, 53.172],
            [32768, 87.987],
            [65536, 158.381],
            [131072, 297.522],
            [262144, 578.756],
            [524288, 1129.126],
            [1048576, 2236.404]
          ],
          "fixed_us": 24.878940558698904,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.1494382450312115,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.07413159004293585,
          "us_per_gflop": 0.0,
          "us_per_mb": 3.5122685921823504
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 33.851],
            [2048, 34.638],
            [4096, 38.513],
            [8192, 55.623],
            [16384, 90.127],
            [32768, 159.743],
            [65536, 297.721],
            [131072, 582.741],
            [262144, 1152.388],
            [524288, 2292.04],
            [1048576, 4568.706]
          ],
          "fixed_us": 25.325107181703977,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.1256250290091796,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.05792485356895144,
          "us_per_gflop": 0.0,
          "us_per_mb": 7.244403565657808
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 38.809],
            [2048, 42.389],
            [4096, 59.546],
            [8192, 93.741],
            [16384, 162.458],
            [32768, 300.159],
            [65536, 579.785],
            [131072, 1146.325],
            [262144, 2280.08],
            [524288, 4550.532],
            [1048576, 9100.148]
          ],
          "fixed_us": 27.021418415147153,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.08080924594531946,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.03358409359866429,
          "us_per_gflop": 0.0,
          "us_per_mb": 14.668247817457585
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 16.651],
            [2048, 16.748],
            [4096, 17.349],
            [8192, 18.793],
            [16384, 22.752],
            [32768, 43.903],
            [65536, 65.955],
            [131072, 100.968],
            [262144, 173.69],
            [524288, 326.274],
            [1048576, 637.762]
          ],
          "fixed_us": 15.161619498961233,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.18764375398309874,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.08969397904086132,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.27157833764671685
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 16.851],
            [2048, 16.945],
            [4096, 17.785],
            [8192, 19.778],
            [16384, 36.466],
            [32768, 72.084],
            [65536, 112.328],
            [131072, 182.696],
            [262144, 337.71],
            [524288, 651.156],
            [1048576, 1403.354]
          ],
          "fixed_us": 13.509874711346805,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.22358581203794325,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.1136364250268265,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.28318783923877594
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 17.083],
            [2048, 17.727],
            [4096, 18.665],
            [8192, 33.904],
            [16384, 63.903],
            [32768, 98.984],
            [65536, 162.584],
            [131072, 287.314],
            [262144, 559.446],
            [524288, 1238.044],
            [1048576, 2167.236]
          ],
          "fixed_us": 13.344567010553892,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.21984861754926865,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.11133167125184638,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2417920421938453
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 21.72],
            [2048, 22.128],
            [4096, 23.682],
            [8192, 28.587],
            [16384, 37.319],
            [32768, 54.543],
            [65536, 84.72],
            [131072, 149.244],
            [262144, 288.392],
            [524288, 558.6],
            [1048576, 1087.378]
          ],
          "fixed_us": 20.202216990453348,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.028329714151987817,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.01749573088613271,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4397682707152331
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 24.688],
            [2048, 25.907],
            [4096, 29.974],
            [8192, 38.096],
            [16384, 54.152],
            [32768, 84.643],
            [65536, 148.086],
            [131072, 267.496],
            [262144, 577.87],
            [524288, 1029.36],
            [1048576, 2050.864]
          ],
          "fixed_us": 22.193143087737447,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.07977755016386612,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.02806444913541921,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.42184840840173127
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 30.152],
            [2048, 33.685],
            [4096, 41.681],
            [8192, 56.655],
            [16384, 86.892],
            [32768, 149.303],
            [65536, 283.176],
            [131072, 541.012],
            [262144, 1023.792],
            [524288, 2015.424],
            [1048576, 3994.738]
          ],
          "fixed_us": 25.928672704076057,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.02663183171405148,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.013988712293767703,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.41448008365362327
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 24.508],
            [2048, 24.397],
            [4096, 24.814],
            [8192, 25.812],
            [16384, 27.635],
            [32768, 51.002],
            [65536, 84.959],
            [131072, 149.181],
            [262144, 272.144],
            [524288, 499.616],
            [1048576, 951.524]
          ],
          "fixed_us": 20.259307990391147,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.26979542569025816,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.10392373918918445,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.7857944335004886
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 24.327],
            [2048, 24.549],
            [4096, 25.235],
            [8192, 26.138],
            [16384, 48.239],
            [32768, 93.582],
            [65536, 159.513],
            [131072, 284.44],
            [262144, 522.392],
            [524288, 975.876],
            [1048576, 1861.9]
          ],
          "fixed_us": 18.427308983750006,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.29319494433895765,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.12349496912719538,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.8145298084481255
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 24.73],
            [2048, 25.193],
            [4096, 25.741],
            [8192, 47.006],
            [16384, 89.679],
            [32768, 154.09],
            [65536, 279.871],
            [131072, 517.358],
            [262144, 969.266],
            [524288, 1858.194],
            [1048576, 3648.012]
          ],
          "fixed_us": 17.009342055074764,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.24925372543780044,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.10903468510150757,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.8025787473162982
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 29.194],
            [2048, 29.808],
            [4096, 30.94],
            [8192, 34.491],
            [16384, 50.137],
            [32768, 81.803],
            [65536, 144.643],
            [131072, 263.387],
            [262144, 490.93],
            [524288, 942.264],
            [1048576, 1839.916]
          ],
          "fixed_us": 24.57148659633109,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.12660649170618954,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.05747673183152502,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.5138304600082537
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 32.422],
            [2048, 33.35],
            [4096, 36.932],
            [8192, 52.648],
            [16384, 84.042],
            [32768, 146.894],
            [65536, 268.399],
            [131072, 504.595],
            [262144, 970.11],
            [524288, 1895.068],
            [1048576, 3745.612]
          ],
          "fixed_us": 25.72006262503081,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.09379069788766103,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.04448466331090646,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.5551054640069841
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 37.527],
            [2048, 40.797],
            [4096, 56.388],
            [8192, 87.654],
            [16384, 149.989],
            [32768, 271.796],
            [65536, 507.948],
            [131072, 974.09],
            [262144, 1900.31],
            [524288, 3748.334],
            [1048576, 7441.64]
          ],
          "fixed_us": 28.21826603623198,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.05320941960343473,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.027555269231787853,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.5628872563258638
        }
      ],
      "provisional": false,
      "reps": 30,
      "source": "mlaspec calibrate on NVIDIA H200, 2026-11-29T16:14:28Z (full grid, 30 reps)",
      "sweep_check": [
        {
          "config": "B=1,H=16,q=8,S=4096,kv=bf16",
          "cuda_fold_us": 21.85487560927868,
          "cuda_rowwise_us": 18.673624843358994,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=bf16",
          "cuda_fold_us": 29.143636876886543,
          "cuda_rowwise_us": 63.98145448077808,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=bf16",
          "cuda_fold_us": 56.33759796619415,
          "cuda_rowwise_us": 162.97279596328735,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=bf16",
          "cuda_fold_us": 152.82999724149704,
          "cuda_rowwise_us": 560.7680082321167,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=bf16",
          "cuda_fold_us": 578.2699882984161,
          "cuda_rowwise_us": 2224.1339683532715,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=4096,kv=fp8",
          "cuda_fold_us": 31.56362473964691,
          "cuda_rowwise_us": 25.950375013053417,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=fp8",
          "cuda_fold_us": 35.842181606726214,
          "cuda_rowwise_us": 89.66036276383834,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=fp8",
          "cuda_fold_us": 88.54836496439847,
          "cuda_rowwise_us": 279.73599867387253,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=fp8",
          "cuda_fold_us": 308.00800025463104,
          "cuda_rowwise_us": 971.0499942302704,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=fp8",
          "cuda_fold_us": 1155.4799675941467,
          "cuda_rowwise_us": 3647.8461027145386,
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
