#!/usr/bin/env bash
# On a machine with an NVIDIA Hopper GPU: configure and build with CUDA, run the GPU tests (ctest
# label gpu), compute-sanitizer on a small sweep, then `mlaspec bench --device cuda` over PERF.md's
# standard set (bf16 and fp8, default and deterministic mode) and both sweeps, and print a short
# summary table last. Logs and JSON results: $OUT/gpu-check.tgz (default ./out).
#
# Needs GoogleTest, CLI11 and nlohmann-json: installed packages, or a .deps/ folder made by
# scripts/fetch-deps.sh (the lent GPU machine has no package access; carry .deps there).
#
# Usage: scripts/gpu-check.sh [--skip-tests] [--skip-bench] [--quick] [--model-only] [--v2lite]
#                             [--kimi] [--long-context[=target|v2lite]]
#   --skip-tests  build, then calibrate + bench only      --skip-bench  build + tests only
#   --quick       no q_len / S sweeps
#   --no-calibrate  bench with the built-in profile of this GPU (data/profiles/) instead of
#                 calibrating first (calibrate --kv all took ~6.5 min on an H100 before it
#                 measured fp8 math too, about a third more points now: with it,
#                 `--skip-tests --quick` no longer fits one 600 s device call)
#   --model-only  build gpu_tests + mlaspec only; run the CUDA model runtime's tests (the
#                 per-kernel tests CudaModelKernels.* against the CPU runtime's functions, then the
#                 forward against the CPU runtime; they print their bounds, worst ratios and
#                 timings), `generate` on the shipped pair with --device cpu and cuda, and
#                 `bench-model` on the shipped target; nothing else (~5 min with a cold build)
#   --v2lite      build mlaspec only (a no-op after --model-only), then the real-size check
#                 (scripts/v2lite_check.py: DeepSeek-V2-Lite's config with random weights made and
#                 saved by transformers, ~31 GB in /tmp, mlaspec's CUDA logits vs transformers'
#                 f32 and bf16 over a prefill + 8 decode steps) and `bench-model --device cuda` on
#                 that checkpoint at S = 4k; each under a time limit so the call ends within ~570 s
#   --kimi        as --v2lite for the one-layer Kimi-K2-shaped slice (64 heads, 384 experts top-8,
#                 n_group 1; ~34 GB); run it in its own call, after --v2lite has removed its files
#   --long-context  build mlaspec only, then issue 38's long-context table (scripts/long_context.py:
#                 decode vs q_len-8 verify under auto / cuda_fold / cuda_rowwise, batch 1/8/16,
#                 contexts 4k..1M, bf16 and fp8 KV) for the shipped target, then the V2-Lite shape
#                 (made by scripts/v2lite_check.py --make-only) with the time left; `=target` or
#                 `=v2lite` runs one model (a call each when one call cannot hold both). Results:
#                 $RES/long-context/ (long-context.md, .png, .json, every bench-model log)
#   --v2lite-bench  as --v2lite without the logits check: the checkpoint, then bench-model
#   --eval        build mlaspec, then `mlaspec eval --device cuda` on the shipped pair (24 held-out
#                 problems, batch 1/8/16, bf16 and fp8 KV): accuracy, accept length, tokens/s
#   --serve-bench build mlaspec, then scripts/serve_bench.py --device cuda: `serve` on the shipped
#                 pair with and without the drafter, bench-serve at concurrency 1/8/16
#   --ncu         build mlaspec, then Nsight Compute on one kernel launch per case of NCU_CASES
#                 ("label|kernel regex|bench args;..."; default: fp8 math rows 0 and 2, exact fp8
#                 row 0, bf16 row 2, all cuda_fold): $RES/ncu-LABEL.txt
#   --ragged      build mlaspec, then `mlaspec bench --set ragged --kv both`: fold / rowwise / auto
#                 on ragged verify batches and on the same requests padded to the largest width
#   --gemv-micro  also build and run dev/micro/gemv.cu (the decode GEMV's variants against cuBLAS
#                 and a copy; ~20 s), first after the build
#   --chain-micro also build and run dev/micro/chain.cu (one link of a chain of dependent kernels
#                 in a graph, plain and with programmatic dependent launch; ~10 s), after the build
#   (combined, the stages run in this order: --model-only, --eval, --ragged, --serve-bench,
#   --long-context (which ends the call), --ncu, --v2lite / --kimi)
#   --model-only --v2lite   both stages in one call (model tests first), ~500 s with a cold build
# The next GPU session's plan (written 2026-12-07, eighteenth session; outcomes so far in
# docs/perf/knowledge.md).
# (1) Issue 40 is blocked (its fp8 speed targets; knowledge.md, "What bounds fp8 math": the last
# designed lever, a third raw stage, bought -0..-5%). Nothing of it is pending.
# (2) On an H200: the S and q_len sweeps (`bench --set ssweep`, `--set qsweep`, not in the
# 2026-12-07 tables), and `calibrate --kv fp8,fp8tile` (fp8 math on by default; ~7 min, so one
# --modes per call, --no-verify on the second) merged into data/profiles/nvidia-h200.json, which
# has no fp8tile or fp8-math entries yet (the H100's has them since 2026-12-07).
# (3) Issue 33 (blocked) at batch 1: the norms in registers did not move the step (2026-12-07,
# knowledge.md); what is left there is a persistent kernel per layer, a design not yet written.
# (4) nsys is not on the lent machine (ncu is): V2LITE_NSYS finds nothing there.
# Short of device
# time: GPU_CHECK_SECONDS=N. AB_ENV="VAR=VALUE" adds, after --v2lite-bench's rows, a
# bench-model run (batch 1/8/16, q_len 2/8/16, or V2LITE_BENCH_ARGS's rows) with that environment
# variable set (an A/B of a runtime switch such as MLASPEC_GROUPED_TC_MIN_TOKENS; several
# separated by ';' run one each: results -ab, -ab2, ...). V2LITE_BENCH_ARGS="--context 4096
# --batch 1 ..." replaces --v2lite-bench's row options (and skips its deterministic rows unless
# V2LITE_DET=1; V2LITE_DET_ARGS="--context 4096 ..." replaces those deterministic rows' options).
# AB_ARGS="--context 4096 ..." replaces the A/B run's row options.
# ATTN_BENCH="--set standard --kv bf16,fp8tile" adds an attention bench to --model-only.
# V2LITE_CHECK_ARGS="--fp8 --speed" passes options to scripts/v2lite_check.py (--v2lite).
# V2LITE_NSYS="--batch 1 --q-len 8" adds an Nsight Systems trace of those rows (per-kernel sums).
# V2LITE_NCU="--batch 1 --q-len 1" adds Nsight Compute's kernel durations of one such step, graphs
# off (scripts/ncu_step_kernels.py: per kernel, launches and µs; $RES/ncu-CASE-step.md).
# NCU_CACHE=none keeps the caches between those launches (what the kernel before left in L2, as in
# a graph) instead of flushing them before each (ncu's default, "all").
set -uo pipefail
cd "$(dirname "$0")/.."
t_start=$SECONDS
# Seconds left of a 570 s call (the device's per-command limit is 600 s; GPU_CHECK_SECONDS sets a
# shorter one when less device time is left).
call_seconds=${GPU_CHECK_SECONDS:-570}
left() { echo $((call_seconds - (SECONDS - t_start))); }
# Results are written to $RES and packed into $OUT/gpu-check.tgz after every stage (the lent GPU
# machine returns at most 8 files from $OUT, and a stage cut short by a time limit still leaves
# what came before it).
OUT=${OUT:-$PWD/out}
RES=${RES:-$OUT/results}
mkdir -p "$OUT" "$RES"
pack() { tar czf "$OUT/gpu-check.tgz" -C "$RES" . 2>/dev/null || true; }
skip_tests=0 skip_bench=0 quick=0 no_calibrate=0 model_only=0 real_case= bench_only=0 long_context=
run_eval=0 serve_bench=0 ragged_bench=0 ncu_profile=0 gemv_micro=0 chain_micro=0
for a in "$@"; do
  case $a in
    --skip-tests) skip_tests=1 ;;
    --skip-bench) skip_bench=1 ;;
    --quick) quick=1 ;;
    --no-calibrate) no_calibrate=1 ;;
    --model-only) model_only=1 ;;
    --v2lite) real_case=v2lite ;;
    --v2lite-bench) real_case=v2lite bench_only=1 ;;
    --kimi) real_case=kimi ;;
    --eval) run_eval=1 ;;
    --ncu) ncu_profile=1 ;;
    --serve-bench) serve_bench=1 ;;
    --ragged) ragged_bench=1 ;;
    --gemv-micro) gemv_micro=1 ;;
    --chain-micro) chain_micro=1 ;;
    --long-context) long_context=target,v2lite ;;
    --long-context=target | --long-context=v2lite) long_context=${a#--long-context=} ;;
    *) echo "gpu-check: unknown option $a" >&2; exit 2 ;;
  esac
