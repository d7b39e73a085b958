#!/usr/bin/env bash
# fp8math-ablations without building on the device: times mlaspec binaries built on the CPU machine
# and packed into out/pb/pb.tar.xz (dev/pending/README.md says how; seven binaries of ~21 MB pack to
# ~3 MB in one xz stream, since they differ in one kernel). Run it where it is, carrying ".deps/sysroot.tar.xz" and "out/pb" (all of .deps does not fit beside
# them in the 64 MiB a call may carry). Saves the ~4 min a CUDA build takes in each device call.
# Write the results straight under the call's $OUT (RES=$OUT/res): a call cut short by its time
# limit still brings back every bench finished before it.
set -uo pipefail
cd "$(dirname "$0")/../.."
RES=${RES:-/tmp/res}
mkdir -p "$RES" /tmp/pb
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv | tee "$RES/gpu.txt"
source scripts/gpu-sysroot.sh
nccl_root=$(python3 -c 'import nvidia.nccl as m; print(list(m.__path__)[0])' 2>/dev/null || true)
export LD_LIBRARY_PATH=${nccl_root:+$nccl_root/lib:}/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
xz -dc out/pb/pb.tar.xz | tar xf - -C /tmp/pb
ROWS=${ROWS:-0,1,2,4,6}
# CHECK_VARIANTS=1: the variants' outputs checked too (a patch meant to land, not an ablation).
chk=(--no-check)
[[ ${CHECK_VARIANTS:-0} == 1 ]] && chk=()
t0=$SECONDS
B=/tmp/pb/mlaspec-v0
if ldd $B | grep -i "not found"; then echo "missing libraries (above)"; exit 1; fi
echo "=== v0 (main), checked"
timeout 120 $B bench --device cuda --set standard --rows $ROWS --kv both --fp8-math \
  --backend cuda_fold --json "$RES/v0.json" > "$RES/bench-v0.txt" 2>&1
echo "rc $?"
grep -E "^\|" "$RES/bench-v0.txt" | head -40
for f in /tmp/pb/mlaspec-*; do
  v=${f##*/mlaspec-}
  [[ $v == v0 ]] && continue
  echo "=== $v ($((SECONDS - t0)) s)"
  timeout 60 $f bench --device cuda --set standard --rows $ROWS --kv fp8 --fp8-math \
    --backend cuda_fold "${chk[@]}" --json "$RES/$v.json" > "$RES/bench-$v.txt" 2>&1
  echo "rc $?"
  grep -E "^\|" "$RES/bench-$v.txt" | grep -E "kv=fp8|^\| #" | head -14
done
# P V straight into O is not promoted per tile: how far from the exact result does it land at
# long splits? Rows 1 and 2 (S = 128k, 1M) checked: the error, or the bound it broke, is printed.
if [[ -x /tmp/pb/mlaspec-direct ]]; then
  echo "=== direct, checked ($((SECONDS - t0)) s)"
  timeout 90 /tmp/pb/mlaspec-direct bench --device cuda --set standard --rows 1,2 --kv fp8 \
    --fp8-math --backend cuda_fold --json "$RES/direct-checked.json" \
    > "$RES/bench-direct-checked.txt" 2>&1
  echo "rc $?"
  grep -iE "error|bound|^\|" "$RES/bench-direct-checked.txt" | head -20
  # The same with splits capped (plan.cc, MLASPEC_DEV_FP8MATH_CHUNK tiles): the time and the error
  # of an accurate direct P V on the tensor-bound rows.
  for cap in 32 128; do
    echo "=== direct, splits <= $cap tiles, checked ($((SECONDS - t0)) s)"
    MLASPEC_DEV_FP8MATH_CHUNK=$cap timeout 90 /tmp/pb/mlaspec-direct bench --device cuda \
      --set standard --rows 1,2,4,5,11 --kv fp8 --fp8-math --backend cuda_fold \
      --json "$RES/direct-cap$cap.json" > "$RES/bench-direct-cap$cap.txt" 2>&1
    echo "rc $?"
    grep -iE "error|bound|^\|" "$RES/bench-direct-cap$cap.txt" | head -20
  done
fi
echo "total $((SECONDS - t0)) s"
# STANDARD=1: then main's binary over the whole standard set, every layout and fp8 math, default
# and deterministic (gpu-check.sh --skip-tests --quick --no-calibrate's benches, the files
# scripts/perf_tables.py reads), with the SM clock sampled.
if [[ ${STANDARD:-0} == 1 ]]; then
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.active \
    --format=csv,noheader,nounits -lms 100 > "$RES/clocks.csv" 2>&1 &
  smi_pid=$!
  echo "=== standard, all layouts + fp8 math ($((SECONDS - t0)) s)"
  timeout 240 $B bench --device cuda --set standard --kv all --fp8-math --reps 30 \
    --json "$RES/standard.json" > "$RES/bench-standard.txt" 2>&1
  echo "rc $?"
  echo "=== standard, deterministic ($((SECONDS - t0)) s)"
  timeout 200 $B bench --device cuda --set standard --kv all --fp8-math --deterministic --reps 30 \
    --json "$RES/standard-det.json" > "$RES/bench-standard-det.txt" 2>&1
  echo "rc $?"
  kill $smi_pid
  grep -E "^\|" "$RES/bench-standard.txt" | tail -40
  echo "total $((SECONDS - t0)) s"
fi
