// Built-in cost-model profiles, used when no profile file has an entry for this machine
// (docs/dispatch.md). Same JSON format as the file `mlaspec calibrate` writes.
//
// GPU profiles (kBuiltinGpuProfileJson): the whole file `mlaspec calibrate --out FILE` writes,
// pasted unchanged between the raw-string markers (write to a fresh FILE so it holds only the
// calibrated GPU). This string is the only place to edit; nothing else needs to change.
//
// NVIDIA H200 — MEASURED 2026-12-02 on the H200 by `scripts/gpu-check.sh` (`mlaspec calibrate`,
// full grid: B=1, H 16|128, q_len 2|4|8, S = 1k, 2k, ..., 1M, bf16 and fp8, median of 30 CUDA-graph
// replays per point) on the kernels of a2f5fe0 (the narrow kernel for row tiles of <= 16 rows,
// which rowwise runs at H = 16, its fp8 raw tiles freed behind each expansion step's publish
// fence; the 64-row kernel with v28's half-slots otherwise; v31's fp8 fold without clusters; the
// deterministic merge tree of v34; fp8 in f16 since v37, its raw codes in the half freed first
// since v40; v42's mask-free tiles; v44's lazy rescale; v45a's P0 re-store only where WG1 moved a
// max; v46's bf16 start, Q before stage 1's copies; the 64-row bf16 kernel's Q copied by TMA and
// the narrow kernel's row-per-warp epilogue stores, seventeenth session); report in
// docs/perf/dispatch-calibration-2026-12-02g.md.
// Recalibrate whenever the kernels change.
//
// cpu: the CPU reference on a small multi-core host (~5 GB/s KV, ~10 GFLOP/s); informative only
// (on a CPU-only build it is the only candidate).
#pragma once

#include <string_view>

