// Built-in cost-model profiles, used when no profile file has an entry for this machine
// (docs/dispatch.md). Same JSON format as the file `mlaspec calibrate` writes.
//
// GPU profiles (kBuiltinGpuProfileJson): the whole file `mlaspec calibrate --out FILE` writes,
// pasted unchanged between the raw-string markers (write to a fresh FILE so it holds only the
// calibrated GPU). This string is the only place to edit; nothing else needs to change.
//
// NVIDIA H200 — MEASURED 2026-12-01 on the H200 by `scripts/gpu-check.sh` (`mlaspec calibrate`,
// full grid: B=1, H 16|128, q_len 2|4|8, S = 1k, 2k, ..., 1M, bf16 and fp8, median of 30 CUDA-graph
// replays per point) on the kernels of v23 (the narrow kernel for row tiles of <= 16 rows, which
// rowwise runs at H = 16; the 64-row kernel of v20 otherwise) and v24's combine; report in
// docs/perf/dispatch-calibration-2026-12-01f.md. Recalibrate whenever the kernels change.
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
          "grid_loo_regret_max": 0.07449106454819265,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=1024",
          "model": "cuda_rowwise below S=1024, cuda_fold from there (cheaper backend changes again at S=1743, 18653)",
          "model_seq_len": 1024,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.12331575124241523,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=9822, cuda_fold from there",
          "model_seq_len": 9822,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.1277651519343197,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=4830, cuda_fold from there",
          "model_seq_len": 4830,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.012547002538049856,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=4096",
          "model": "cuda_fold below S=937, cuda_rowwise from there (cheaper backend changes again at S=4063, 89832, 446314, 538427)",
          "model_seq_len": 937,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.0565652999047459,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=4096",
          "model": "cuda_rowwise below S=2953, cuda_fold from there (cheaper backend changes again at S=397588, 1048577)",
          "model_seq_len": 2953,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.028841549730354243,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=32768",
          "model": "cuda_rowwise below S=24602, cuda_fold from there (cheaper backend changes again at S=110797, 183982, 355965, 1048577)",
          "model_seq_len": 24602,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.08697264018042294,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=32768",
          "model": "cuda_rowwise below S=18620, cuda_fold from there",
          "model_seq_len": 18620,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.17157473947517743,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=10133, cuda_fold from there",
          "model_seq_len": 10133,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.21719689749977045,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=5282, cuda_fold from there",
          "model_seq_len": 5282,
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
          "model": "cuda_rowwise cheaper at every S",
          "model_seq_len": 0,
          "q_len": 8
        }
      ],
      "grid_loo_regret_max": 0.21719689749977045,
      "grid_regret_max": 0.0,
      "measured_at": "2026-12-01T16:21:08Z",
      "models": [
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 17.47],
            [2048, 18.035],
            [4096, 18.342],
            [8192, 18.551],
            [16384, 20.787],
            [32768, 25.453],
            [65536, 35.613],
            [131072, 53.474],
            [262144, 88.132],
            [524288, 158.276],
            [1048576, 299.592]
          ],
          "fixed_us": 16.97702241615504,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.034907617238390865,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.020216120280687273,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.235373862098021
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 19.874],
            [2048, 20.573],
            [4096, 21.113],
            [8192, 21.206],
            [16384, 24.162],
            [32768, 30.841],
            [65536, 40.787],
            [131072, 58.392],
            [262144, 93.54],
            [524288, 165.13],
            [1048576, 316.81]
          ],
          "fixed_us": 19.851733501434826,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.05391701667116944,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.029695742061544673,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.24817179245357854
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 20.419],
            [2048, 20.819],
            [4096, 21.45],
            [8192, 22.718],
            [16384, 28.794],
            [32768, 37.317],
            [65536, 53.334],
            [131072, 83.472],
            [262144, 145.354],
            [524288, 285.484],
            [1048576, 555.318]
          ],
          "fixed_us": 19.67426864605815,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.0466416777062455,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.02577626301949264,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4347649094499138
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.017],
            [2048, 22.052],
            [4096, 23.18],
            [8192, 27.825],
            [16384, 35.408],
            [32768, 49.703],
            [65536, 78.766],
            [131072, 144.776],
            [262144, 272.63],
            [524288, 524.152],
            [1048576, 1126.846]
          ],
          "fixed_us": 19.63584334034255,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.08353803485655742,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.033180231853475725,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.8386668362308644
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.611],
            [2048, 22.981],
            [4096, 26.916],
            [8192, 34.529],
            [16384, 48.965],
            [32768, 76.962],
            [65536, 137.448],
            [131072, 263.854],
            [262144, 512.328],
            [524288, 1048.07],
            [1048576, 2068.61]
          ],
          "fixed_us": 19.46998549650715,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.05424006803116266,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.032038708034692484,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.6230197383991172
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 23.636],
            [2048, 26.768],
            [4096, 34.038],
            [8192, 48.484],
            [16384, 77.976],
            [32768, 137.622],
            [65536, 260.014],
            [131072, 523.658],
            [262144, 981.82],
            [524288, 1995.724],
            [1048576, 3935.582]
          ],
          "fixed_us": 19.211451715483754,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.03749538371090522,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.019467094572681025,
          "us_per_gflop": 0.0,
          "us_per_mb": 3.2107816652969268
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.286],
            [2048, 22.273],
            [4096, 22.403],
            [8192, 22.335],
            [16384, 23.414],
            [32768, 26.476],
            [65536, 40.505],
            [131072, 67.52],
            [262144, 120.524],
            [524288, 224.084],
            [1048576, 422.298]
          ],
          "fixed_us": 19.4831886055065,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.1862262614950687,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.08530783897387642,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.6317440652725897
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 23.114],
            [2048, 24.113],
            [4096, 24.326],
            [8192, 24.333],
            [16384, 26.08],
            [32768, 31.344],
            [65536, 45.378],
            [131072, 72.25],
            [262144, 124.738],
            [524288, 228.078],
            [1048576, 429.942]
          ],
          "fixed_us": 21.682335887682928,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.09077186699585438,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.047618294982608715,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.6626560504977452
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 24.47],
            [2048, 24.937],
            [4096, 25.385],
            [8192, 26.659],
            [16384, 31.185],
            [32768, 45.013],
            [65536, 72.203],
            [131072, 126.984],
            [262144, 234.796],
            [524288, 441.08],
            [1048576, 853.098]
          ],
          "fixed_us": 21.752625406724576,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.10768842890206076,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.052652225244030244,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.355334119748619
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 25.434],
            [2048, 25.922],
            [4096, 26.833],
            [8192, 30.871],
            [16384, 44.509],
            [32768, 71.582],
            [65536, 124.657],
            [131072, 230.216],
            [262144, 435.494],
            [524288, 841.052],
            [1048576, 1650.13]
          ],
          "fixed_us": 21.45653479588878,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.10493591324583784,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.050343199818851166,
          "us_per_gflop": 0.0,
          "us_per_mb": 2.6816027613364417
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 25.496],
            [2048, 26.5],
            [4096, 30.358],
            [8192, 43.866],
            [16384, 70.784],
            [32768, 123.734],
            [65536, 228.248],
            [131072, 436.93],
            [262144, 852.502],
            [524288, 1684.06],
            [1048576, 3341.136]
          ],
          "fixed_us": 19.982900820757322,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.09004717642685756,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.039656302486864616,
          "us_per_gflop": 0.0,
          "us_per_mb": 5.45383312496581
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 26.753],
            [2048, 30.38],
            [4096, 43.822],
            [8192, 70.448],
            [16384, 122.99],
            [32768, 226.178],
            [65536, 431.586],
            [131072, 841.168],
            [262144, 1664.284],
            [524288, 3303.108],
            [1048576, 6571.414]
          ],
          "fixed_us": 18.998925664029752,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.049931031346903465,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.02209699480563819,
          "us_per_gflop": 0.0,
          "us_per_mb": 10.881467815680795
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 17.815],
            [2048, 17.928],
            [4096, 18.26],
            [8192, 18.541],
            [16384, 19.346],
            [32768, 34.78],
            [65536, 50.149],
            [131072, 80.614],
            [262144, 140.512],
            [524288, 262.668],
            [1048576, 493.764]
          ],
          "fixed_us": 15.825794890690238,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.21699318267013812,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.0854683111391174,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.20445544065764035
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.099],
            [2048, 18.44],
            [4096, 18.615],
            [8192, 18.878],
            [16384, 33.543],
            [32768, 63.2],
            [65536, 93.39],
            [131072, 152.258],
            [262144, 270.514],
            [524288, 508.776],
            [1048576, 953.67]
          ],
          "fixed_us": 15.375620457075705,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.2446260057748857,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.12500958873018073,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2151299056185144
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.526],
            [2048, 18.628],
            [4096, 19.02],
            [8192, 33.403],
            [16384, 62.956],
            [32768, 92.14],
            [65536, 151.232],
            [131072, 266.658],
            [262144, 499.138],
            [524288, 956.518],
            [1048576, 1856.822]
          ],
          "fixed_us": 15.109333586352397,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.2575283164531057,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.12287797801455151,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.20950002212735092
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 20.97],
            [2048, 21.347],
            [4096, 23.189],
            [8192, 28.162],
            [16384, 35.929],
            [32768, 50.221],
            [65536, 79.59],
            [131072, 142.982],
            [262144, 270.54],
            [524288, 525.374],
            [1048576, 1062.998]
          ],
          "fixed_us": 19.643706074514043,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.03676512189432657,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.02061398500841285,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4156898457997981
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 21.136],
            [2048, 22.538],
            [4096, 27.389],
            [8192, 35.078],
            [16384, 49.726],
            [32768, 79.127],
            [65536, 139.17],
            [131072, 264.314],
            [262144, 541.308],
            [524288, 1010.462],
            [1048576, 2016.862]
          ],
          "fixed_us": 19.075845212805604,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.04821335025978635,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.021201151484328808,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.41072059758244334
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 22.655],
            [2048, 26.392],
            [4096, 33.676],
            [8192, 47.773],
            [16384, 77.298],
            [32768, 138.472],
            [65536, 267.514],
            [131072, 518.914],
            [262144, 991.194],
            [524288, 1971.866],
            [1048576, 3926.502]
          ],
          "fixed_us": 18.542524541708598,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.027615726647147287,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.016339442691310987,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4032580616469819
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 19.878],
            [2048, 20.33],
            [4096, 20.243],
            [8192, 20.352],
            [16384, 21.541],
            [32768, 38.274],
            [65536, 56.956],
            [131072, 93.83],
            [262144, 167.922],
            [524288, 310.134],
            [1048576, 594.382]
          ],
          "fixed_us": 17.3193789115665,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.22880948244746602,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.08905233335055411,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.48478819750375796
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 20.17],
            [2048, 20.458],
            [4096, 20.509],
            [8192, 20.769],
            [16384, 37.306],
            [32768, 70.636],
            [65536, 107.983],
            [131072, 182.643],
            [262144, 329.96],
            [524288, 613.746],
            [1048576, 1181.968]
          ],
          "fixed_us": 16.45004754160735,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.2657215853143491,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.12208290832343628,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.5212464866112388
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 20.452],
            [2048, 20.717],
            [4096, 20.856],
            [8192, 37.432],
            [16384, 70.357],
            [32768, 107.6],
            [65536, 181.973],
            [131072, 329.925],
            [262144, 615.408],
            [524288, 1180.464],
            [1048576, 2311.886]
          ],
          "fixed_us": 15.889007471884103,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.22878795817244413,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.11604120330500023,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.5159367580203021
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 25.017],
            [2048, 25.083],
            [4096, 26.364],
            [8192, 30.665],
            [16384, 43.75],
            [32768, 69.193],
            [65536, 119.605],
            [131072, 219.696],
            [262144, 415.644],
            [524288, 803.244],
            [1048576, 1579.932]
          ],
          "fixed_us": 21.24001760827235,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.09047948640742076,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.0434013156925289,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.2827801540866985
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 24.467],
            [2048, 26.024],
            [4096, 30.145],
            [8192, 43.047],
            [16384, 68.529],
            [32768, 118.85],
            [65536, 219.407],
            [131072, 419.541],
            [262144, 821.114],
            [524288, 1615.33],
            [1048576, 3203.428]
          ],
          "fixed_us": 19.72024808218506,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.06765149390530611,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.0306186876197905,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.3105060575313274
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 26.179],
            [2048, 29.984],
            [4096, 43.033],
            [8192, 68.463],
            [16384, 118.539],
            [32768, 217.381],
            [65536, 414.289],
            [131072, 806.341],
            [262144, 1589.198],
            [524288, 3156.674],
            [1048576, 6290.046]
          ],
          "fixed_us": 18.983704132628123,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.04312164216888115,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.01872288062497359,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.3025987226223121
        }
      ],
      "provisional": false,
      "reps": 30,
      "source": "mlaspec calibrate on NVIDIA H200, 2026-12-01T16:21:04Z (full grid, 30 reps)",
      "sweep_check": [
        {
          "config": "B=1,H=16,q=8,S=4096,kv=bf16",
          "cuda_fold_us": 21.542875096201897,
          "cuda_rowwise_us": 18.903374671936035,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=bf16",
          "cuda_fold_us": 28.631272641095247,
          "cuda_rowwise_us": 62.69563599066301,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=bf16",
          "cuda_fold_us": 52.905598282814026,
          "cuda_rowwise_us": 150.53120255470276,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=bf16",
          "cuda_fold_us": 144.87199485301971,
          "cuda_rowwise_us": 497.05399572849274,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=bf16",
          "cuda_fold_us": 559.6240162849426,
          "cuda_rowwise_us": 1851.2979745864868,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=4096,kv=fp8",
          "cuda_fold_us": 25.470124557614326,
          "cuda_rowwise_us": 20.836499519646168,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=fp8",
          "cuda_fold_us": 31.103272329677235,
          "cuda_rowwise_us": 70.13508948412809,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=fp8",
          "cuda_fold_us": 71.68727300383827,
          "cuda_rowwise_us": 180.48581751910123,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=fp8",
          "cuda_fold_us": 232.6119989156723,
          "cuda_rowwise_us": 612.716019153595,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=fp8",
          "cuda_fold_us": 852.183997631073,
          "cuda_rowwise_us": 2306.2039613723755,
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
