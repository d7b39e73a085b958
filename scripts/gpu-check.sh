#!/usr/bin/env bash
# On a machine with an NVIDIA Hopper GPU: configure and build with CUDA, run the GPU tests (ctest
# label gpu), compute-sanitizer on a small sweep, then `mlaspec bench --device cuda` over PERF.md's
# standard set (bf16 and fp8, default and deterministic mode) and both sweeps, and print a short
# summary table last. Logs and JSON results go to $OUT (default ./out).
#
# Needs GoogleTest, CLI11 and nlohmann-json: installed packages, or a .deps/ folder made by
# scripts/fetch-deps.sh (the lent GPU machine has no package access; carry .deps there).
#
# Usage: scripts/gpu-check.sh [--skip-tests] [--skip-bench] [--quick]
#   --skip-tests  build, then calibrate + bench only      --skip-bench  build + tests only
#   --quick       no q_len / S sweeps
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
skip_tests=0 skip_bench=0 quick=0
for a in "$@"; do
  case $a in
    --skip-tests) skip_tests=1 ;;
    --skip-bench) skip_bench=1 ;;
    --quick) quick=1 ;;
    *) echo "gpu-check: unknown option $a" >&2; exit 2 ;;
  esac
done
status=0
log() { echo "[gpu-check $(date +%H:%M:%S)] $*"; }

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv \
  > "$OUT/gpu.txt" 2>&1 || true
log "GPU: $(tail -n +2 "$OUT/gpu.txt" | head -1)"

extra=()
if [[ -d .deps ]]; then
  extra+=(-DMLASPEC_EXTRA_INCLUDE="$PWD/.deps/include" -DMLASPEC_GTEST_SOURCE_DIR="$PWD/.deps/googletest")
fi
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
log "configure + build (CUDA ON)"
if ! { cmake -S . -B build-gpu "${gen[@]}" -DMLASPEC_CUDA=ON -DCMAKE_BUILD_TYPE=Release "${extra[@]}" &&
       cmake --build build-gpu -j"$(nproc)"; } > "$OUT/build.log" 2>&1; then
  tail -40 "$OUT/build.log"
  log "BUILD FAILED"
  exit 1
fi
grep -E "spill|stack frame" "$OUT/build.log" | sort -u | head -20 > "$OUT/ptxas.txt" || true

tests_result="skipped"
if ((!skip_tests)); then
  log "GPU tests (ctest -L gpu)"
  if ctest --test-dir build-gpu -L gpu --output-on-failure -j1 > "$OUT/gpu-tests.log" 2>&1; then
    tests_result="pass"
  else
    tests_result="FAIL"
    status=1
  fi
  tail -5 "$OUT/gpu-tests.log"
  grep -E "Failed|\*\*\*Failed|FAILED" "$OUT/gpu-tests.log" | head -20
  if command -v compute-sanitizer >/dev/null; then
    for tool in memcheck racecheck; do
      log "compute-sanitizer $tool (small sweep)"
      if compute-sanitizer --tool "$tool" --error-exitcode 9 build-gpu/tests/gpu_tests \
           --gtest_filter='*Sanitizer*' > "$OUT/sanitizer-$tool.log" 2>&1; then
        tests_result+=", $tool clean"
      else
        tests_result+=", $tool FAIL"
        status=1
        tail -20 "$OUT/sanitizer-$tool.log"
      fi
    done
  fi
fi

if ((!skip_bench)); then
  B=build-gpu/mlaspec
  reps=30
  # Calibrate the dispatch cost model first so the bench's `auto` column uses this GPU's profile.
  log "calibrate (quick grid) -> $OUT/profile.json"
  profile=()
  if $B calibrate --quick --out "$OUT/profile.json" --report "$OUT/calibration.md" \
       > "$OUT/calibrate.log" 2>&1; then
    profile=(--profile "$OUT/profile.json")
  else
    status=1
    tail -20 "$OUT/calibrate.log"
  fi
  log "bench: standard set, bf16 + fp8"
  $B bench --device cuda --set standard --kv both --reps $reps "${profile[@]}" \
    --json "$OUT/standard.json" > "$OUT/bench-standard.txt" 2>&1 || status=1
  log "bench: standard set, deterministic"
  $B bench --device cuda --set standard --kv both --deterministic --reps $reps "${profile[@]}" \
    --json "$OUT/standard-det.json" > "$OUT/bench-standard-det.txt" 2>&1 || status=1
  if ((!quick)); then
    log "bench: q_len sweep and S sweep (bf16 + fp8)"
    $B bench --device cuda --set qsweep --kv both --reps $reps "${profile[@]}" \
      --json "$OUT/qsweep.json" > "$OUT/bench-qsweep.txt" 2>&1 || status=1
    $B bench --device cuda --set ssweep --kv both --reps $reps "${profile[@]}" \
      --json "$OUT/ssweep.json" > "$OUT/bench-ssweep.txt" 2>&1 || status=1
  fi
  for f in "$OUT"/bench-*.txt; do echo "=== $(basename "$f")"; cat "$f"; done
fi

echo
echo "================ gpu-check summary ================"
echo "GPU:   $(tail -n +2 "$OUT/gpu.txt" | head -1)"
echo "tests: $tests_result"
[[ -s "$OUT/ptxas.txt" ]] && { echo "ptxas:"; sed 's/^/  /' "$OUT/ptxas.txt" | head -8; }
if [[ -f "$OUT/calibration.md" ]]; then
  echo "dispatch calibration (crossovers, regret):"
  grep -iE "crossover|regret" "$OUT/calibration.md" | head -12 | sed 's/^/  /'
fi
if [[ -f "$OUT/bench-standard.txt" ]]; then
  echo "standard set (default mode), then fp8/bf16 ratios:"
  grep -E '^\| ' "$OUT/bench-standard.txt"
fi
echo "exit status: $status"
exit $status
