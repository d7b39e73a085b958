// Built-in cost-model profiles, used when no profile file has an entry for this machine
// (docs/dispatch.md). Same JSON format as the file `mlaspec calibrate` writes.
//
// GPU profiles (kBuiltinGpuProfileJson): the whole file `mlaspec calibrate --out FILE` writes,
// pasted unchanged between the raw-string markers (write to a fresh FILE so it holds only the
// calibrated GPU). This string is the only place to edit; nothing else needs to change.
//
// NVIDIA H200 — MEASURED 2026-12-02 on the H200 by `scripts/gpu-check.sh` (`mlaspec calibrate`,
// full grid: B=1, H 16|128, q_len 2|4|8, S = 1k, 2k, ..., 1M, bf16 and fp8, median of 30 CUDA-graph
// replays per point) on the kernels of v39 (the narrow kernel for row tiles of <= 16 rows, which
// rowwise runs at H = 16; the 64-row kernel with v28's half-slots otherwise; v31's fp8 fold
// without clusters; the deterministic merge tree of v34; fp8 in f16 since v37); report in
// docs/perf/dispatch-calibration-2026-12-02.md.
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
          "grid_loo_regret_max": 0.11844169893697076,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=32768",
          "model": "cuda_rowwise below S=19928, cuda_fold from there",
          "model_seq_len": 19928,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.15288416561310858,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=10240, cuda_fold from there",
          "model_seq_len": 10240,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.17339200864645132,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=5103, cuda_fold from there",
          "model_seq_len": 5103,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.03601530193684033,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=1024",
          "model": "cuda_fold below S=1114, cuda_rowwise from there (cheaper backend changes again at S=3613, 64873, 65835, 725537, 1048577)",
          "model_seq_len": 1114,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.10392490394631526,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=4096",
          "model": "cuda_rowwise below S=2829, cuda_fold from there (cheaper backend changes again at S=469771, 845827)",
          "model_seq_len": 2829,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.0,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=32768",
          "model": "cuda_rowwise below S=18051, cuda_fold from there",
          "model_seq_len": 18051,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.05577839290301401,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=32768",
          "model": "cuda_rowwise below S=17843, cuda_fold from there",
          "model_seq_len": 17843,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.1496288488763906,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=9936, cuda_fold from there",
          "model_seq_len": 9936,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.1533114084544276,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=5005, cuda_fold from there",
          "model_seq_len": 5005,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.005933451271455725,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=14244, cuda_rowwise from there (cheaper backend changes again at S=19229, 49199, 578246, 1048577)",
          "model_seq_len": 14244,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.0018485462529063135,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=32512, cuda_rowwise from there (cheaper backend changes again at S=386704, 748101)",
          "model_seq_len": 32512,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.0030415771219753918,
          "grid_regret_max": 1.8929046472493383e-06,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=7180, cuda_rowwise from there (cheaper backend changes again at S=9446, 32768, 126684, 135547, 430278, 714897)",
          "model_seq_len": 7180,
          "q_len": 8
        }
      ],
      "grid_loo_regret_max": 0.17339200864645132,
      "grid_regret_max": 1.8929046472493383e-06,
      "measured_at": "2026-12-02T00:18:59Z",
      "models": [
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 18.016],
            [2048, 18.357],
            [4096, 18.771],
            [8192, 19.317],
            [16384, 21.736],
            [32768, 26.259],
            [65536, 35.952],
            [131072, 53.638],
            [262144, 89.428],
            [524288, 161.748],
            [1048576, 304.222]
          ],
          "fixed_us": 17.526377042804572,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.023606557927139837,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.011257263206656744,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.23809114947284757
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 20.385],
            [2048, 20.856],
            [4096, 21.332],
            [8192, 21.974],
            [16384, 24.891],
            [32768, 32.18],
            [65536, 41.722],
            [131072, 59.52],
            [262144, 94.482],
            [524288, 167.018],
            [1048576, 318.514]
          ],
          "fixed_us": 20.39367967738096,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.07212964252448117,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.033127905186928215,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.25073291760047633
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.268],
            [2048, 21.519],
            [4096, 22.471],
            [8192, 23.732],
            [16384, 29.538],
            [32768, 37.413],
            [65536, 52.858],
            [131072, 82.116],
            [262144, 144.75],
            [524288, 274.996],
            [1048576, 549.388]
          ],
          "fixed_us": 20.57897231904314,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.03532812791460338,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.022387727235460415,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4229077984585643
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.672],
            [2048, 22.612],
            [4096, 23.958],
            [8192, 28.457],
            [16384, 36.046],
            [32768, 50.463],
            [65536, 79.301],
            [131072, 141.706],
            [262144, 267.142],
            [524288, 517.098],
            [1048576, 1108.526]
          ],
          "fixed_us": 20.385726146825647,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.08264938820832735,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.030658077764013057,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.8249624489806288
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.549],
            [2048, 23.669],
            [4096, 27.413],
            [8192, 34.907],
            [16384, 49.105],
            [32768, 77.208],
            [65536, 139.514],
            [131072, 263.916],
            [262144, 508.598],
            [524288, 1050.476],
            [1048576, 2047.468]
          ],
          "fixed_us": 19.83936471333892,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.049592832219775174,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.027693446239679984,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.6211827663999052
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 24.058],
            [2048, 27.611],
            [4096, 34.631],
            [8192, 48.737],
            [16384, 78.126],
            [32768, 138.824],
            [65536, 263.677],
            [131072, 524.874],
            [262144, 980.948],
            [524288, 1991.988],
            [1048576, 3901.616]
          ],
          "fixed_us": 19.779789081903377,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.03889217521929511,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.01973906850193415,
          "us_per_gflop": 0.0,
          "us_per_mb": 3.209913578402509
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.325],
            [2048, 21.148],
            [4096, 21.198],
            [8192, 21.125],
            [16384, 21.822],
            [32768, 24.815],
            [65536, 37.267],
            [131072, 61.61],
            [262144, 109.876],
            [524288, 203.946],
            [1048576, 386.874]
          ],
          "fixed_us": 18.48501227485408,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.18054820865352617,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.08698799333239321,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.5727441721836152
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.72],
            [2048, 22.766],
            [4096, 22.915],
            [8192, 22.961],
            [16384, 24.741],
            [32768, 29.423],
            [65536, 41.912],
            [131072, 65.966],
            [262144, 113.296],
            [524288, 207.626],
            [1048576, 390.848]
          ],
          "fixed_us": 20.555324397119794,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.08353294947340606,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.043534805843797535,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.6000395349344214
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.847],
            [2048, 22.855],
            [4096, 22.875],
            [8192, 25.049],
            [16384, 29.268],
            [32768, 41.017],
            [65536, 64.343],
            [131072, 111.73],
            [262144, 203.698],
            [524288, 382.868],
            [1048576, 736.826]
          ],
          "fixed_us": 20.398901745322664,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.07703024202678788,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.04111517212100089,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.1787011929765663
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 23.477],
            [2048, 23.642],
            [4096, 25.294],
            [8192, 29.098],
            [16384, 41.106],
            [32768, 64.35],
            [65536, 110.633],
            [131072, 200.757],
            [262144, 377.84],
            [524288, 730.764],
            [1048576, 1432.48]
          ],
          "fixed_us": 20.350049859214742,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.07866171372495079,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.03646675964882893,
          "us_per_gflop": 0.0,
          "us_per_mb": 2.3390702823714977
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 23.213],
            [2048, 24.981],
            [4096, 28.992],
            [8192, 40.905],
            [16384, 64.116],
            [32768, 110.032],
            [65536, 200.748],
            [131072, 381.579],
            [262144, 743.582],
            [524288, 1463.692],
            [1048576, 2913.042]
          ],
          "fixed_us": 19.2585483197219,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.05262366529738216,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.022995897486924228,
          "us_per_gflop": 0.0,
          "us_per_mb": 4.772124105265216
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 25.29],
            [2048, 28.737],
            [4096, 40.717],
            [8192, 63.791],
            [16384, 109.574],
            [32768, 200.381],
            [65536, 380.572],
            [131072, 739.437],
            [262144, 1458.836],
            [524288, 2893.832],
            [1048576, 5769.248]
          ],
          "fixed_us": 18.65990492790296,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.04112159665816706,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.01793805228362028,
          "us_per_gflop": 0.0,
          "us_per_mb": 9.543877356556816
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 17.961],
            [2048, 18.083],
            [4096, 18.391],
            [8192, 18.672],
            [16384, 19.434],
            [32768, 34.895],
            [65536, 50.237],
            [131072, 80.39],
            [262144, 141.088],
            [524288, 260.904],
            [1048576, 493.344]
          ],
          "fixed_us": 15.963274941854115,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.217524074138987,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.08555111202991199,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2039355725812399
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.219],
            [2048, 18.624],
            [4096, 18.801],
            [8192, 19.06],
            [16384, 33.591],
            [32768, 63.284],
            [65536, 93.355],
            [131072, 151.668],
            [262144, 275.068],
            [524288, 502.1],
            [1048576, 958.866]
          ],
          "fixed_us": 15.54130951188491,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.24156542603796405,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.12346910270335092,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.21519006637544177
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.609],
            [2048, 18.714],
            [4096, 19.15],
            [8192, 33.502],
            [16384, 62.904],
            [32768, 92.033],
            [65536, 150.506],
            [131072, 269.942],
            [262144, 499.51],
            [524288, 955.312],
            [1048576, 1859.298]
          ],
          "fixed_us": 15.206091629514148,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.2548022125732414,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.1214111263612759,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2097409976928682
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 21.738],
            [2048, 22.116],
            [4096, 24.076],
            [8192, 28.976],
            [16384, 36.815],
            [32768, 50.935],
            [65536, 79.29],
            [131072, 144.714],
            [262144, 273.714],
            [524288, 533.492],
            [1048576, 1069.99]
          ],
          "fixed_us": 20.399184388973225,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.052911492189788856,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.024165986584988565,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.41780039289696735
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 21.537],
            [2048, 23.364],
            [4096, 27.824],
            [8192, 35.714],
            [16384, 49.923],
            [32768, 79.256],
            [65536, 141.062],
            [131072, 268.836],
            [262144, 561.454],
            [524288, 1031.108],
            [1048576, 2064.658]
          ],
          "fixed_us": 19.46994073779651,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.06663570571903776,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.027717925538606695,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4177053553856208
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 23.648],
            [2048, 27.189],
            [4096, 34.141],
            [8192, 47.963],
            [16384, 78.004],
            [32768, 140.166],
            [65536, 270.709],
            [131072, 526.956],
            [262144, 1014.986],
            [524288, 2031.908],
            [1048576, 4085.77]
          ],
          "fixed_us": 19.053243048903447,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.04365561437674015,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.02452753895252636,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4106613731194494
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.894],
            [2048, 19.183],
            [4096, 19.248],
            [8192, 19.508],
            [16384, 20.669],
            [32768, 36.536],
            [65536, 53.21],
            [131072, 86.57],
            [262144, 153.354],
            [524288, 285.854],
            [1048576, 544.218]
          ],
          "fixed_us": 16.66014229961317,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.21266541004044326,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.08331326822402987,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.44531238630042674
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 19.117],
            [2048, 19.512],
            [4096, 19.538],
            [8192, 19.973],
            [16384, 35.508],
            [32768, 66.568],
            [65536, 99.853],
            [131072, 167.083],
            [262144, 303.16],
            [524288, 565.544],
            [1048576, 1085.478]
          ],
          "fixed_us": 15.910719059753315,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.24963036015102968,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.11840782512104182,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.47937158468837415
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 19.467],
            [2048, 19.64],
            [4096, 19.835],
            [8192, 35.568],
            [16384, 66.362],
            [32768, 99.981],
            [65536, 167.36],
            [131072, 303.234],
            [262144, 565.918],
            [524288, 1085.128],
            [1048576, 2108.668]
          ],
          "fixed_us": 15.348139827976484,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.22998356119299768,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.11750693241522148,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4735444749614364
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 23.691],
            [2048, 23.835],
            [4096, 25.442],
            [8192, 29.303],
            [16384, 41.033],
            [32768, 64.732],
            [65536, 110.172],
            [131072, 200.453],
            [262144, 376.85],
            [524288, 730.718],
            [1048576, 1433.028]
          ],
          "fixed_us": 20.52956959890313,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.07649003220745088,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.03653170146743838,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.1672290716089522
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 23.446],
            [2048, 25.097],
            [4096, 29.187],
            [8192, 40.964],
            [16384, 64.371],
            [32768, 110.027],
            [65536, 200.461],
            [131072, 381.125],
            [262144, 742.21],
            [524288, 1465.81],
            [1048576, 2909.044]
          ],
          "fixed_us": 19.437472709921256,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.05122024427207972,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.023217931408710802,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.191551049829743
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 25.495],
            [2048, 28.924],
            [4096, 40.853],
            [8192, 63.741],
            [16384, 109.907],
            [32768, 200.381],
            [65536, 380.333],
            [131072, 739.461],
            [262144, 1457.906],
            [524288, 2894.568],
            [1048576, 5767.436]
          ],
          "fixed_us": 18.840905616853384,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.040396699391201496,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.01803266149520457,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.192227293415802
        }
      ],
      "provisional": false,
      "reps": 30,
      "source": "mlaspec calibrate on NVIDIA H200, 2026-12-02T00:18:56Z (full grid, 30 reps)",
      "sweep_check": [
        {
          "config": "B=1,H=16,q=8,S=4096,kv=bf16",
          "cuda_fold_us": 22.171624936163425,
          "cuda_rowwise_us": 19.025000743567944,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=bf16",
          "cuda_fold_us": 29.32545407251878,
          "cuda_rowwise_us": 62.70909038457003,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=bf16",
          "cuda_fold_us": 52.63360142707825,
          "cuda_rowwise_us": 150.51520466804504,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=bf16",
          "cuda_fold_us": 141.63000136613846,
          "cuda_rowwise_us": 498.9279955625534,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=bf16",
          "cuda_fold_us": 551.6540110111237,
          "cuda_rowwise_us": 1859.9759936332703,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=4096,kv=fp8",
          "cuda_fold_us": 22.94087503105402,
          "cuda_rowwise_us": 19.849125295877457,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=fp8",
          "cuda_fold_us": 29.13690832528201,
          "cuda_rowwise_us": 66.53290716084567,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=fp8",
          "cuda_fold_us": 64.58254564892162,
          "cuda_rowwise_us": 167.51927679235285,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=fp8",
          "cuda_fold_us": 203.82200181484222,
          "cuda_rowwise_us": 561.9080066680908,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=fp8",
          "cuda_fold_us": 736.6999983787537,
          "cuda_rowwise_us": 2108.3240509033203,
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