namespace mlaspec::attn::detail {

// ---- GPU profiles: `mlaspec calibrate --out FILE` output, pasted whole between the markers ----
inline constexpr std::string_view kBuiltinGpuProfileJson = R"json({
  "format": "mlaspec-profile",
  "machines": {
    "NVIDIA H200": {
      "crossovers": [
        {
          "grid_loo_regret_max": 0.04962455824645806,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=1024",
          "model": "cuda_rowwise below S=1024, cuda_fold from there (cheaper backend changes again at S=10477, 17920)",
          "model_seq_len": 1024,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.02181727943533729,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=8509, cuda_fold from there",
          "model_seq_len": 8509,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.03620527320999889,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=4321, cuda_fold from there",
          "model_seq_len": 4321,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.031994690779673096,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=1024",
          "model": "cuda_rowwise below S=1024, cuda_fold from there (cheaper backend changes again at S=1174, 8726, 635142)",
          "model_seq_len": 1024,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.08060584952923655,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=4096",
          "model": "cuda_rowwise below S=3365, cuda_fold from there (cheaper backend changes again at S=49177, 139219, 428658, 1048577)",
          "model_seq_len": 3365,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.05985213041237447,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=65536",
          "model": "cuda_rowwise below S=36711, cuda_fold from there (cheaper backend changes again at S=107614, 1048577)",
          "model_seq_len": 36711,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.123001697352491,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=32768",
          "model": "cuda_rowwise below S=19879, cuda_fold from there",
          "model_seq_len": 19879,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.2059882406050304,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=10650, cuda_fold from there",
          "model_seq_len": 10650,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.20294612839093262,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=5345, cuda_fold from there",
          "model_seq_len": 5345,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.000340172921689863,
          "grid_regret_max": 4.722628403452944e-06,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=16384, cuda_rowwise from there (cheaper backend changes again at S=16385, 89014, 805890, 1048577)",
          "model_seq_len": 16384,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.0009964096034746905,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=4305, cuda_rowwise from there (cheaper backend changes again at S=32339, 213313)",
          "model_seq_len": 4305,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.001178618869314807,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=9604, cuda_rowwise from there (cheaper backend changes again at S=41437, 174382, 356831, 836034)",
          "model_seq_len": 9604,
          "q_len": 8
        }
      ],
      "grid_loo_regret_max": 0.2059882406050304,
      "grid_regret_max": 4.722628403452944e-06,
      "measured_at": "2026-12-02T11:21:38Z",
      "models": [
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 15.579],
            [2048, 16.315],
            [4096, 16.525],
            [8192, 16.809],
            [16384, 18.908],
            [32768, 24.633],
            [65536, 33.514],
            [131072, 50.496],
            [262144, 87.644],
            [524288, 160.01],
            [1048576, 306.55]
          ],
          "fixed_us": 15.165996863452468,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.04083677224623883,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.02187272717700588,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2391680060087584
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 16.703],
            [2048, 17.594],
            [4096, 17.843],
            [8192, 18.232],
            [16384, 21.006],
            [32768, 28.623],
            [65536, 37.461],
            [131072, 54.696],
            [262144, 90.418],
            [524288, 164.454],
            [1048576, 319.418]
          ],
          "fixed_us": 16.71132867232602,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.08510961013636176,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.035507648355242345,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2510237458633225
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 17.416],
            [2048, 17.792],
            [4096, 18.457],
            [8192, 19.841],
            [16384, 25.183],
            [32768, 32.731],
            [65536, 46.654],
            [131072, 74.172],
            [262144, 135.194],
            [524288, 244.884],
            [1048576, 538.942]
          ],
          "fixed_us": 16.78953343062259,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.07877389256409506,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.03493210169333653,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.39711419773884465
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 18.285],
            [2048, 18.841],
            [4096, 20.092],
            [8192, 24.395],
            [16384, 31.292],
            [32768, 44.079],
            [65536, 71.542],
            [131072, 132.17],
            [262144, 256.77],
            [524288, 501.022],
            [1048576, 1105.564]
          ],
          "fixed_us": 16.668785014470174,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.12074906580825928,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.048075187754003434,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.7909200201690926
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 19.537],
            [2048, 20.064],
            [4096, 23.633],
            [8192, 30.248],
            [16384, 43.462],
            [32768, 69.567],
            [65536, 127.917],
            [131072, 250.574],
            [262144, 490.064],
            [524288, 1007.316],
            [1048576, 2001.608]
          ],
          "fixed_us": 16.451845591505887,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.07258183607788338,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.04425975948044719,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.5408189335725748
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.594],
            [2048, 23.596],
            [4096, 30.031],
            [8192, 43.154],
            [16384, 70.87],
            [32768, 129.195],
            [65536, 249.896],
            [131072, 498.744],
            [262144, 944.776],
            [524288, 1926.218],
            [1048576, 3798.234]
          ],
          "fixed_us": 16.50031584253955,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.06859930273694759,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.03611948135611601,
          "us_per_gflop": 0.0,
          "us_per_mb": 3.062523370025994
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.502],
            [2048, 20.379],
            [4096, 20.31],
            [8192, 20.439],
            [16384, 21.419],
            [32768, 24.409],
            [65536, 35.939],
            [131072, 57.88],
            [262144, 103.292],
            [524288, 190.682],
            [1048576, 361.382]
          ],
          "fixed_us": 18.176666329824755,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.1589937982990124,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.08123641139171407,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.5358229044304385
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.052],
            [2048, 21.987],
            [4096, 22.101],
            [8192, 22.183],
            [16384, 23.595],
            [32768, 28.047],
            [65536, 39.333],
            [131072, 61.323],
            [262144, 106.084],
            [524288, 193.446],
            [1048576, 366.114]
          ],
          "fixed_us": 19.853836499534868,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.08219009289960666,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.045394793441549126,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.5562173120757083
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.029],
            [2048, 21.93],
            [4096, 22.049],
            [8192, 23.74],
            [16384, 27.95],
            [32768, 38.682],
            [65536, 59.227],
            [131072, 101.28],
            [262144, 185.106],
            [524288, 348.774],
            [1048576, 677.28]
          ],
          "fixed_us": 19.7208131565895,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.07612012284604397,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.03859148405096439,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.0697940620490667
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.638],
            [2048, 22.787],
            [4096, 23.791],
            [8192, 27.608],
            [16384, 38.437],
            [32768, 59.103],
            [65536, 100.1],
            [131072, 182.606],
            [262144, 343.808],
            [524288, 666.258],
            [1048576, 1310.986]
          ],
          "fixed_us": 19.603814717971805,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.07882262315979638,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.03706989121360227,
          "us_per_gflop": 0.0,
          "us_per_mb": 2.1195206108566302
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.514],
            [2048, 23.719],
            [4096, 27.402],
            [8192, 38.187],
            [16384, 58.8],
            [32768, 100.104],
            [65536, 182.307],
            [131072, 346.821],
            [262144, 677.112],
            [524288, 1335.546],
            [1048576, 2655.808]
          ],
          "fixed_us": 18.627613781455246,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.05933127880160294,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.025403763115306975,
          "us_per_gflop": 0.0,
          "us_per_mb": 4.323547131726829
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 23.95],
            [2048, 26.964],
            [4096, 37.671],
            [8192, 58.446],
            [16384, 100.066],
            [32768, 182.319],
            [65536, 346.783],
            [131072, 675.71],
            [262144, 1334.424],
            [524288, 2649.664],
            [1048576, 5282.738]
          ],
          "fixed_us": 17.74540873042659,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.044946033847623634,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.018634558726119087,
          "us_per_gflop": 0.0,
          "us_per_mb": 8.693738446662465
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 16.353],
            [2048, 16.514],
            [4096, 16.818],
            [8192, 17.162],
            [16384, 18.207],
            [32768, 31.772],
            [65536, 47.072],
            [131072, 77.264],
            [262144, 136.866],
            [524288, 262.054],
            [1048576, 493.25]
          ],
          "fixed_us": 14.414108969344484,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.20906763979197418,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.07944211737407254,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2013120403726061
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 16.506],
            [2048, 16.915],
            [4096, 17.14],
            [8192, 17.842],
            [16384, 30.519],
            [32768, 56.682],
            [65536, 86.667],
            [131072, 145.276],
            [262144, 267.632],
            [524288, 500.228],
            [1048576, 953.928]
          ],
          "fixed_us": 13.899377295159587,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.22389838756550584,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.10628315819400072,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2102815606411354
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 16.988],
            [2048, 17.135],
            [4096, 17.812],
            [8192, 30.396],
            [16384, 56.481],
            [32768, 85.029],
            [65536, 143.898],
            [131072, 271.816],
            [262144, 495.756],
            [524288, 939.772],
            [1048576, 1839.794]
          ],
          "fixed_us": 13.521354719382083,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.20982491609142728,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.10522344636172427,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.20602598815195236
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.362],
            [2048, 18.52],
            [4096, 19.738],
            [8192, 24.381],
            [16384, 31.472],
            [32768, 44.769],
            [65536, 71.701],
            [131072, 132.402],
            [262144, 259.836],
            [524288, 517.052],
            [1048576, 1018.202]
          ],
          "fixed_us": 16.590406786635395,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.06354439396083489,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.0352973088526602,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.3951561430869865
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.377],
            [2048, 19.571],
            [4096, 23.867],
            [8192, 30.63],
            [16384, 43.888],
            [32768, 71.202],
            [65536, 125.832],
            [131072, 248.73],
            [262144, 529.566],
            [524288, 975.84],
            [1048576, 1962.408]
          ],
          "fixed_us": 16.04323884628585,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.0822075700888707,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.03944245865501108,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.3890763100981584
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 20.178],
            [2048, 23.34],
            [4096, 29.654],
            [8192, 42.411],
            [16384, 70.698],
            [32768, 127.731],
            [65536, 264.853],
            [131072, 487.348],
            [262144, 939.566],
            [524288, 1888.432],
            [1048576, 3770.876]
          ],
          "fixed_us": 15.785584302402366,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.0664390336794366,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.0339852664297108,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.3832424032127939
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 16.883],
            [2048, 17.271],
            [4096, 17.294],
            [8192, 17.652],
            [16384, 19.073],
            [32768, 32.945],
            [65536, 49.214],
            [131072, 81.698],
            [262144, 146.488],
            [524288, 271.536],
            [1048576, 519.214]
          ],
          "fixed_us": 14.89074573450879,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.20088923638435485,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.07854057785187375,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.42458140513625375
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 17.103],
            [2048, 17.463],
            [4096, 17.652],
            [8192, 18.394],
            [16384, 32.092],
            [32768, 59.482],
            [65536, 91.849],
            [131072, 156.174],
            [262144, 283.042],
            [524288, 532.278],
            [1048576, 1034.98]
          ],
          "fixed_us": 14.197462574717918,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.23405375719017685,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.10813722355947819,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4504538255337574
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 17.485],
            [2048, 17.727],
            [4096, 18.329],
            [8192, 31.935],
            [16384, 58.899],
            [32768, 91.039],
            [65536, 154.433],
            [131072, 282.653],
            [262144, 531.218],
            [524288, 1025.658],
            [1048576, 2014.75]
          ],
          "fixed_us": 13.699380526980034,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.20477347317541983,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.10325763602422985,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.44416658831080685
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 22.899],
            [2048, 22.928],
            [4096, 23.976],
            [8192, 27.67],
            [16384, 38.437],
            [32768, 59.265],
            [65536, 100.31],
            [131072, 182.123],
            [262144, 343.028],
            [524288, 665.888],
            [1048576, 1311.432]
          ],
          "fixed_us": 19.764015606850663,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.08240931481783731,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.03828937167929754,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.0579494749029024
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 22.759],
            [2048, 23.909],
            [4096, 27.406],
            [8192, 38.115],
            [16384, 58.679],
            [32768, 100.108],
            [65536, 182.511],
            [131072, 347.638],
            [262144, 676.438],
            [524288, 1333.934],
            [1048576, 2653.99]
          ],
          "fixed_us": 18.75417032591513,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.06408350709722188,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.02778022142125528,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.0794336043963635
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 24.342],
            [2048, 27.052],
            [4096, 37.713],
            [8192, 58.45],
            [16384, 100.043],
            [32768, 182.209],
            [65536, 347.192],
            [131072, 675.947],
            [262144, 1333.756],
            [524288, 2651.32],
            [1048576, 5281.136]
          ],
          "fixed_us": 17.944438225029465,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.0523782941818397,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.02135188610765699,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.085538680366521
        }
      ],
      "provisional": false,
      "reps": 30,
      "source": "mlaspec calibrate on NVIDIA H200, 2026-12-02T11:21:35Z (full grid, 30 reps)",
      "sweep_check": [
        {
          "config": "B=1,H=16,q=8,S=4096,kv=bf16",
          "cuda_fold_us": 18.37687473744154,
          "cuda_rowwise_us": 17.697250470519066,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=bf16",
          "cuda_fold_us": 25.022181597622957,
          "cuda_rowwise_us": 56.122181090441615,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=bf16",
          "cuda_fold_us": 46.614399552345276,
          "cuda_rowwise_us": 143.22240352630615,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=bf16",
          "cuda_fold_us": 134.12000238895416,
          "cuda_rowwise_us": 496.35399878025055,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=bf16",
          "cuda_fold_us": 536.6660058498383,
          "cuda_rowwise_us": 1840.7419919967651,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=4096,kv=fp8",
          "cuda_fold_us": 22.23449945449829,
          "cuda_rowwise_us": 18.332124687731266,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=fp8",
          "cuda_fold_us": 27.990364215590738,
          "cuda_rowwise_us": 58.83181907913902,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=fp8",
          "cuda_fold_us": 59.24218080260537,
          "cuda_rowwise_us": 154.99709411100906,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=fp8",
          "cuda_fold_us": 184.62399393320084,
          "cuda_rowwise_us": 532.6200127601624,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=fp8",
          "cuda_fold_us": 676.4659881591797,
          "cuda_rowwise_us": 2015.3859853744507,
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
