// Built-in cost-model profiles, used when no profile file has an entry for this machine
// (docs/dispatch.md). Same JSON format as the file `mlaspec calibrate` writes.
//
// GPU profiles (kBuiltinGpuProfileJson): the whole file `mlaspec calibrate --out FILE` writes,
// pasted unchanged between the raw-string markers (write to a fresh FILE so it holds only the
// calibrated GPU). This string is the only place to edit; nothing else needs to change.
//
// NVIDIA H200 — MEASURED 2026-12-02 on the H200 by `scripts/gpu-check.sh` (`mlaspec calibrate`,
// full grid: B=1, H 16|128, q_len 2|4|8, S = 1k, 2k, ..., 1M, bf16 and fp8, median of 30 CUDA-graph
// replays per point) on the kernels of 25f8de3 (the narrow kernel for row tiles of <= 16 rows,
// which rowwise runs at H = 16, its fp8 raw tiles freed behind each expansion step's publish
// fence; the 64-row kernel with v28's half-slots otherwise; v31's fp8 fold without clusters; the
// deterministic merge tree of v34; fp8 in f16 since v37, its raw codes in the half freed first
// since v40; v42's mask-free tiles; v44's lazy rescale; v45a's P0 re-store only where WG1 moved a
// max; v46's bf16 start, Q before stage 1's copies); report in
// docs/perf/dispatch-calibration-2026-12-02f.md.
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
          "grid_loo_regret_max": 0.022628637012087616,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=4096",
          "model": "cuda_rowwise below S=3628, cuda_fold from there (cheaper backend changes again at S=11066, 17095)",
          "model_seq_len": 3628,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.07852479270928003,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=9142, cuda_fold from there",
          "model_seq_len": 9142,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.10883704123540339,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=4716, cuda_fold from there",
          "model_seq_len": 4716,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.029803335694537747,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=6520, cuda_fold from there (cheaper backend changes again at S=131072, 131073, 633328)",
          "model_seq_len": 6520,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.04053497289690711,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=4096",
          "model": "cuda_rowwise below S=4086, cuda_fold from there (cheaper backend changes again at S=49818, 114058, 342400, 946794)",
          "model_seq_len": 4086,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.05309030546971649,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=32768",
          "model": "cuda_rowwise below S=29304, cuda_fold from there (cheaper backend changes again at S=37035, 74022, 241332, 1048577)",
          "model_seq_len": 29304,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.038261497636962405,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=32768",
          "model": "cuda_rowwise below S=17386, cuda_fold from there",
          "model_seq_len": 17386,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.11485080078416132,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=9478, cuda_fold from there",
          "model_seq_len": 9478,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.11451444600627747,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=4748, cuda_fold from there",
          "model_seq_len": 4748,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.0015678838991626254,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=11215, cuda_rowwise from there (cheaper backend changes again at S=24749, 275708, 763035, 1048577)",
          "model_seq_len": 11215,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.003175380688913876,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=6070, cuda_rowwise from there (cheaper backend changes again at S=10109, 26076, 82536, 241015, 614276, 1048577)",
          "model_seq_len": 6070,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.000942817224540704,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=26856, cuda_rowwise from there (cheaper backend changes again at S=256931, 1048577)",
          "model_seq_len": 26856,
          "q_len": 8
        }
      ],
      "grid_loo_regret_max": 0.11485080078416132,
      "grid_regret_max": 0.0,
      "measured_at": "2026-12-02T10:00:22Z",
      "models": [
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 18.054],
            [2048, 18.43],
            [4096, 18.324],
            [8192, 18.392],
            [16384, 19.884],
            [32768, 24.759],
            [65536, 34.262],
            [131072, 51.566],
            [262144, 88.708],
            [524288, 162.338],
            [1048576, 304.798]
          ],
          "fixed_us": 16.831731793298292,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.06923348034104393,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.0369437860968216,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.23467251406263076
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 19.983],
            [2048, 20.472],
            [4096, 20.683],
            [8192, 20.615],
            [16384, 22.592],
            [32768, 29.935],
            [65536, 38.49],
            [131072, 56.2],
            [262144, 92.102],
            [524288, 163.552],
            [1048576, 320.142]
          ],
          "fixed_us": 19.29796866962984,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.058171115001167895,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.030923942160972422,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.24417336928217329
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 20.463],
            [2048, 20.613],
            [4096, 21.143],
            [8192, 22.289],
            [16384, 26.972],
            [32768, 34.304],
            [65536, 48.368],
            [131072, 76.372],
            [262144, 134.438],
            [524288, 269.124],
            [1048576, 534.418]
          ],
          "fixed_us": 19.29786562622398,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.06209969386417158,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.03223660739350317,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.3989644579286921
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.002],
            [2048, 21.6],
            [4096, 22.363],
            [8192, 26.6],
            [16384, 33.271],
            [32768, 46.263],
            [65536, 73.629],
            [131072, 137.738],
            [262144, 255.662],
            [524288, 499.944],
            [1048576, 1097.758]
          ],
          "fixed_us": 19.102042931793644,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.11472130215046339,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.047688594040866936,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.7887016779429377
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.6],
            [2048, 22.07],
            [4096, 26.314],
            [8192, 33.099],
            [16384, 46.19],
            [32768, 72.66],
            [65536, 130.869],
            [131072, 250.858],
            [262144, 489.352],
            [524288, 1011.812],
            [1048576, 1946.522]
          ],
          "fixed_us": 18.759181206216294,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.0614753429477235,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.03499151925495327,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.54119623773952
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.633],
            [2048, 25.821],
            [4096, 32.301],
            [8192, 45.164],
            [16384, 73.364],
            [32768, 129.283],
            [65536, 241.186],
            [131072, 473.42],
            [262144, 944.24],
            [524288, 1917.32],
            [1048576, 3775.814]
          ],
          "fixed_us": 18.40639698538412,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.040153273319321614,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.02523079323517823,
          "us_per_gflop": 0.0,
          "us_per_mb": 3.016536337694242
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 20.16],
            [2048, 20.309],
            [4096, 20.303],
            [8192, 20.445],
            [16384, 21.521],
            [32768, 24.565],
            [65536, 35.955],
            [131072, 58.213],
            [262144, 103.672],
            [524288, 190.928],
            [1048576, 361.172]
          ],
          "fixed_us": 18.01122556646038,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.14810374847869356,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.07134771455642355,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.5400162019952215
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.111],
            [2048, 22.108],
            [4096, 22.119],
            [8192, 22.192],
            [16384, 23.609],
            [32768, 28.159],
            [65536, 39.492],
            [131072, 61.613],
            [262144, 106.528],
            [524288, 192.948],
            [1048576, 364.064]
          ],
          "fixed_us": 19.917761782019685,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.08008049523421357,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.0449928572246102,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.5560839960469632
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.113],
            [2048, 22.076],
            [4096, 22.137],
            [8192, 23.839],
            [16384, 28.126],
            [32768, 38.994],
            [65536, 59.802],
            [131072, 102.331],
            [262144, 184.878],
            [524288, 347.8],
            [1048576, 676.108]
          ],
          "fixed_us": 19.85280095101415,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.07361463645525823,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.037470569940675096,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.0721141097025921
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.706],
            [2048, 22.76],
            [4096, 23.971],
            [8192, 27.807],
            [16384, 38.445],
            [32768, 59.243],
            [65536, 100.079],
            [131072, 181.43],
            [262144, 342.88],
            [524288, 663.786],
            [1048576, 1305.716]
          ],
          "fixed_us": 19.719852537446073,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.07663490443149201,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.03499241239273286,
          "us_per_gflop": 0.0,
          "us_per_mb": 2.1122317501192738
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.535],
            [2048, 23.514],
            [4096, 27.344],
            [8192, 38.084],
            [16384, 58.626],
            [32768, 100.165],
            [65536, 182.352],
            [131072, 346.165],
            [262144, 677.004],
            [524288, 1335.454],
            [1048576, 2651.748]
          ],
          "fixed_us": 18.546396277193193,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.06388053609828648,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.026337828337020128,
          "us_per_gflop": 0.0,
          "us_per_mb": 4.321325202826918
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 24.004],
            [2048, 26.952],
            [4096, 37.604],
            [8192, 58.523],
            [16384, 99.802],
            [32768, 182.221],
            [65536, 346.649],
            [131072, 676.048],
            [262144, 1332.912],
            [524288, 2648.746],
            [1048576, 5279.52]
          ],
          "fixed_us": 17.759987239370176,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.04665565361650614,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.01925351041773677,
          "us_per_gflop": 0.0,
          "us_per_mb": 8.68728926664629
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 17.998],
            [2048, 18.084],
            [4096, 18.398],
            [8192, 18.71],
            [16384, 19.444],
            [32768, 34.89],
            [65536, 50.373],
            [131072, 80.454],
            [262144, 140.56],
            [524288, 282.042],
            [1048576, 495.674]
          ],
          "fixed_us": 15.89210070182556,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.2210646806197747,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.08730783786896351,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.20797320107763118
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.169],
            [2048, 18.586],
            [4096, 18.749],
            [8192, 19.114],
            [16384, 33.779],
            [32768, 63.455],
            [65536, 92.918],
            [131072, 151.66],
            [262144, 278.448],
            [524288, 506.626],
            [1048576, 953.076]
          ],
          "fixed_us": 15.521033147223172,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.24162287042418407,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.12298077262684763,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.21591081746305746
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.758],
            [2048, 18.657],
            [4096, 19.067],
            [8192, 33.42],
            [16384, 62.551],
            [32768, 91.522],
            [65536, 149.686],
            [131072, 272.058],
            [262144, 498.106],
            [524288, 947.45],
            [1048576, 1851.596]
          ],
          "fixed_us": 15.206304589703604,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.25251436034315866,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.12209887492896448,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.20894296553667238
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 20.939],
            [2048, 21.215],
            [4096, 22.276],
            [8192, 26.651],
            [16384, 33.585],
            [32768, 46.694],
            [65536, 73.79],
            [131072, 137.738],
            [262144, 257.458],
            [524288, 514.844],
            [1048576, 1015.014]
          ],
          "fixed_us": 19.074026738999414,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.06310801230725827,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.03367529784639211,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.39321276896325624
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 20.654],
            [2048, 21.841],
            [4096, 26.315],
            [8192, 33.365],
            [16384, 46.592],
            [32768, 74.082],
            [65536, 129.219],
            [131072, 251.658],
            [262144, 501.694],
            [524288, 972.396],
            [1048576, 1959.93]
          ],
          "fixed_us": 18.46515214565891,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.04770021771224253,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.02681809690551614,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.3871580957349662
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 22.19],
            [2048, 25.502],
            [4096, 32.049],
            [8192, 44.856],
            [16384, 72.467],
            [32768, 129.589],
            [65536, 238.542],
            [131072, 498.554],
            [262144, 937.644],
            [524288, 1867.764],
            [1048576, 3763.038]
          ],
          "fixed_us": 18.044619676052317,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.04955611720276232,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.02744233094112896,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.377332986873692
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.722],
            [2048, 18.917],
            [4096, 19.1],
            [8192, 19.473],
            [16384, 20.728],
            [32768, 36.679],
            [65536, 52.887],
            [131072, 86.134],
            [262144, 150.258],
            [524288, 275.08],
            [1048576, 524.756]
          ],
          "fixed_us": 16.683995923007807,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.20049608529176677,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.08148674363435153,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4344572000394602
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.832],
            [2048, 19.291],
            [4096, 19.455],
            [8192, 19.906],
            [16384, 35.509],
            [32768, 66.754],
            [65536, 99.457],
            [131072, 165.08],
            [262144, 293.404],
            [524288, 543.074],
            [1048576, 1042.178]
          ],
          "fixed_us": 15.950855749578919,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.24292901511988307,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.12255570387095648,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4657745839344988
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 19.423],
            [2048, 19.634],
            [4096, 19.862],
            [8192, 35.6],
            [16384, 66.433],
            [32768, 98.941],
            [65536, 164.224],
            [131072, 290.768],
            [262144, 542.046],
            [524288, 1038.09],
            [1048576, 2032.156]
          ],
          "fixed_us": 15.62635827984633,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.24605212358451145,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.1223553173535565,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.45644513612583565
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 22.916],
            [2048, 22.987],
            [4096, 24.187],
            [8192, 27.843],
            [16384, 38.385],
            [32768, 59.306],
            [65536, 100.362],
            [131072, 181.91],
            [262144, 342.914],
            [524288, 662.948],
            [1048576, 1307.114]
          ],
          "fixed_us": 19.877888033217715,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.07822314051156043,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.03662188416183593,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.0554756924649713
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 22.686],
            [2048, 23.728],
            [4096, 27.377],
            [8192, 38.049],
            [16384, 58.75],
            [32768, 100.061],
            [65536, 182.064],
            [131072, 347.264],
            [262144, 676.708],
            [524288, 1335.216],
            [1048576, 2653.344]
          ],
          "fixed_us": 18.664901411521267,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.0649765060544617,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.027418658015396127,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.0796762266519984
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 24.188],
            [2048, 27.065],
            [4096, 37.705],
            [8192, 58.592],
            [16384, 100.035],
            [32768, 182.05],
            [65536, 346.291],
            [131072, 675.131],
            [262144, 1332.966],
            [524288, 2648.978],
            [1048576, 5281.214]
          ],
          "fixed_us": 17.903900659352985,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.04811977153665614,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.019793845516072956,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.085157726171434
        }
      ],
      "provisional": false,
      "reps": 30,
      "source": "mlaspec calibrate on NVIDIA H200, 2026-12-02T10:00:19Z (full grid, 30 reps)",
      "sweep_check": [
        {
          "config": "B=1,H=16,q=8,S=4096,kv=bf16",
          "cuda_fold_us": 21.10724989324808,
          "cuda_rowwise_us": 18.98675039410591,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=bf16",
          "cuda_fold_us": 26.622181588953193,
          "cuda_rowwise_us": 62.68109245733781,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=bf16",
          "cuda_fold_us": 48.25280010700226,
          "cuda_rowwise_us": 149.57280158996582,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=bf16",
          "cuda_fold_us": 133.67799669504166,
          "cuda_rowwise_us": 502.9339790344238,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=bf16",
          "cuda_fold_us": 537.3519957065582,
          "cuda_rowwise_us": 1849.4600057601929,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=4096,kv=fp8",
          "cuda_fold_us": 22.201874293386936,
          "cuda_rowwise_us": 19.779250025749207,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=fp8",
          "cuda_fold_us": 27.952726591717113,
          "cuda_rowwise_us": 66.02527336640792,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=fp8",
          "cuda_fold_us": 59.352728453549474,
          "cuda_rowwise_us": 162.0494560761885,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=fp8",
          "cuda_fold_us": 184.11599844694138,
          "cuda_rowwise_us": 541.5280163288116,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=fp8",
          "cuda_fold_us": 675.3140091896057,
          "cuda_rowwise_us": 2030.701994895935,
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
