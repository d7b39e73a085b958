// Built-in cost-model profiles, used when no profile file has an entry for this machine
// (docs/dispatch.md). Same JSON format as the file `mlaspec calibrate` writes.
//
// GPU profiles (kBuiltinGpuProfileJson): the whole file `mlaspec calibrate --out FILE` writes,
// pasted unchanged between the raw-string markers (write to a fresh FILE so it holds only the
// calibrated GPU). This string is the only place to edit; nothing else needs to change.
//
// NVIDIA H200 — MEASURED 2026-11-29 on the H200 by `scripts/gpu-check.sh` (`mlaspec calibrate`,
// full grid: B=1, H 16|128, q_len 2|4|8, S = 1k, 2k, ..., 1M, bf16 and fp8, median of 30 CUDA-graph
// replays per point); report in docs/perf/dispatch-calibration-2026-11-29.md.
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
          "grid_loo_regret_max": 0.0513013465535852,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=32768",
          "model": "cuda_rowwise below S=17643, cuda_fold from there",
          "model_seq_len": 17643,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.0,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=11607, cuda_fold from there",
          "model_seq_len": 11607,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.0,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=6225, cuda_fold from there",
          "model_seq_len": 6225,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.0,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "never in grid",
          "model": "cuda_rowwise cheaper at every S",
          "model_seq_len": 0,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.0,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "never in grid",
          "model": "cuda_rowwise cheaper at every S",
          "model_seq_len": 0,
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
          "grid_loo_regret_max": 0.05108951369233705,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=32768",
          "model": "cuda_rowwise below S=17622, cuda_fold from there",
          "model_seq_len": 17622,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.22131759905517878,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=10554, cuda_fold from there",
          "model_seq_len": 10554,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.3089526606850239,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=5652, cuda_fold from there",
          "model_seq_len": 5652,
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
          "model": "cuda_fold below S=235, cuda_rowwise from there",
          "model_seq_len": 235,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.0,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "never in grid",
          "model": "cuda_fold below S=789, cuda_rowwise from there",
          "model_seq_len": 789,
          "q_len": 8
        }
      ],
      "grid_loo_regret_max": 0.3089526606850239,
      "grid_regret_max": 0.0,
      "measured_at": "2026-11-29T14:26:20Z",
      "models": [
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.877],
            [2048, 21.916],
            [4096, 22.267],
            [8192, 23.303],
            [16384, 25.895],
            [32768, 32.401],
            [65536, 43.55],
            [131072, 62.95],
            [262144, 102.192],
            [524288, 185.404],
            [1048576, 342.944]
          ],
          "fixed_us": 21.27602200365806,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.0404174018497514,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.01954281060941398,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2717201497439559
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 27.519],
            [2048, 27.024],
            [4096, 27.444],
            [8192, 28.827],
            [16384, 31.953],
            [32768, 40.81],
            [65536, 52.566],
            [131072, 71.188],
            [262144, 114.042],
            [524288, 204.76],
            [1048576, 395.434]
          ],
          "fixed_us": 26.725061584525175,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.06677961716849123,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.032538215080808244,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.3009327640864978
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 29.605],
            [2048, 29.066],
            [4096, 30.002],
            [8192, 31.189],
            [16384, 36.347],
            [32768, 47.706],
            [65536, 70.056],
            [131072, 113.934],
            [262144, 203.662],
            [524288, 393.434],
            [1048576, 768.424]
          ],
          "fixed_us": 26.91069490355351,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.06755479808941156,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.034435393698181424,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.5888999597078626
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 30.406],
            [2048, 30.808],
            [4096, 31.654],
            [8192, 35.622],
            [16384, 46.616],
            [32768, 68.348],
            [65536, 111.685],
            [131072, 198.12],
            [262144, 376.838],
            [524288, 733.748],
            [1048576, 1467.564]
          ],
          "fixed_us": 26.898344704760092,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.07096848490824648,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.0370667788508899,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.1445247362475632
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 33.733],
            [2048, 33.878],
            [4096, 37.957],
            [8192, 48.9],
            [16384, 70.537],
            [32768, 112.953],
            [65536, 199.192],
            [131072, 376.676],
            [262144, 728.064],
            [524288, 1449.214],
            [1048576, 2861.748]
          ],
          "fixed_us": 28.586669244718948,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.07232913128832441,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.029456606098454814,
          "us_per_gflop": 0.0,
          "us_per_mb": 2.2944835163882358
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 38.762],
            [2048, 41.883],
            [4096, 52.455],
            [8192, 73.826],
            [16384, 116.406],
            [32768, 202.049],
            [65536, 378.003],
            [131072, 728.49],
            [262144, 1425.094],
            [524288, 2827.93],
            [1048576, 5630.65]
          ],
          "fixed_us": 31.736018755062354,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.04185986196314828,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.017256007163573308,
          "us_per_gflop": 0.0,
          "us_per_mb": 4.580323630287012
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 26.443],
            [2048, 26.919],
            [4096, 27.087],
            [8192, 27.942],
            [16384, 29.899],
            [32768, 34.256],
            [65536, 49.708],
            [131072, 80.629],
            [262144, 142.134],
            [524288, 262.648],
            [1048576, 500.794]
          ],
          "fixed_us": 24.315525081657782,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.12484916035739912,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.057070058445318754,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.7532383770897861
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 30.159],
            [2048, 31.191],
            [4096, 31.729],
            [8192, 32.608],
            [16384, 35.054],
            [32768, 40.792],
            [65536, 56.479],
            [131072, 87.421],
            [262144, 148.722],
            [524288, 269.424],
            [1048576, 505.852]
          ],
          "fixed_us": 28.9634022740648,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.06932817394982838,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.03207295393350219,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.7765569378178496
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 33.323],
            [2048, 33.705],
            [4096, 34.521],
            [8192, 35.449],
            [16384, 39.703],
            [32768, 57.024],
            [65536, 91.247],
            [131072, 161.614],
            [262144, 302.146],
            [524288, 582.214],
            [1048576, 1156.768]
          ],
          "fixed_us": 28.949125599525665,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.14354240508134564,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.07220282567968354,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.7434050181788334
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 35.152],
            [2048, 35.581],
            [4096, 36.337],
            [8192, 39.686],
            [16384, 56.693],
            [32768, 91.194],
            [65536, 160.052],
            [131072, 296.102],
            [262144, 572.602],
            [524288, 1127.764],
            [1048576, 2249.734]
          ],
          "fixed_us": 28.70266315876169,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.13812157695917282,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.07081155034595614,
          "us_per_gflop": 0.0,
          "us_per_mb": 3.489472676001528
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 38.134],
            [2048, 38.691],
            [4096, 42.212],
            [8192, 59.019],
            [16384, 93.551],
            [32768, 163.164],
            [65536, 303.351],
            [131072, 583.018],
            [262144, 1146.922],
            [524288, 2296.458],
            [1048576, 4609.668]
          ],
          "fixed_us": 29.102662582629474,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.12470465866146974,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.057376328431427946,
          "us_per_gflop": 0.0,
          "us_per_mb": 7.249364861321998
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 43.088],
            [2048, 46.307],
            [4096, 63.009],
            [8192, 97.524],
            [16384, 167.986],
            [32768, 307.549],
            [65536, 586.674],
            [131072, 1146.786],
            [262144, 2290.364],
            [524288, 4594.964],
            [1048576, 9214.826]
          ],
          "fixed_us": 30.773449840883625,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.08359862139568797,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.034370875996665357,
          "us_per_gflop": 0.0,
          "us_per_mb": 14.771275848015684
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 19.581],
            [2048, 19.734],
            [4096, 20.192],
            [8192, 21.283],
            [16384, 24.632],
            [32768, 49.225],
            [65536, 72.093],
            [131072, 109.154],
            [262144, 192.814],
            [524288, 366.914],
            [1048576, 712.132]
          ],
          "fixed_us": 17.510294493871715,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.18732194717794026,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.09435892410960617,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.29794574058472295
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 19.959],
            [2048, 19.847],
            [4096, 20.483],
            [8192, 22.255],
            [16384, 41.276],
            [32768, 84.075],
            [65536, 127.552],
            [131072, 203.416],
            [262144, 376.8],
            [524288, 724.646],
            [1048576, 1620.764]
          ],
          "fixed_us": 15.748497882069087,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.24603853880475635,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.12578036079093893,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.31743198466848355
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 20.242],
            [2048, 20.439],
            [4096, 21.479],
            [8192, 38.835],
            [16384, 75.943],
            [32768, 117.529],
            [65536, 192.418],
            [131072, 338.786],
            [262144, 668.566],
            [524288, 1445.698],
            [1048576, 2653.354]
          ],
          "fixed_us": 15.249826332895685,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.2266702259678509,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.11410905378094319,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2879506115071771
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 28.935],
            [2048, 29.17],
            [4096, 30.484],
            [8192, 34.541],
            [16384, 44.332],
            [32768, 63.508],
            [65536, 101.187],
            [131072, 182.77],
            [262144, 346.422],
            [524288, 696.8],
            [1048576, 1329.396]
          ],
          "fixed_us": 25.915315069300135,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.061538890633406895,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.03476120577665945,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.5251313505387578
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 32.158],
            [2048, 32.761],
            [4096, 36.732],
            [8192, 46.094],
            [16384, 64.744],
            [32768, 101.894],
            [65536, 177.704],
            [131072, 337.646],
            [262144, 670.792],
            [524288, 1319.278],
            [1048576, 2629.43]
          ],
          "fixed_us": 27.725645320906757,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.06198309681709557,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.032936629750840926,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.5168388019491058
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 37.287],
            [2048, 40.315],
            [4096, 49.602],
            [8192, 68.019],
            [16384, 105.319],
            [32768, 181.783],
            [65536, 340.864],
            [131072, 680.868],
            [262144, 1320.188],
            [524288, 2627.56],
            [1048576, 5198.216]
          ],
          "fixed_us": 30.535875466207845,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.04874885835669185,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.028526371609995892,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.5228024092619588
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 25.027],
            [2048, 24.925],
            [4096, 25.304],
            [8192, 26.17],
            [16384, 28.446],
            [32768, 52.361],
            [65536, 85.909],
            [131072, 149.397],
            [262144, 271.618],
            [524288, 512.182],
            [1048576, 980.662]
          ],
          "fixed_us": 20.715830824762858,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.258309222947644,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.09976588581469914,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.7988386399517988
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 25.086],
            [2048, 25.117],
            [4096, 25.629],
            [8192, 26.699],
            [16384, 49.599],
            [32768, 95.788],
            [65536, 160.951],
            [131072, 283.261],
            [262144, 529.694],
            [524288, 1000.752],
            [1048576, 1912.912]
          ],
          "fixed_us": 18.87861225401397,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.2929370015087196,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.12245345010306231,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.8286915214229357
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 25.479],
            [2048, 25.678],
            [4096, 26.373],
            [8192, 48.348],
            [16384, 91.792],
            [32768, 154.897],
            [65536, 281.276],
            [131072, 527.072],
            [262144, 996.74],
            [524288, 1913.042],
            [1048576, 3735.792]
          ],
          "fixed_us": 17.450555553425954,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.24810465752104327,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.10672696423283361,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.8194275367107701
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 33.216],
            [2048, 33.592],
            [4096, 34.653],
            [8192, 38.291],
            [16384, 53.759],
            [32768, 84.868],
            [65536, 146.967],
            [131072, 267.136],
            [262144, 502.534],
            [524288, 963.658],
            [1048576, 1869.408]
          ],
          "fixed_us": 28.188126116911107,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.11288494168958563,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.05362377718352376,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.5286093447722167
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 36.324],
            [2048, 37.114],
            [4096, 40.665],
            [8192, 56.1],
            [16384, 86.809],
            [32768, 148.845],
            [65536, 271.938],
            [131072, 513.582],
            [262144, 990.526],
            [524288, 1922.916],
            [1048576, 3804.208]
          ],
          "fixed_us": 29.234958433588385,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.09335146909262848,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.042274692513473475,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.56766907557523
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 41.497],
            [2048, 44.6],
            [4096, 60.038],
            [8192, 90.807],
            [16384, 151.964],
            [32768, 274.579],
            [65536, 517.821],
            [131072, 990.296],
            [262144, 1930.066],
            [524288, 3808.092],
            [1048576, 7562.634]
          ],
          "fixed_us": 31.752941481018432,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.055518617794208414,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.02481741467918419,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.5768093302295503
        }
      ],
      "provisional": false,
      "reps": 30,
      "source": "mlaspec calibrate on NVIDIA H200, 2026-11-29T14:26:15Z (full grid, 30 reps)",
      "sweep_check": [
        {
          "config": "B=1,H=16,q=8,S=4096,kv=bf16",
          "cuda_fold_us": 29.929624870419502,
          "cuda_rowwise_us": 21.45512495189905,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=bf16",
          "cuda_fold_us": 36.38327257199721,
          "cuda_rowwise_us": 76.04218342087486,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=bf16",
          "cuda_fold_us": 69.77759897708893,
          "cuda_rowwise_us": 192.23519563674927,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=bf16",
          "cuda_fold_us": 200.4539966583252,
          "cuda_rowwise_us": 664.6499931812286,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=bf16",
          "cuda_fold_us": 762.472003698349,
          "cuda_rowwise_us": 2648.434042930603,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=4096,kv=fp8",
          "cuda_fold_us": 34.730374813079834,
          "cuda_rowwise_us": 26.543750427663326,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=fp8",
          "cuda_fold_us": 39.6778177131306,
          "cuda_rowwise_us": 91.88763661818071,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=fp8",
          "cuda_fold_us": 91.52436256408691,
          "cuda_rowwise_us": 279.4298150322654,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=fp8",
          "cuda_fold_us": 300.3219962120056,
          "cuda_rowwise_us": 990.7279908657074,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=fp8",
          "cuda_fold_us": 1147.6200222969055,
          "cuda_rowwise_us": 3709.0619802474976,
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
