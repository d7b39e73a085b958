// Built-in cost-model profiles, used when no profile file has an entry for this machine
// (docs/dispatch.md). Same JSON format as the file `mlaspec calibrate` writes.
//
// GPU profiles (kBuiltinGpuProfileJson): the whole file `mlaspec calibrate --out FILE` writes,
// pasted unchanged between the raw-string markers (write to a fresh FILE so it holds only the
// calibrated GPU). This string is the only place to edit; nothing else needs to change.
//
// NVIDIA H200 — MEASURED 2026-12-02 on the H200 by `mlaspec calibrate` (full grid: B=1, H 16|128,
// q_len 1|2|4|8, S = 1k, 2k, ..., 1M, bf16 and fp8, median of 30 CUDA-graph replays per point; the
// first grid with q_len 1, eighteenth session) on the kernels of a2f5fe0 (the narrow kernel for
// row tiles of <= 16 rows, which rowwise runs at H = 16, its fp8 raw tiles freed behind each
// expansion step's publish fence; the 64-row kernel with v28's half-slots otherwise; v31's fp8
// fold without clusters; the deterministic merge tree of v34; fp8 in f16 since v37, its raw codes
// in the half freed first since v40; v42's mask-free tiles; v44's lazy rescale; v45a's P0 re-store
// only where WG1 moved a max; v46's bf16 start, Q before stage 1's copies; the 64-row bf16
// kernel's Q copied by TMA and the narrow kernel's row-per-warp epilogue stores, seventeenth
// session); report in docs/perf/dispatch-calibration-2026-12-02h.md.
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
          "grid_loo_regret_max": 7.217089099342822e-05,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=1024",
          "model": "cuda_fold below S=251705, cuda_rowwise from there (cheaper backend changes again at S=265942)",
          "model_seq_len": 251705,
          "q_len": 1
        },
        {
          "grid_loo_regret_max": 0.05098747943073101,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=1024",
          "model": "cuda_rowwise below S=1024, cuda_fold from there (cheaper backend changes again at S=9756, 18137)",
          "model_seq_len": 1024,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.01795506138162528,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=8459, cuda_fold from there",
          "model_seq_len": 8459,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.03177847564222924,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "bf16",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=4296, cuda_fold from there",
          "model_seq_len": 4296,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.014793039181180134,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=1024",
          "model": "cuda_rowwise below S=1024, cuda_fold from there (cheaper backend changes again at S=1646, 13624)",
          "model_seq_len": 1024,
          "q_len": 1
        },
        {
          "grid_loo_regret_max": 0.04840040735150142,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=8032, cuda_fold from there (cheaper backend changes again at S=702142, 1048577)",
          "model_seq_len": 8032,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.1202916890742618,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=4096",
          "model": "cuda_rowwise below S=3231, cuda_fold from there (cheaper backend changes again at S=452075, 1048577)",
          "model_seq_len": 3231,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.04274822577718407,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "bf16",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=12037, cuda_fold from there (cheaper backend changes again at S=22402, 39431, 91241, 987284, 1048577)",
          "model_seq_len": 12037,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.019875005834232518,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=2048",
          "model": "cuda_fold below S=1024, cuda_rowwise from there (cheaper backend changes again at S=1430, 502500, 561207)",
          "model_seq_len": 1024,
          "q_len": 1
        },
        {
          "grid_loo_regret_max": 0.13227744895483395,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=32768",
          "model": "cuda_rowwise below S=20046, cuda_fold from there",
          "model_seq_len": 20046,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.20825534670258583,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=16384",
          "model": "cuda_rowwise below S=10682, cuda_fold from there",
          "model_seq_len": 10682,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.20340285044320305,
          "grid_regret_max": 0.0,
          "heads": 16,
          "kv": "fp8",
          "measured": "S=8192",
          "model": "cuda_rowwise below S=5344, cuda_fold from there",
          "model_seq_len": 5344,
          "q_len": 8
        },
        {
          "grid_loo_regret_max": 0.005716516012917561,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=22166, cuda_rowwise from there (cheaper backend changes again at S=60919, 174381, 655400, 1048577)",
          "model_seq_len": 22166,
          "q_len": 1
        },
        {
          "grid_loo_regret_max": 0.005282724025405194,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=38250, cuda_rowwise from there (cheaper backend changes again at S=115350, 1048577)",
          "model_seq_len": 38250,
          "q_len": 2
        },
        {
          "grid_loo_regret_max": 0.0017337673566342193,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=5742, cuda_rowwise from there (cheaper backend changes again at S=11771, 25226, 77373, 1048577)",
          "model_seq_len": 5742,
          "q_len": 4
        },
        {
          "grid_loo_regret_max": 0.0018137454617668247,
          "grid_regret_max": 0.0,
          "heads": 128,
          "kv": "fp8",
          "measured": "S=1024",
          "model": "cuda_fold below S=51618, cuda_rowwise from there (cheaper backend changes again at S=95490, 210406)",
          "model_seq_len": 51618,
          "q_len": 8
        }
      ],
      "grid_loo_regret_max": 0.20825534670258583,
      "grid_regret_max": 0.0,
      "measured_at": "2026-12-02T13:45:19Z",
      "models": [
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 16.23],
            [2048, 16.198],
            [4096, 16.443],
            [8192, 16.729],
            [16384, 17.21],
            [32768, 20.292],
            [65536, 30.672],
            [131072, 48.31],
            [262144, 83.162],
            [524288, 154.784],
            [1048576, 294.05]
          ],
          "fixed_us": 14.616374678390335,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.13361533559270455,
          "points": 11,
          "q_len": 1,
          "rms_rel_err": 0.06303572109069919,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2221673065523121
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 15.671],
            [2048, 16.3],
            [4096, 16.528],
            [8192, 16.824],
            [16384, 19.036],
            [32768, 24.686],
            [65536, 33.899],
            [131072, 50.812],
            [262144, 87.1],
            [524288, 162.032],
            [1048576, 300.982]
          ],
          "fixed_us": 15.23090099351373,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.03932189153293408,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.021686460416933086,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.23887133649634273
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 16.786],
            [2048, 17.477],
            [4096, 17.815],
            [8192, 18.122],
            [16384, 21.126],
            [32768, 28.541],
            [65536, 37.376],
            [131072, 54.528],
            [262144, 90.728],
            [524288, 162.946],
            [1048576, 313.346]
          ],
          "fixed_us": 16.721058089353274,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.08498168737474276,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.03556281998901799,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2488709202699013
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 17.682],
            [2048, 17.727],
            [4096, 18.478],
            [8192, 19.848],
            [16384, 25.246],
            [32768, 32.607],
            [65536, 46.637],
            [131072, 74.166],
            [262144, 132.966],
            [524288, 249.292],
            [1048576, 544.104]
          ],
          "fixed_us": 16.823755152066433,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.08597950102192553,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.03628554043365068,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.39777692506904855
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 17.348],
            [2048, 17.814],
            [4096, 18.593],
            [8192, 19.955],
            [16384, 25.257],
            [32768, 32.927],
            [65536, 46.562],
            [131072, 74.056],
            [262144, 139.614],
            [524288, 276.12],
            [1048576, 541.528]
          ],
          "fixed_us": 16.66605102339366,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.06811952248124387,
          "points": 11,
          "q_len": 1,
          "rms_rel_err": 0.032468257611317,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4134880953172957
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 19.283],
            [2048, 19.043],
            [4096, 20.092],
            [8192, 24.415],
            [16384, 31.09],
            [32768, 44.096],
            [65536, 71.653],
            [131072, 134.402],
            [262144, 256.164],
            [524288, 499.778],
            [1048576, 1087.208]
          ],
          "fixed_us": 16.964374495187364,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.10980210596925533,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.04951361411735193,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.7871670247000059
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 19.086],
            [2048, 20.001],
            [4096, 23.623],
            [8192, 30.325],
            [16384, 43.502],
            [32768, 70.271],
            [65536, 129.445],
            [131072, 251.1],
            [262144, 490.358],
            [524288, 1015.74],
            [1048576, 2012.634]
          ],
          "fixed_us": 16.276109586557507,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.06631530886530146,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.040473012130016466,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.5538122882822216
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 20.385],
            [2048, 23.617],
            [4096, 30.135],
            [8192, 42.976],
            [16384, 69.853],
            [32768, 130.05],
            [65536, 252.379],
            [131072, 505.126],
            [262144, 947.356],
            [524288, 1928.088],
            [1048576, 3809.736]
          ],
          "fixed_us": 15.985137047955087,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.062356964178940544,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.03267739274783092,
          "us_per_gflop": 0.0,
          "us_per_mb": 3.084806791814906
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 17.362],
            [2048, 16.641],
            [4096, 16.975],
            [8192, 17.305],
            [16384, 18.172],
            [32768, 19.745],
            [65536, 27.927],
            [131072, 44.274],
            [262144, 76.69],
            [524288, 140.798],
            [1048576, 263.426]
          ],
          "fixed_us": 15.315499038570653,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.14942494284621,
          "points": 11,
          "q_len": 1,
          "rms_rel_err": 0.06866114274453043,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.39100649327813847
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 19.739],
            [2048, 20.237],
            [4096, 20.322],
            [8192, 20.459],
            [16384, 21.421],
            [32768, 24.378],
            [65536, 35.957],
            [131072, 57.795],
            [262144, 102.938],
            [524288, 190.65],
            [1048576, 361.46]
          ],
          "fixed_us": 17.90232452086161,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.15148739276636514,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.07086949441935941,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.538764770707158
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.151],
            [2048, 21.962],
            [4096, 22.088],
            [8192, 22.203],
            [16384, 23.594],
            [32768, 28.271],
            [65536, 39.538],
            [131072, 61.461],
            [262144, 106.096],
            [524288, 193.092],
            [1048576, 367.872]
          ],
          "fixed_us": 19.894206926136697,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.0759497370669171,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.04393205153908432,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.5575954430076469
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.074],
            [2048, 21.964],
            [4096, 22.165],
            [8192, 23.838],
            [16384, 28.087],
            [32768, 38.885],
            [65536, 59.571],
            [131072, 101.702],
            [262144, 185.712],
            [524288, 350.552],
            [1048576, 678.69]
          ],
          "fixed_us": 19.796160087227094,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.07448236666489916,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.03763259031880229,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.074415641288988
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 21.858],
            [2048, 22.017],
            [4096, 22.19],
            [8192, 23.567],
            [16384, 28.04],
            [32768, 38.833],
            [65536, 59.463],
            [131072, 101.136],
            [262144, 184.908],
            [524288, 349.032],
            [1048576, 681.232]
          ],
          "fixed_us": 19.7149254138326,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.06911987237551209,
          "points": 11,
          "q_len": 1,
          "rms_rel_err": 0.037784869489122734,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.0723282559377765
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.803],
            [2048, 22.781],
            [4096, 23.851],
            [8192, 27.681],
            [16384, 38.397],
            [32768, 59.423],
            [65536, 100.476],
            [131072, 182.125],
            [262144, 342.652],
            [524288, 666.566],
            [1048576, 1317.182]
          ],
          "fixed_us": 19.667880391811778,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.08263075009930121,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.03765910211880279,
          "us_per_gflop": 0.0,
          "us_per_mb": 2.120786495158997
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 22.566],
            [2048, 23.738],
            [4096, 27.321],
            [8192, 38.133],
            [16384, 58.799],
            [32768, 100.247],
            [65536, 182.265],
            [131072, 346.402],
            [262144, 676.568],
            [524288, 1336.128],
            [1048576, 2651.772]
          ],
          "fixed_us": 18.630283859216355,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.06145546174545702,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.026482856190404244,
          "us_per_gflop": 0.0,
          "us_per_mb": 4.3208820484594765
        },
        {
          "backend": "cuda_fold",
          "curve": [
            [1024, 24.058],
            [2048, 27.118],
            [4096, 37.748],
            [8192, 58.548],
            [16384, 99.94],
            [32768, 182.048],
            [65536, 346.964],
            [131072, 674.142],
            [262144, 1333.774],
            [524288, 2652.18],
            [1048576, 5283.804]
          ],
          "fixed_us": 17.86798371582766,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.0443262316497024,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.018249149073810946,
          "us_per_gflop": 0.0,
          "us_per_mb": 8.686280244018246
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 16.387],
            [2048, 16.366],
            [4096, 16.595],
            [8192, 16.885],
            [16384, 17.379],
            [32768, 20.449],
            [65536, 30.947],
            [131072, 48.366],
            [262144, 83.156],
            [524288, 155.312],
            [1048576, 294.524]
          ],
          "fixed_us": 14.774427470727453,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.13300072129830443,
          "points": 11,
          "q_len": 1,
          "rms_rel_err": 0.062473129409388914,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.22238677291985728
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 16.47],
            [2048, 16.612],
            [4096, 16.8],
            [8192, 17.073],
            [16384, 18.224],
            [32768, 31.817],
            [65536, 47.214],
            [131072, 77.586],
            [262144, 137.422],
            [524288, 265.024],
            [1048576, 493.138]
          ],
          "fixed_us": 14.420728462588205,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.21011372686571317,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.08134029300186135,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2021774566366092
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 16.566],
            [2048, 16.958],
            [4096, 17.117],
            [8192, 17.802],
            [16384, 30.502],
            [32768, 56.509],
            [65536, 86.072],
            [131072, 145.118],
            [262144, 268.116],
            [524288, 498.288],
            [1048576, 950.486]
          ],
          "fixed_us": 13.912922164415617,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.22607305520318977,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.1066882028929145,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.20963961337504747
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 16.971],
            [2048, 17.086],
            [4096, 17.909],
            [8192, 30.324],
            [16384, 56.179],
            [32768, 84.712],
            [65536, 142.91],
            [131072, 262.652],
            [262144, 492.928],
            [524288, 941.35],
            [1048576, 1842.782]
          ],
          "fixed_us": 13.566720271985918,
          "heads": 16,
          "kv": "bf16",
          "max_rel_err": 0.20871016976174916,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.10197532530796434,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.2045570390985611
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 17.604],
            [2048, 17.694],
            [4096, 17.999],
            [8192, 19.549],
            [16384, 25.446],
            [32768, 33.036],
            [65536, 46.821],
            [131072, 75.016],
            [262144, 147.004],
            [524288, 284.46],
            [1048576, 558.7]
          ],
          "fixed_us": 16.39668317435991,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.07861007585571156,
          "points": 11,
          "q_len": 1,
          "rms_rel_err": 0.039784611390699574,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4272747675830399
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.547],
            [2048, 18.694],
            [4096, 19.759],
            [8192, 24.427],
            [16384, 31.426],
            [32768, 45.082],
            [65536, 72.862],
            [131072, 135.536],
            [262144, 262.468],
            [524288, 517.282],
            [1048576, 1037.016]
          ],
          "fixed_us": 16.64241360528721,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.0580197567938745,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.03461115158138446,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.40032760081516466
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 18.308],
            [2048, 19.53],
            [4096, 23.918],
            [8192, 30.581],
            [16384, 43.587],
            [32768, 72.277],
            [65536, 130.459],
            [131072, 251.51],
            [262144, 549.344],
            [524288, 984.844],
            [1048576, 1992.0]
          ],
          "fixed_us": 15.883133141577197,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.09837999187508006,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.04173784391236572,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.3968811792528146
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 20.114],
            [2048, 23.421],
            [4096, 29.739],
            [8192, 42.366],
            [16384, 70.658],
            [32768, 128.251],
            [65536, 262.216],
            [131072, 484.418],
            [262144, 947.18],
            [524288, 1894.702],
            [1048576, 3816.074]
          ],
          "fixed_us": 15.768104727690579,
          "heads": 128,
          "kv": "bf16",
          "max_rel_err": 0.05661680587803164,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.03250815136644117,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.3840753164753867
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 17.047],
            [2048, 16.972],
            [4096, 17.172],
            [8192, 17.531],
            [16384, 18.348],
            [32768, 19.956],
            [65536, 28.279],
            [131072, 44.6],
            [262144, 77.008],
            [524288, 140.76],
            [1048576, 264.08]
          ],
          "fixed_us": 15.462475117386067,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.14624828797832579,
          "points": 11,
          "q_len": 1,
          "rms_rel_err": 0.06459223384374704,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.39268276271851715
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 16.771],
            [2048, 17.119],
            [4096, 17.318],
            [8192, 17.649],
            [16384, 18.919],
            [32768, 32.993],
            [65536, 49.25],
            [131072, 81.658],
            [262144, 146.172],
            [524288, 269.626],
            [1048576, 518.942]
          ],
          "fixed_us": 14.827775702698064,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.20655969699427512,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.07963229753889853,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4238032005972322
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 17.04],
            [2048, 17.482],
            [4096, 17.643],
            [8192, 18.376],
            [16384, 32.01],
            [32768, 59.324],
            [65536, 91.837],
            [131072, 156.251],
            [262144, 282.548],
            [524288, 532.088],
            [1048576, 1036.504]
          ],
          "fixed_us": 14.17568526590672,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.23400843584976516,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.1077156768991808,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.45036210106549335
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 17.601],
            [2048, 17.798],
            [4096, 18.419],
            [8192, 32.101],
            [16384, 59.11],
            [32768, 90.701],
            [65536, 154.951],
            [131072, 282.502],
            [262144, 531.624],
            [524288, 1028.206],
            [1048576, 2015.51]
          ],
          "fixed_us": 13.793657699350574,
          "heads": 16,
          "kv": "fp8",
          "max_rel_err": 0.20434786998654486,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.10299990813176116,
          "us_per_gflop": 0.0,
          "us_per_mb": 0.4444452807512589
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 21.898],
            [2048, 22.446],
            [4096, 22.387],
            [8192, 23.859],
            [16384, 28.164],
            [32768, 38.612],
            [65536, 59.503],
            [131072, 101.248],
            [262144, 184.616],
            [524288, 348.212],
            [1048576, 684.614]
          ],
          "fixed_us": 19.909543935706555,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.06551123761208077,
          "points": 11,
          "q_len": 1,
          "rms_rel_err": 0.038629118251981724,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.0701829947226296
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 23.114],
            [2048, 22.911],
            [4096, 24.022],
            [8192, 27.682],
            [16384, 38.411],
            [32768, 59.513],
            [65536, 99.948],
            [131072, 182.342],
            [262144, 343.816],
            [524288, 666.614],
            [1048576, 1322.012]
          ],
          "fixed_us": 19.803261606370786,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.08912519446066014,
          "points": 11,
          "q_len": 2,
          "rms_rel_err": 0.04003426173303398,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.0599409178417216
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 22.667],
            [2048, 23.906],
            [4096, 27.366],
            [8192, 38.067],
            [16384, 58.892],
            [32768, 100.151],
            [65536, 182.167],
            [131072, 346.994],
            [262144, 676.848],
            [524288, 1336.302],
            [1048576, 2655.24]
          ],
          "fixed_us": 18.714819407943946,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.06193988618667412,
          "points": 11,
          "q_len": 4,
          "rms_rel_err": 0.027267849093114954,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.080013409420554
        },
        {
          "backend": "cuda_rowwise",
          "curve": [
            [1024, 24.364],
            [2048, 27.321],
            [4096, 37.87],
            [8192, 58.72],
            [16384, 100.019],
            [32768, 182.378],
            [65536, 346.634],
            [131072, 674.682],
            [262144, 1333.278],
            [524288, 2650.324],
            [1048576, 5283.156]
          ],
          "fixed_us": 18.100364849013097,
          "heads": 128,
          "kv": "fp8",
          "max_rel_err": 0.046967071803579064,
          "points": 11,
          "q_len": 8,
          "rms_rel_err": 0.019171993002037466,
          "us_per_gflop": 0.0,
          "us_per_mb": 1.0849777778767624
        }
      ],
      "provisional": false,
      "reps": 30,
      "source": "mlaspec calibrate on NVIDIA H200, 2026-12-02T13:45:16Z (full grid, 30 reps)",
      "sweep_check": [
        {
          "config": "B=1,H=16,q=8,S=4096,kv=bf16",
          "cuda_fold_us": 18.4943750500679,
          "cuda_rowwise_us": 17.75625068694353,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=bf16",
          "cuda_fold_us": 25.267999280582778,
          "cuda_rowwise_us": 56.1589083888314,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=bf16",
          "cuda_fold_us": 46.73600047826767,
          "cuda_rowwise_us": 143.53919625282288,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=bf16",
          "cuda_fold_us": 132.91800022125244,
          "cuda_rowwise_us": 492.33800172805786,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=bf16",
          "cuda_fold_us": 543.9560115337372,
          "cuda_rowwise_us": 1843.850016593933,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=4096,kv=fp8",
          "cuda_fold_us": 22.009999491274357,
          "cuda_rowwise_us": 18.316625617444515,
          "pick": "cuda_rowwise",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=16384,kv=fp8",
          "cuda_fold_us": 27.89090844717893,
          "cuda_rowwise_us": 58.59836394136602,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=65536,kv=fp8",
          "cuda_fold_us": 59.47127396410161,
          "cuda_rowwise_us": 154.5374556021257,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=262144,kv=fp8",
          "cuda_fold_us": 185.40799617767334,
          "cuda_rowwise_us": 530.6539833545685,
          "pick": "cuda_fold",
          "regret": 0.0
        },
        {
          "config": "B=1,H=16,q=8,S=1048576,kv=fp8",
          "cuda_fold_us": 678.9520084857941,
          "cuda_rowwise_us": 2014.4059658050537,
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
