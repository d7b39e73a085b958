// Built-in cost-model profiles, used when no profile file has an entry for this machine
// (docs/dispatch.md). Same JSON format as the file `mlaspec calibrate` writes.
//
// GPU profiles (kBuiltinGpuProfileJson): the whole file `mlaspec calibrate --out FILE` writes,
// pasted unchanged between the raw-string markers (write to a fresh FILE so it holds only the
// calibrated GPU). This string is the only place to edit; nothing else needs to change.
//
// NVIDIA H200 — MEASURED 2026-12-02 on the H200 by `scripts/gpu-check.sh` (`mlaspec calibrate`,
// full grid: B=1, H 16|128, q_len 2|4|8, S = 1k, 2k, ..., 1M, bf16 and fp8, median of 30 CUDA-graph
// replays per point) on the kernels of fbd0b1b (the narrow kernel for row tiles of <= 16 rows,
// which rowwise runs at H = 16, its fp8 raw tiles fenced before they are freed; the 64-row kernel
// with v28's half-slots otherwise; v31's fp8 fold without clusters; the deterministic merge tree
// of v34; fp8 in f16 since v37, its raw codes in the half freed first since v40; v42's mask-free
// tiles; v44's lazy rescale; v45a's P0 re-store only where WG1 moved a max); report in
// docs/perf/dispatch-calibration-2026-12-02d.md.
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
          "grid_loo_regret_max": 0.10976997597399718,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=1024",
          "model": "cuda_rowwise below S=1024, cuda_fold from there (cheaper backend changes again at S=1593, 2711, 5864, 19974)",
          "model_seq_len": 1024,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.1291153681494115,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=10005, cuda_fold from there",
          "model_seq_len": 10005,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.13974991194511355,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=4924, cuda_fold from there",
          "model_seq_len": 4924,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.04992382072005874,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=4096",
          "model": "cuda_fold below S=1024, cuda_rowwise from there (cheaper backend changes again at S=2943, 677804, 1048577)",
          "model_seq_len": 1024,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.048276976161956364,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=4096",
          "model": "cuda_rowwise below S=3224, cuda_fold from there (cheaper backend changes again at S=130587, 131896, 308090, 817627)",
          "model_seq_len": 3224,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.015522900386648608,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=65536",
          "model": "cuda_rowwise below S=41937, cuda_fold from there (cheaper backend changes again at S=183993)",
          "model_seq_len": 41937,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.031568944903507035,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=32768",
          "model": "cuda_rowwise below S=17213, cuda_fold from there",
          "model_seq_len": 17213,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.10590218384954753,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=9367, cuda_fold from there",
          "model_seq_len": 9367,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.10373199664437549,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=4687, cuda_fold from there",
          "model_seq_len": 4687,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.0006203040571206575,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=258285, cuda_rowwise from there (cheaper backend changes again at S=635678)",
          "model_seq_len": 258285,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.003186467359393763,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=9392, cuda_rowwise from there (cheaper backend changes again at S=31336, 91077, 205526, 1048577)",
          "model_seq_len": 9392,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.0005363575216486005,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=140436, cuda_rowwise from there (cheaper backend changes again at S=423087, 641526)",
          "model_seq_len": 140436,
          "q_len": 8
        }
      ],
      "grid_loo_regret_max": 0.13974991194511355,
      "grid_regret_max": 0.0,
      "measured_at": "2026-12-02T06:22:25Z",
      "models": [
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 17.763],
            [2048, 18.222],
            [4096, 18.25],
            [8192, 18.85],
            [16384, 21.599],
            [32768, 26.956],
            [65536, 36.022],
            [131072, 53.916],
            [262144, 89.124],
            [524288, 162.248],
            [1048576, 305.146]
          ],
          "fixed_us": 17.290597286052044,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.037499968552735075,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.016656614640602595,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.24016340297641314
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 20.003],
            [2048, 20.545],
            [4096, 20.905],
            [8192, 21.594],
            [16384, 25.028],
            [32768, 32.996],
            [65536, 41.698],
            [131072, 59.184],
            [262144, 94.906],
            [524288, 167.742],
            [1048576, 316.896]
          ],
          "fixed_us": 20.147584104728093,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.10088472680181104,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.0411159435225264,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.25219255189920414
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 20.993],
            [2048, 20.975],
            [4096, 21.792],
            [8192, 23.455],
            [16384, 29.264],
            [32768, 36.851],
            [65536, 50.523],
            [131072, 79.024],
            [262144, 135.624],
            [524288, 264.392],
            [1048576, 525.378]
          ],
          "fixed_us": 20.28884143291832,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.047426178838393285,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.028613776432954055,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4019884476474135
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.225],
            [2048, 22.035],
            [4096, 23.386],
            [8192, 28.122],
            [16384, 34.868],
            [32768, 48.004],
            [65536, 74.634],
            [131072, 133.86],
            [262144, 254.762],
            [524288, 495.506],
            [1048576, 1064.648]
          ],
          "fixed_us": 19.99503683451456,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.09426082839749417,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.03756633766139992,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.7817300954641545
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.81],
            [2048, 23.128],
            [4096, 27.477],
            [8192, 34.291],
            [16384, 47.419],
            [32768, 72.829],
            [65536, 129.651],
            [131072, 244.978],
            [262144, 484.308],
            [524288, 1020.332],
            [1048576, 1896.012]
          ],
          "fixed_us": 19.67207414101369,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.07970625609983495,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.03491744229909949,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.5221255730390235
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 23.217],
            [2048, 27.209],
            [4096, 33.579],
            [8192, 46.402],
            [16384, 73.502],
            [32768, 129.137],
            [65536, 241.394],
            [131072, 485.09],
            [262144, 951.256],
            [524288, 1887.072],
            [1048576, 3749.106]
          ],
          "fixed_us": 19.39009552064949,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.03780523380864298,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.02500897609897433,
          "us_per_gflop": 0.0,
          "us_per_mb": 3.0141859400075544
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 20.189],
            [2048, 20.333],
            [4096, 20.273],
            [8192, 20.447],
            [16384, 21.466],
            [32768, 24.562],
            [65536, 36.002],
            [131072, 57.749],
            [262144, 103.168],
            [524288, 189.634],
            [1048576, 360.588]
          ],
          "fixed_us": 18.020787092358617,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.1465175105737606,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.07108114543992698,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.537246279032855
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.068],
            [2048, 22.067],
            [4096, 22.127],
            [8192, 22.225],
            [16384, 23.598],
            [32768, 28.153],
            [65536, 39.445],
            [131072, 61.544],
            [262144, 106.832],
            [524288, 193.934],
            [1048576, 367.738]
          ],
          "fixed_us": 19.881669316617383,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.08089135975115558,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.04567392716498954,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.5589144300128002
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.23],
            [2048, 22.034],
            [4096, 22.133],
            [8192, 23.818],
            [16384, 28.083],
            [32768, 38.779],
            [65536, 59.45],
            [131072, 102.027],
            [262144, 185.146],
            [524288, 352.036],
            [1048576, 682.17]
          ],
          "fixed_us": 19.809453043930635,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.08033834229813952,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.03986819436260832,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.0755687808322925
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.814],
            [2048, 22.932],
            [4096, 23.941],
            [8192, 27.614],
            [16384, 38.341],
            [32768, 59.35],
            [65536, 100.463],
            [131072, 181.485],
            [262144, 342.516],
            [524288, 664.63],
            [1048576, 1306.252]
          ],
          "fixed_us": 19.736478043829585,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.08027449354968008,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.03807627273743847,
          "us_per_gflop": 0.0,
          "us_per_mb": 2.1123421991973244
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.574],
            [2048, 23.647],
            [4096, 27.502],
            [8192, 38.355],
            [16384, 59.131],
            [32768, 100.208],
            [65536, 182.036],
            [131072, 347.286],
            [262144, 675.846],
            [524288, 1334.696],
            [1048576, 2650.266]
          ],
          "fixed_us": 18.683060233283197,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.0594138723720411,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.024646749620930136,
          "us_per_gflop": 0.0,
          "us_per_mb": 4.3234646544841535
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 23.885],
            [2048, 26.986],
            [4096, 37.695],
            [8192, 58.444],
            [16384, 99.678],
            [32768, 181.664],
            [65536, 346.132],
            [131072, 674.662],
            [262144, 1331.812],
            [524288, 2646.84],
            [1048576, 5280.604]
          ],
          "fixed_us": 17.745124915001895,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.042750794208160525,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.017712093027054836,
          "us_per_gflop": 0.0,
          "us_per_mb": 8.678272466266003
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 17.944],
            [2048, 18.117],
            [4096, 18.406],
            [8192, 18.701],
            [16384, 19.462],
            [32768, 34.972],
            [65536, 50.547],
            [131072, 80.508],
            [262144, 140.258],
            [524288, 262.39],
            [1048576, 494.412]
          ],
          "fixed_us": 15.98093210826247,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.21741198521445804,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.08565800075270652,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.20431309882000628
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.173],
            [2048, 18.602],
            [4096, 18.754],
            [8192, 19.125],
            [16384, 33.77],
            [32768, 63.364],
            [65536, 93.075],
            [131072, 151.752],
            [262144, 270.826],
            [524288, 502.242],
            [1048576, 957.258]
          ],
          "fixed_us": 15.563349287818145,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.24318174339507204,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.12296917800702345,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.21451981401318326
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.792],
            [2048, 18.773],
            [4096, 19.12],
            [8192, 33.685],
            [16384, 62.844],
            [32768, 92.174],
            [65536, 150.832],
            [131072, 267.97],
            [262144, 496.478],
            [524288, 946.708],
            [1048576, 1849.692]
          ],
          "fixed_us": 15.315481949300805,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.25526260424306146,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.12373270075642948,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.20852880351272957
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 21.057],
            [2048, 21.655],
            [4096, 23.76],
            [8192, 28.74],
            [16384, 35.776],
            [32768, 48.382],
            [65536, 75.294],
            [131072, 136.786],
            [262144, 257.78],
            [524288, 509.92],
            [1048576, 1014.024]
          ],
          "fixed_us": 20.09022219579477,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.05768115014503428,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.02919740070385385,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.3943658389429025
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 21.002],
            [2048, 22.736],
            [4096, 27.726],
            [8192, 34.942],
            [16384, 47.821],
            [32768, 74.408],
            [65536, 132.834],
            [131072, 244.946],
            [262144, 491.294],
            [524288, 973.342],
            [1048576, 1946.726]
          ],
          "fixed_us": 19.411034300625236,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.04228283656015752,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.02656004940438844,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.3850668481649157
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 22.979],
            [2048, 26.77],
            [4096, 32.999],
            [8192, 45.685],
            [16384, 72.592],
            [32768, 128.771],
            [65536, 242.637],
            [131072, 492.62],
            [262144, 936.084],
            [524288, 1855.454],
            [1048576, 3711.2]
          ],
          "fixed_us": 19.037870147225643,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.042270590559769894,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.02583140446152869,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.37481287905957955
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.95],
            [2048, 19.233],
            [4096, 19.294],
            [8192, 19.631],
            [16384, 20.809],
            [32768, 36.855],
            [65536, 53.516],
            [131072, 87.616],
            [262144, 155.934],
            [524288, 288.558],
            [1048576, 550.78]
          ],
          "fixed_us": 16.7072761926467,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.21204884770257815,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.08293272494598294,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.45108358936089754
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 19.052],
            [2048, 19.558],
            [4096, 19.676],
            [8192, 20.096],
            [16384, 35.918],
            [32768, 67.447],
            [65536, 101.419],
            [131072, 170.338],
            [262144, 308.83],
            [524288, 578.474],
            [1048576, 1102.266]
          ],
          "fixed_us": 15.902516831748168,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.25049728866878485,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.1182978221046222,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4889141301155664
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 19.691],
            [2048, 19.829],
            [4096, 20.053],
            [8192, 35.874],
            [16384, 67.093],
            [32768, 101.037],
            [65536, 170.441],
            [131072, 308.763],
            [262144, 578.748],
            [524288, 1116.258],
            [1048576, 2164.522]
          ],
          "fixed_us": 15.411095484882367,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.22537132214511324,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.11525584448259124,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.48426967941933674
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 23.027],
            [2048, 23.066],
            [4096, 23.951],
            [8192, 27.735],
            [16384, 38.676],
            [32768, 59.5],
            [65536, 100.705],
            [131072, 181.776],
            [262144, 342.504],
            [524288, 664.218],
            [1048576, 1308.358]
          ],
          "fixed_us": 19.866634072564047,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.08308309600554331,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.03866999965457085,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.0570795528952148
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 22.823],
            [2048, 23.861],
            [4096, 27.52],
            [8192, 38.385],
            [16384, 58.943],
            [32768, 100.23],
            [65536, 182.444],
            [131072, 346.427],
            [262144, 676.752],
            [524288, 1334.976],
            [1048576, 2650.742]
          ],
          "fixed_us": 18.828180052574474,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.06342473167099927,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.026677553353943423,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.0795775376570391
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 24.167],
            [2048, 27.081],
            [4096, 37.717],
            [8192, 58.723],
            [16384, 99.954],
            [32768, 181.718],
            [65536, 346.374],
            [131072, 674.702],
            [262144, 1331.098],
            [524288, 2647.476],
            [1048576, 5277.516]
          ],
          "fixed_us": 17.91793422853417,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.04682238616797041,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.019371707764231475,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.0844910241593337
        }
      ],
      "provisional": false,
      "reps": 30,
      "source": "mlaspec calibrate on NVIDIA H200, 2026-12-02T06:22:22Z (full grid, 30 reps)",
      "sweep_check": [
        {
          "config": "B=1,H=16,q=8,S=4096,kv=bf16",
          "cuda_fold_us": 21.68037462979555,
          "cuda_rowwise_us": 19.0187506377697,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=bf16",
          "cuda_fold_us": 29.021818529475816,
          "cuda_rowwise_us": 62.57999756119468,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=bf16",
          "cuda_fold_us": 50.42880177497864,
          "cuda_rowwise_us": 148.98240566253662,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=bf16",
          "cuda_fold_us": 136.8120014667511,
          "cuda_rowwise_us": 498.8659918308258,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=bf16",
          "cuda_fold_us": 533.4039926528931,
          "cuda_rowwise_us": 1850.5399823188782,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=4096,kv=fp8",
          "cuda_fold_us": 22.17474952340126,
          "cuda_rowwise_us": 19.95049975812435,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=fp8",
          "cuda_fold_us": 27.980001135305926,
          "cuda_rowwise_us": 66.63581728935242,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=fp8",
          "cuda_fold_us": 59.11854722283103,
          "cuda_rowwise_us": 168.76800493760544,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=fp8",
          "cuda_fold_us": 183.66999924182892,
          "cuda_rowwise_us": 573.6500024795532,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=fp8",
          "cuda_fold_us": 675.894021987915,
          "cuda_rowwise_us": 2164.357900619507,
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