done
status=0
log() { pack; echo "[gpu-check $(date +%H:%M:%S)] $*"; }  # packs what earlier stages wrote

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv \
  > "$RES/gpu.txt" 2>&1 || true
log "GPU: $(tail -n +2 "$RES/gpu.txt" | head -1)"

extra=()
if [[ -d .deps ]]; then
  extra+=(-DMLASPEC_EXTRA_INCLUDE="$PWD/.deps/include" -DMLASPEC_GTEST_SOURCE_DIR="$PWD/.deps/googletest")
fi
# OpenBLAS, PCRE2 and ICU (model and tokenizer layers) from .deps/debs where the machine lacks them.
source scripts/gpu-sysroot.sh
extra+=("${MLASPEC_SYSROOT_CMAKE_ARGS[@]}")
# NCCL: the toolkit's, else the nvidia-nccl wheel of the machine's Python (the lent GPU machine
# has it there), with .deps/nccl/include/nccl.h (scripts/fetch-deps.sh) when the wheel has no header.
nccl_root=$(python3 -c 'import nvidia.nccl as m; print(list(m.__path__)[0])' 2>/dev/null || true)
if [[ -n $nccl_root && -d $nccl_root/lib ]]; then
  extra+=(-DMLASPEC_NCCL_ROOT="$nccl_root")
  if [[ ! -f $nccl_root/include/nccl.h && -f .deps/nccl/include/nccl.h ]]; then
    extra+=(-DMLASPEC_NCCL_INCLUDE="$PWD/.deps/nccl/include")
  fi
