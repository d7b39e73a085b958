// Built-in cost-model profiles, used when no profile file has an entry for this machine
// (docs/dispatch.md). Same JSON format as the file `mlaspec calibrate` writes.
//
// GPU profiles (kBuiltinGpuProfileJson): the whole file `mlaspec calibrate --out FILE` writes,
// pasted unchanged between the raw-string markers (write to a fresh FILE so it holds only the
// calibrated GPU). This string is the only place to edit; nothing else needs to change.
//
// NVIDIA H200 — MEASURED 2026-12-01 on the H200 by `scripts/gpu-check.sh` (`mlaspec calibrate`,
// full grid: B=1, H 16|128, q_len 2|4|8, S = 1k, 2k, ..., 1M, bf16 and fp8, median of 30 CUDA-graph
// replays per point) on the kernels of v22 (the narrow kernel for row tiles of <= 16 rows, which
// rowwise runs at H = 16; the 64-row kernel of v20 otherwise); report in
// docs/perf/dispatch-calibration-2026-12-01e.md. Recalibrate whenever the kernels change.
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
          "grid_loo_regret_max": 0.07416231772163173,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=1024",
          "model": "cuda_rowwise below S=1024, cuda_fold from there (cheaper backend changes again at S=1748, 3505, 5554, 18817)",
          "model_seq_len": 1024,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.11368414402613536,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=9742, cuda_fold from there",
          "model_seq_len": 9742,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.12896800570780997,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=4857, cuda_fold from there",
          "model_seq_len": 4857,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.03441254420809381,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=4609, cuda_fold from there (cheaper backend changes again at S=651479, 1048577)",
          "model_seq_len": 4609,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.028548697713424387,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=4096",
          "model": "cuda_rowwise below S=2748, cuda_fold from there (cheaper backend changes again at S=64425, 67977, 359724, 1048577)",
          "model_seq_len": 2748,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.035603526859768975,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=65536",
          "model": "cuda_rowwise below S=33944, cuda_fold from there (cheaper backend changes again at S=112744)",
          "model_seq_len": 33944,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.09460408845240886,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=32768",
          "model": "cuda_rowwise below S=18869, cuda_fold from there",
          "model_seq_len": 18869,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.15186764276173448,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=9987, cuda_fold from there",
          "model_seq_len": 9987,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.20538947866362323,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=5226, cuda_fold from there",
          "model_seq_len": 5226,
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
          "model": "cuda_fold below S=514, cuda_rowwise from there",
          "model_seq_len": 514,
          "q_len": 8
        }
      ],
      "grid_loo_regret_max": 0.20538947866362323,
      "grid_regret_max": 0.0,
      "measured_at": "2026-12-01T14:58:18Z",
      "models": [
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 17.161],
            [2048, 17.714],
            [4096, 18.06],
            [8192, 18.884],
            [16384, 22.126],
            [32768, 28.371],
            [65536, 38.765],
            [131072, 56.6],
            [262144, 91.854],
            [524288, 161.322],
            [1048576, 303.578]
          ],
          "fixed_us": 17.249957404985125,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.07283255823184864,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.03782561120833637,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2475778497833447
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 19.407],
            [2048, 19.796],
            [4096, 20.385],
            [8192, 21.397],
            [16384, 24.872],
            [32768, 33.136],
            [65536, 42.819],
            [131072, 61.376],
            [262144, 97.138],
            [524288, 167.224],
            [1048576, 320.898]
          ],
          "fixed_us": 19.70451262783796,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.11023070556732883,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.051143919822085084,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2590519408155386
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 20.113],
            [2048, 20.141],
            [4096, 21.134],
            [8192, 23.051],
            [16384, 28.655],
            [32768, 37.627],
            [65536, 53.274],
            [131072, 83.808],
            [262144, 144.726],
            [524288, 271.812],
            [1048576, 554.486]
          ],
          "fixed_us": 19.509098804342944,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.04948254543627506,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.02739310089476867,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4306352023573335
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.302],
            [2048, 22.308],
            [4096, 23.73],
            [8192, 27.952],
            [16384, 35.643],
            [32768, 49.983],
            [65536, 79.253],
            [131072, 138.668],
            [262144, 272.03],
            [524288, 526.086],
            [1048576, 1111.048]
          ],
          "fixed_us": 20.000978477253682,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.08104642792310612,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.03285520074766787,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.8286706185830461
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 25.055],
            [2048, 25.99],
            [4096, 29.966],
            [8192, 37.442],
            [16384, 51.896],
            [32768, 80.094],
            [65536, 141.654],
            [131072, 268.682],
            [262144, 518.482],
            [524288, 1045.454],
            [1048576, 2073.4]
          ],
          "fixed_us": 22.234020812729046,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.04744265283289595,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.02613568354640893,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.6334232348773248
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 30.065],
            [2048, 33.766],
            [4096, 41.121],
            [8192, 55.366],
            [16384, 83.914],
            [32768, 144.191],
            [65536, 263.704],
            [131072, 529.876],
            [262144, 1000.77],
            [524288, 2012.31],
            [1048576, 3947.288]
          ],
          "fixed_us": 25.847241548436966,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.03410797243167485,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.019300552157241815,
          "us_per_gflop": 0.0,
          "us_per_mb": 3.218357804046062
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.431],
            [2048, 21.93],
            [4096, 22.153],
            [8192, 22.624],
            [16384, 24.395],
            [32768, 28.665],
            [65536, 43.057],
            [131072, 69.683],
            [262144, 122.624],
            [524288, 224.058],
            [1048576, 423.92]
          ],
          "fixed_us": 19.769755572181527,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.119943527524772,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.053260640029795366,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.6534753754348837
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.757],
            [2048, 23.346],
            [4096, 23.775],
            [8192, 24.385],
            [16384, 26.971],
            [32768, 33.447],
            [65536, 47.011],
            [131072, 73.832],
            [262144, 125.22],
            [524288, 227.898],
            [1048576, 428.902]
          ],
          "fixed_us": 21.766021952071913,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.043379837912012054,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.023388046630510015,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.6755669190653075
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 23.76],
            [2048, 24.371],
            [4096, 25.06],
            [8192, 26.575],
            [16384, 31.264],
            [32768, 44.849],
            [65536, 71.655],
            [131072, 125.845],
            [262144, 232.22],
            [524288, 438.78],
            [1048576, 851.09]
          ],
          "fixed_us": 21.44462534910342,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.09375680916488793,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.045305498354276184,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.3511219472896019
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 25.668],
            [2048, 26.355],
            [4096, 27.342],
            [8192, 31.023],
            [16384, 44.547],
            [32768, 71.377],
            [65536, 124.292],
            [131072, 228.534],
            [262144, 433.088],
            [524288, 841.218],
            [1048576, 1651.258]
          ],
          "fixed_us": 21.785384042199365,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.10804750952741715,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.050434105430603365,
          "us_per_gflop": 0.0,
          "us_per_mb": 2.6681664988773055
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 28.718],
            [2048, 29.574],
            [4096, 33.429],
            [8192, 46.784],
            [16384, 73.594],
            [32768, 126.608],
            [65536, 231.562],
            [131072, 440.709],
            [262144, 856.314],
            [524288, 1688.758],
            [1048576, 3343.658]
          ],
          "fixed_us": 23.00670575983203,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.08670005833168304,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.03748586667850198,
          "us_per_gflop": 0.0,
          "us_per_mb": 5.460926410274105
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 33.651],
            [2048, 37.222],
            [4096, 50.565],
            [8192, 77.29],
            [16384, 129.866],
            [32768, 233.649],
            [65536, 440.39],
            [131072, 850.115],
            [262144, 1673.106],
            [524288, 3315.292],
            [1048576, 6587.932]
          ],
          "fixed_us": 25.77018128641807,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.042944734845634436,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.01872100261938277,
          "us_per_gflop": 0.0,
          "us_per_mb": 10.911803603056867
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 17.494],
            [2048, 17.613],
            [4096, 18.09],
            [8192, 18.844],
            [16384, 20.599],
            [32768, 37.785],
            [65536, 53.165],
            [131072, 83.562],
            [262144, 143.77],
            [524288, 264.252],
            [1048576, 493.736]
          ],
          "fixed_us": 16.05171201855149,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.16546564737733238,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.08297803084884715,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2107404429743085
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 17.759],
            [2048, 17.824],
            [4096, 18.276],
            [8192, 19.213],
            [16384, 34.36],
            [32768, 65.436],
            [65536, 94.962],
            [131072, 154.434],
            [262144, 276.158],
            [524288, 504.386],
            [1048576, 955.866]
          ],
          "fixed_us": 15.19905975454061,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.2646353932400317,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.1277307054977061,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.21802047767451738
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.079],
            [2048, 18.154],
            [4096, 18.72],
            [8192, 33.457],
            [16384, 63.0],
            [32768, 92.193],
            [65536, 151.053],
            [131072, 268.704],
            [262144, 495.384],
            [524288, 949.754],
            [1048576, 1851.524]
          ],
          "fixed_us": 14.736733935478169,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.26398799292595587,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.12620156707200159,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.20948883264495216
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 21.019],
            [2048, 21.954],
            [4096, 23.666],
            [8192, 28.323],
            [16384, 36.219],
            [32768, 50.657],
            [65536, 79.626],
            [131072, 147.246],
            [262144, 272.666],
            [524288, 534.272],
            [1048576, 1074.086]
          ],
          "fixed_us": 19.90736590687344,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.047744141743825574,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.020507077839030562,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.42067561301843476
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 24.251],
            [2048, 25.666],
            [4096, 30.481],
            [8192, 38.064],
            [16384, 52.68],
            [32768, 82.292],
            [65536, 141.557],
            [131072, 272.008],
            [262144, 530.888],
            [524288, 1016.436],
            [1048576, 2034.676]
          ],
          "fixed_us": 22.15695489718714,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.032670969071164624,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.017024728473963045,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.41069139535288113
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 29.645],
            [2048, 33.406],
            [4096, 40.69],
            [8192, 54.707],
            [16384, 83.486],
            [32768, 143.921],
            [65536, 273.093],
            [131072, 524.754],
            [262144, 991.628],
            [524288, 1978.708],
            [1048576, 3930.146]
          ],
          "fixed_us": 25.472024397269546,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.031898715730580784,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.017096791365512735,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4018471381503564
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 19.498],
            [2048, 20.256],
            [4096, 20.193],
            [8192, 20.764],
            [16384, 22.286],
            [32768, 40.819],
            [65536, 59.674],
            [131072, 97.802],
            [262144, 173.46],
            [524288, 319.65],
            [1048576, 609.662]
          ],
          "fixed_us": 17.43679389780292,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.21111167233940842,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.0855012805879572,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.5062029825601142
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 20.054],
            [2048, 19.943],
            [4096, 20.284],
            [8192, 21.17],
            [16384, 38.401],
            [32768, 72.687],
            [65536, 111.107],
            [131072, 185.752],
            [262144, 336.092],
            [524288, 628.792],
            [1048576, 1205.16]
          ],
          "fixed_us": 16.320170068748656,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.24813604284457114,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.12110593002891883,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.5352527803372296
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 20.076],
            [2048, 20.31],
            [4096, 20.79],
            [8192, 37.518],
            [16384, 70.832],
            [32768, 107.854],
            [65536, 183.42],
            [131072, 333.798],
            [262144, 627.034],
            [524288, 1205.576],
            [1048576, 2367.766]
          ],
          "fixed_us": 15.503034505334675,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.22293577799478204,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.11353333811921716,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.5257001835374133
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 25.191],
            [2048, 25.47],
            [4096, 27.043],
            [8192, 30.897],
            [16384, 43.544],
            [32768, 69.3],
            [65536, 119.876],
            [131072, 218.726],
            [262144, 414.698],
            [524288, 803.162],
            [1048576, 1581.164]
          ],
          "fixed_us": 21.57999132763136,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.08904795583372005,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.04277149340278503,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.2788632584254638
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 27.694],
            [2048, 29.228],
            [4096, 32.949],
            [8192, 45.825],
            [16384, 71.545],
            [32768, 121.941],
            [65536, 221.814],
            [131072, 422.155],
            [262144, 823.624],
            [524288, 1619.316],
            [1048576, 3206.708]
          ],
          "fixed_us": 22.73377151988894,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.0674887089153785,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.031104760097369757,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.3102690319859571
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 33.368],
            [2048, 36.802],
            [4096, 49.906],
            [8192, 75.398],
            [16384, 125.661],
            [32768, 225.385],
            [65536, 422.733],
            [131072, 816.221],
            [262144, 1600.482],
            [524288, 3168.372],
            [1048576, 6307.302]
          ],
          "fixed_us": 25.9063786679801,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.03893235086242086,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.0177402491595739,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.3064066594515238
        }
      ],
      "provisional": false,
      "reps": 30,
      "source": "mlaspec calibrate on NVIDIA H200, 2026-12-01T14:58:14Z (full grid, 30 reps)",
      "sweep_check": [
        {
          "config": "B=1,H=16,q=8,S=4096,kv=bf16",
          "cuda_fold_us": 21.11662458628416,
          "cuda_rowwise_us": 18.825500272214413,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=bf16",
          "cuda_fold_us": 28.754181482575156,
          "cuda_rowwise_us": 63.0625459280881,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=bf16",
          "cuda_fold_us": 53.18560004234314,
          "cuda_rowwise_us": 150.86559653282166,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=bf16",
          "cuda_fold_us": 145.6499993801117,
          "cuda_rowwise_us": 497.73599207401276,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=bf16",
          "cuda_fold_us": 546.7780232429504,
          "cuda_rowwise_us": 1849.9500155448914,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=4096,kv=fp8",
          "cuda_fold_us": 25.259249843657017,
          "cuda_rowwise_us": 20.7952493801713,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=fp8",
          "cuda_fold_us": 31.072544780644503,
          "cuda_rowwise_us": 70.8954551003196,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=fp8",
          "cuda_fold_us": 71.75490801984614,
          "cuda_rowwise_us": 183.5039962421764,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=fp8",
          "cuda_fold_us": 232.08600282669067,
          "cuda_rowwise_us": 624.9099969863892,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=fp8",
          "cuda_fold_us": 852.044016122818,
          "cuda_rowwise_us": 2363.1120920181274,
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