fi
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
targets=()
[[ -n $real_case || -n $long_context ]] || ((run_eval || serve_bench || ragged_bench || ncu_profile)) &&
  targets=(--target mlaspec)
((model_only)) && targets=(--target gpu_tests mlaspec)
# (a full build, no --target, builds it anyway)
((gemv_micro && ${#targets[@]})) && targets+=(--target mlaspec_micro_gemv)
((chain_micro && ${#targets[@]})) && targets+=(--target mlaspec_micro_chain)
log "configure + build (CUDA ON)"
build() {
  cmake -S . -B build-gpu "${gen[@]}" -DMLASPEC_CUDA=ON -DCMAKE_BUILD_TYPE=Release "${extra[@]}" "$@" &&
    cmake --build build-gpu -j"$(nproc)" "${targets[@]}"
}
if ! build > "$RES/build.log" 2>&1; then
  # The HTTP server is the one part built against libraries this machine may lack (cpp-httplib
  # from .deps): without it the rest can still run.
  if grep -qE "serve/|httplib|libssl|libcrypto|brotli" "$RES/build.log" && build -DMLASPEC_WITH_HTTPLIB=OFF > "$RES/build-2.log" 2>&1; then
    grep -m5 "error" "$RES/build.log"
    log "built WITHOUT the HTTP server (the first build failed in src/serve: build.log)"
  else
    tail -40 "$RES/build.log"
    log "BUILD FAILED"
    exit 1
  fi
fi
grep -E "spill|stack frame" "$RES/build.log" | sort -u | head -20 > "$RES/ptxas.txt" || true
grep -E "mlaspec: (CUDA|NCCL)" "$RES/build.log" | sed 's/^-- //' | tee -a "$RES/gpu.txt"

if ((gemv_micro)); then
  # The decode GEMV's variants (dev/micro/gemv.cu): µs, GB/s, same bits as the engine's shape.
  log "mlaspec_micro_gemv"
  timeout 120 build-gpu/dev/mlaspec_micro_gemv > "$RES/micro-gemv.md" 2>&1 || status=1
  cat "$RES/micro-gemv.md"
fi
if ((chain_micro)); then
  # A chain link's cost in a graph (dev/micro/chain.cu): µs per link, plain and PDL.
  log "mlaspec_micro_chain"
  timeout 120 build-gpu/dev/mlaspec_micro_chain > "$RES/micro-chain.md" 2>&1 || status=1
  cat "$RES/micro-chain.md"
fi

if ((model_only)); then
  log "CUDA model runtime tests"
  # MODEL_TESTS narrows the filter (a short call: the tests of what changed).
  # MODEL_TESTS_SECONDS bounds them (a hang then still leaves the later stages their time).
  timeout "${MODEL_TESTS_SECONDS:-$(($(left) - 30))}" build-gpu/tests/gpu_tests \
    --gtest_filter="${MODEL_TESTS:-*CudaForward*:CudaModel*:CudaEngine*:DFlashCuda*:DSparkCuda*:CudaRaggedVerify*:DcpCuda.Ragged*}" \
    > "$RES/model-tests.log" 2>&1 || status=1
  grep -E "^\[(cuda vs cpu|chunked|engine|perf|dflash|kernels)|FAILED|PASSED" "$RES/model-tests.log"
  P='<|bos|><|user|>Maya buys 9 oranges for 16 dollars each. She pays with 500 dollars. How much change does she get?<|assistant|>'
  for dev in cpu cuda; do
    log "generate --device $dev (shipped pair, dflash)"
    build-gpu/mlaspec generate --model models/target --draft dflash --draft-model models/drafter \
      --device $dev --prompt "$P" > "$RES/generate-$dev.txt" 2>&1 || status=1
    tail -3 "$RES/generate-$dev.txt"
  done
  if [[ -n ${ATTN_BENCH:-} ]]; then
    # ATTN_BENCH="--set standard --kv bf16,fp8tile": an attention bench in a model-only call.
    log "bench --device cuda $ATTN_BENCH"
    read -ra attn_args <<< "$ATTN_BENCH"
    timeout "${ATTN_BENCH_SECONDS:-120}" build-gpu/mlaspec bench --device cuda "${attn_args[@]}" \
      --json "$RES/attn-bench.json" > "$RES/attn-bench.txt" 2>&1 || status=1
    grep -vE "^\[mlaspec info\]" "$RES/attn-bench.txt" | tail -45
    pack
  fi
  # fp8_tile KV end to end on the GPU (the CUDA writer, both verify backends, the engine).
  log "generate --device cuda --kv fp8tile (shipped pair, dflash)"
  build-gpu/mlaspec generate --model models/target --draft dflash --draft-model models/drafter \
    --device cuda --kv fp8tile --prompt "$P" > "$RES/generate-cuda-fp8tile.txt" 2>&1 || status=1
  tail -3 "$RES/generate-cuda-fp8tile.txt"
  log "bench-model --device cuda (shipped target)"
  timeout 120 build-gpu/mlaspec bench-model --model models/target --device cuda --context 512 \
    --profile --json "$RES/bench-model-target.json" > "$RES/bench-model-target.txt" 2>&1 || status=1
  grep -vE "^\[mlaspec info\]" "$RES/bench-model-target.txt"
  log "bench-model --device cuda (shipped target), CUDA graphs off (A/B)"
  MLASPEC_CUDA_GRAPHS=0 timeout 120 build-gpu/mlaspec bench-model --model models/target \
    --device cuda --context 512 --json "$RES/bench-model-target-eager.json" \
    > "$RES/bench-model-target-eager.txt" 2>&1 || status=1
  grep -vE "^\[mlaspec info\]" "$RES/bench-model-target-eager.txt"
  log "bench-model --device cuda (shipped target), attention outside the graphs (A/B)"
  MLASPEC_CUDA_GRAPHS=segments timeout 120 build-gpu/mlaspec bench-model --model models/target \
    --device cuda --context 512 --json "$RES/bench-model-target-segments.json" \
    > "$RES/bench-model-target-segments.txt" 2>&1 || status=1
  grep -vE "^\[mlaspec info\]" "$RES/bench-model-target-segments.txt"
fi

if ((run_eval)); then
  for kv in bf16 fp8; do
    log "eval --device cuda --kv $kv (shipped pair, 24 problems, batch 1/8/16)"
    timeout 150 build-gpu/mlaspec eval --device cuda --kv $kv -n 24 --batch 1,8,16 \
      > "$RES/eval-cuda-$kv.txt" 2> "$RES/eval-cuda-$kv.err" || status=1
    cat "$RES/eval-cuda-$kv.txt"
  done
fi
if ((ragged_bench)); then
  log "bench --set ragged --kv both (ragged verify vs padded, fold / rowwise / auto)"
  timeout 240 build-gpu/mlaspec bench --device cuda --set ragged --kv both \
    --json "$RES/ragged.json" > "$RES/bench-ragged.txt" 2>&1 || status=1
  grep -E "^\|" "$RES/bench-ragged.txt"
fi
if ((serve_bench)); then
  log "serve + bench-serve --device cuda (shipped pair, concurrency 1/8/16)"
  # 192 prompts: each concurrency's run lasts seconds on the GPU, not a fraction of one.
  timeout 240 python3 scripts/serve_bench.py --mlaspec build-gpu/mlaspec --device cuda \
    --num-prompts 192 --out "$RES/serve-bench" > "$RES/serve-bench.txt" 2>&1 || status=1
  tail -12 "$RES/serve-bench.txt"
fi
if [[ -n $long_context ]]; then
  # Every bench-model call runs under its own timeout and the report is rewritten after each, so
  # a call cut short by the budget still leaves the table of what came before.
  log "long-context table: $long_context ($(left) s left)"
  timeout $(($(left) - 5)) python3 scripts/long_context.py --mlaspec build-gpu/mlaspec \
    --models "$long_context" --out "$RES/long-context" --budget $(($(left) - 15)) \
    > "$RES/long-context.txt" 2>&1 || status=1
  grep -E "^\[long_context|^  \[bench-model|skipped" "$RES/long-context.txt" | tail -60
  [[ -f $RES/long-context/long-context.md ]] && cat "$RES/long-context/long-context.md"
  cp "$RES"/long-context/long-context.{md,png} "$OUT"/ 2>/dev/null || true  # beside the .tgz
  log "done (status $status)"
  exit $status
fi

if ((ncu_profile)); then
  # One kernel launch per case under Nsight Compute: speed of light, warp states and stall
  # reasons, scheduler, memory, occupancy and the source counters' top stall locations. A case is
  # "label|kernel regex (mangled names)|bench arguments"; NCU_CASES replaces the default ones
  # (fp8 math against exact fp8 and bf16 at a memory-bound and a tensor-bound row).
  ncu_bin=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  cases=${NCU_CASES:-"fp8math-row0|Fp8MathKv|--rows 0 --kv fp8 --fp8-math;fp8math-row2|Fp8MathKv|--rows 2 --kv fp8 --fp8-math;fp8-row0|verify_narrow|--rows 0 --kv fp8;bf16-row2|verify_kernel_sm90|--rows 2 --kv bf16"}
  if [[ -z $ncu_bin ]]; then
    log "no ncu on this machine"
  else
    IFS=';' read -ra ncu_cases <<< "$cases"
    for c in "${ncu_cases[@]}"; do
      IFS='|' read -r label kernel bench_args <<< "$c"
      [[ -n $label && -n $kernel ]] || continue  # an empty case (a trailing ';')
      read -ra ba <<< "$bench_args"
      log "ncu: $label ($(left) s left)"
      timeout 120 "$ncu_bin" --kernel-name-base mangled -k "regex:$kernel" -c 1 \
        --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
        --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
        --section SourceCounters --section ComputeWorkloadAnalysis \
        build-gpu/mlaspec bench --device cuda --set standard --backend cuda_fold --reps 3 \
        "${ba[@]}" > "$RES/ncu-$label.txt" 2>&1 || status=1
      grep -E "Duration|Stall|Warp Cycles|Issued|Throughput|Busy|Eligible" "$RES/ncu-$label.txt" | head -30
    done
  fi
  pack
fi

if ((model_only || run_eval || serve_bench || ragged_bench || ncu_profile)) && [[ -z $real_case ]]; then
  log "done (status $status)"
  exit $status
fi

if [[ -n $real_case ]]; then
  # The real-size check, then the benchmark on the same checkpoint (kept for it, removed after).
  dir=${TMPDIR:-/tmp}/mlaspec-$real_case
  log "real-size check: $real_case ($(left) s left)"
  limit=$(($(left) - 150))  # keeps ~150 s for bench-model on the same checkpoint
  ((limit < 240)) && limit=$(($(left) - 10))
  check=(--keep --timeout 330 --json "$RES/$real_case.json")
  # V2LITE_CHECK_ARGS="--fp8 --speed": also the fp8 checkpoint and transformers' timings.
  [[ -n ${V2LITE_CHECK_ARGS:-} ]] && read -ra extra <<< "$V2LITE_CHECK_ARGS" && check+=("${extra[@]}")
  ((bench_only)) && check=(--make-only)  # the checkpoint only, for bench-model
  timeout "$limit" python3 scripts/v2lite_check.py --case "$real_case" \
    --mlaspec build-gpu/mlaspec --dir "$dir" "${check[@]}" \
    > "$RES/$real_case-check.txt" 2>&1 || status=1
  grep -vE "^Writing|it/s\]" "$RES/$real_case-check.txt" | tail -40
  if [[ -f $dir/config.json ]] && (($(left) > 60)); then
    log "bench-model --device cuda on $real_case ($(left) s left)"
    ctx=4096 batches=1,8,16,64 prefill=256,1024,8192,32768 chunks=256,512,1024
    [[ $real_case == kimi ]] && ctx=1024 batches=1,8 prefill=256,1024 chunks=256
    # V2LITE_BENCH_ARGS replaces the rows' options (a short call: the rows a change moves).
    rows=(--context $ctx --batch $batches --q-len 2,4,8,16 --prefill $prefill --chunk-tokens $chunks)
    [[ -n ${V2LITE_BENCH_ARGS:-} ]] && read -ra rows <<< "$V2LITE_BENCH_ARGS"
    timeout $(($(left) - 10)) build-gpu/mlaspec bench-model --model "$dir" --device cuda \
      "${rows[@]}" --reps 5 --profile \
      --json "$RES/bench-model-$real_case.json" > "$RES/bench-model-$real_case.txt" 2>&1 || status=1
    grep -vE "^\[mlaspec info\]" "$RES/bench-model-$real_case.txt" | tail -70
    if (($(left) > 90)) && [[ -z ${V2LITE_BENCH_ARGS:-} || -n ${V2LITE_DET:-} ]]; then
      # What deterministic mode (row-invariant GEMMs, the engine's default) costs at this size.
      log "bench-model --deterministic on $real_case ($(left) s left)"
      det_rows=(--context $ctx --batch 1,16 --q-len 8 --prefill 0)
      [[ -n ${V2LITE_DET_ARGS:-} ]] && read -ra det_rows <<< "$V2LITE_DET_ARGS"
      timeout $(($(left) - 10)) build-gpu/mlaspec bench-model --model "$dir" --device cuda \
        "${det_rows[@]}" --reps 5 --deterministic \
        --json "$RES/bench-model-$real_case-det.json" > "$RES/bench-model-$real_case-det.txt" 2>&1 ||
        status=1
      grep -E "^\| (decode|verify)" "$RES/bench-model-$real_case-det.txt"
    fi
    # A/Bs of runtime switches (AB_ENV="VAR=VALUE", e.g. MLASPEC_GROUPED_TC_MIN_TOKENS=0; several
    # separated by ';', one run each) against the default rows above, same machine, same checkpoint.
    IFS=';' read -ra ab_envs <<< "${AB_ENV:-}"
    ab_i=0
    for ab in "${ab_envs[@]}"; do
      [[ -z $ab ]] && continue
      (($(left) > 60)) || break
      ab_i=$((ab_i + 1))
      suffix=ab
      ((ab_i > 1)) && suffix=ab$ab_i
      log "bench-model with $ab on $real_case ($(left) s left)"
      ab_rows=(--context $ctx --batch 1,8,16 --q-len 2,8,16 --prefill 0)
      [[ -n ${V2LITE_BENCH_ARGS:-} ]] && ab_rows=("${rows[@]}")
      [[ -n ${AB_ARGS:-} ]] && read -ra ab_rows <<< "$AB_ARGS"
      timeout $(($(left) - 10)) env "$ab" build-gpu/mlaspec bench-model --model "$dir" \
        --device cuda "${ab_rows[@]}" --reps 5 \
        --json "$RES/bench-model-$real_case-$suffix.json" \
        > "$RES/bench-model-$real_case-$suffix.txt" 2>&1 || status=1
      grep -E "^\| (decode|verify)" "$RES/bench-model-$real_case-$suffix.txt"
    done
    if [[ -n ${V2LITE_NSYS:-} ]] && (($(left) > 90)); then
      # Where a step's GPU time goes, kernel by kernel (V2LITE_NSYS="--batch 1 --q-len 8"): an
      # Nsight Systems trace of bench-model's rows (graphs on), summarised per kernel.
      nsys=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys \
        2>/dev/null | head -1)
      if [[ -n $nsys ]]; then
        log "nsys on bench-model $V2LITE_NSYS ($(left) s left)"
        read -ra nsys_rows <<< "$V2LITE_NSYS"
        timeout $(($(left) - 30)) "$nsys" profile -t cuda,nvtx --cuda-graph-trace=node -o "$RES/nsys-$real_case" --force-overwrite true \
          build-gpu/mlaspec bench-model --model "$dir" --device cuda --context $ctx \
          "${nsys_rows[@]}" --prefill 0 --reps 5 > "$RES/nsys-run.txt" 2>&1 || status=1
        "$nsys" stats -r cuda_gpu_kern_sum,cuda_api_sum,cuda_gpu_trace --format csv \
          -o "$RES/nsys-$real_case" "$RES/nsys-$real_case.nsys-rep" > "$RES/nsys-stats.txt" 2>&1
        rm -f "$RES/nsys-$real_case.sqlite"
        head -40 "$RES"/nsys-"$real_case"_cuda_gpu_kern_sum.csv 2>/dev/null
      else
        log "no nsys on this machine"
      fi
    fi
    if [[ -n ${V2LITE_NCU:-} ]] && (($(left) > 60)); then
      # Where one step's GPU time goes, kernel by kernel (V2LITE_NCU="--batch 1 --q-len 1"):
      # Nsight Compute's duration of every launch of a bench-model run with graphs off (one
      # replay each, clocks left alone), then the last step's table (scripts/ncu_step_kernels.py).
      ncu_bin=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu \
        2>/dev/null | head -1)
      if [[ -n $ncu_bin ]]; then
        log "ncu on bench-model $V2LITE_NCU ($(left) s left)"
        read -ra ncu_rows <<< "$V2LITE_NCU"
        MLASPEC_CUDA_GRAPHS=0 timeout $(($(left) - 15)) "$ncu_bin" --clock-control none \
          --cache-control "${NCU_CACHE:-all}" --metrics gpu__time_duration.sum --csv --print-units base \
          build-gpu/mlaspec bench-model --model "$dir" --device cuda --context $ctx \
          "${ncu_rows[@]}" --prefill 0 --fill writer --reps 1 > "$RES/ncu-$real_case-step.csv" 2>&1 || status=1
        python3 scripts/ncu_step_kernels.py "$RES/ncu-$real_case-step.csv" \
          > "$RES/ncu-$real_case-step.md" 2>&1 || status=1
        head -40 "$RES/ncu-$real_case-step.md"
      else
        log "no ncu on this machine"
      fi
    fi
  fi
  rm -rf "$dir"
  log "done (status $status)"
  exit $status
fi

tests_result="skipped"
dcp_result="skipped"
if ((!skip_tests)); then
  log "GPU tests (ctest -L gpu)"
  if ctest --test-dir build-gpu -L gpu --output-on-failure -j1 > "$RES/gpu-tests.log" 2>&1; then
    tests_result="pass"
  else
    tests_result="FAIL"
    status=1
  fi
  tail -5 "$RES/gpu-tests.log"
  grep -E "Failed|\*\*\*Failed|FAILED" "$RES/gpu-tests.log" | head -20
  # Decode context parallelism through NCCL: every world size this machine has GPUs for, at
  # PERF.md's DCP sizes (B=1, H=16, q_len=8, S = 1M and 4M), both merge modes, rank 0 checking the
  # result against the deterministic one-GPU call at 1M.
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || echo 1)
  log "DCP over NCCL (${gpus} GPU(s))"
  dcp_result="pass"
  for w in 1 2 4 8; do
    ((w <= gpus)) || continue
    for S in 1048576 4194304; do
      chk=(); ((S == 1048576)) && chk=(--check)
      # Both merge modes: deterministic (bitwise check) and --premerge (checked to a tolerance).
      for mode in "" --premerge; do
        if ! NCCL_NVLS_ENABLE=0 build-gpu/mlaspec dcp --world $w -S $S "${chk[@]}" $mode >> "$RES/dcp.txt" 2>&1; then
          dcp_result="FAIL"
          status=1
        fi
      done
    done
  done
  tail -20 "$RES/dcp.txt"
  if command -v compute-sanitizer >/dev/null; then
    for tool in memcheck racecheck synccheck; do
      log "compute-sanitizer $tool (small sweep)"
      if compute-sanitizer --tool "$tool" --error-exitcode 9 build-gpu/tests/gpu_tests \
           --gtest_filter='*Sanitizer*' > "$RES/sanitizer-$tool.log" 2>&1; then
        tests_result+=", $tool clean"
      else
        tests_result+=", $tool FAIL"
        status=1
        tail -20 "$RES/sanitizer-$tool.log"
      fi
    done
  fi
fi

if ((!skip_bench)); then
  B=build-gpu/mlaspec
  reps=30
  # Calibrate the dispatch cost model first: every bench's auto column (the pick and its regret
  # against the backends measured in the same run) then uses this machine's fresh profile.
  profile=()
  if ((no_calibrate)); then
    log "no calibration: auto uses the built-in profile of this GPU (data/profiles/)"
  else
    log "calibrate (full grid, both modes, fp8 math, batch grid) -> profile.json"
    if $B calibrate --out "$RES/profile.json" --report "$RES/calibration.md" \
         > "$RES/calibrate.log" 2>&1; then
      profile=(--profile "$RES/profile.json")
    else
      status=1
      tail -20 "$RES/calibrate.log"
    fi
  fi
  # The SM clock, power and clock event reasons every 100 ms while the benches run: after ~30-60
  # ms of back-to-back calls the driver's power cap lowers the clock, and the rows bound by tensor
  # work slow down by ~10% from then on (docs/perf/knowledge.md, the power cap). The summary says
  # how much of the run was capped.
  smi_pid=
  if command -v nvidia-smi > /dev/null; then
    nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.active \
      --format=csv,noheader,nounits -lms 100 > "$RES/clocks.csv" 2>&1 &
    smi_pid=$!
    trap 'kill "$smi_pid" 2> /dev/null' EXIT  # also when a time limit ends the script early
  fi
  # Every KV layout, and fp8 KV in fp8 math: the perf page's fp8/bf16, fp8tile and fp8math tables.
  log "bench: standard set, bf16 + fp8 + fp8tile + fp8 math"
  $B bench --device cuda --set standard --kv all --fp8-math --reps $reps "${profile[@]}" \
    --json "$RES/standard.json" > "$RES/bench-standard.txt" 2>&1 || status=1
  if ((!quick)); then
    log "bench: S sweep and q_len sweep (bf16 + fp8)"
    $B bench --device cuda --set ssweep --kv both --reps $reps "${profile[@]}" \
      --json "$RES/ssweep.json" > "$RES/bench-ssweep.txt" 2>&1 || status=1
    $B bench --device cuda --set qsweep --kv both --reps $reps "${profile[@]}" \
      --json "$RES/qsweep.json" > "$RES/bench-qsweep.txt" 2>&1 || status=1
  fi
  log "bench: standard set, deterministic"
  $B bench --device cuda --set standard --kv all --fp8-math --deterministic --reps $reps "${profile[@]}" \
    --json "$RES/standard-det.json" > "$RES/bench-standard-det.txt" 2>&1 || status=1
  [[ -n $smi_pid ]] && kill "$smi_pid" 2> /dev/null
  for f in "$RES"/bench-*.txt; do echo "=== $(basename "$f")"; cat "$f"; done
fi

pack
{
echo
echo "================ gpu-check summary ================"
echo "GPU:   $(tail -n +2 "$RES/gpu.txt" | head -1)"
echo "tests: $tests_result"
echo "dcp:   $dcp_result"
[[ -f "$RES/dcp.txt" ]] && grep -E '^\| [0-9]' "$RES/dcp.txt" | sed 's/^/  /'
echo "build: $(grep -h "mlaspec: NCCL" "$RES/gpu.txt" 2>/dev/null | head -1)"
[[ -s "$RES/ptxas.txt" ]] && { echo "ptxas:"; sed 's/^/  /' "$RES/ptxas.txt" | head -8; }
if [[ -f "$RES/calibration.md" ]]; then
  echo "dispatch calibration (crossovers, regret):"
  grep -iE "crossover|regret" "$RES/calibration.md" | head -12 | sed 's/^/  /'
fi
[[ -s "$RES/clocks.csv" ]] && python3 scripts/clock_summary.py "$RES/clocks.csv"
if [[ -f "$RES/bench-standard.txt" ]]; then
  echo "standard set (default mode), then fp8/bf16 ratios:"
  grep -E '^\| ' "$RES/bench-standard.txt"
fi
echo "exit status: $status"
} | tee "$RES/summary.txt"
pack
exit $status
