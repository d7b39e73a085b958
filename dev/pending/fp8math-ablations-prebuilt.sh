#!/usr/bin/env bash
# fp8math-ablations without building on the device: times mlaspec binaries built on the CPU machine
# and packed into out/pb/pb.tar.xz by fp8math-ablations-pack.sh (seven binaries of ~21 MB pack to
# ~3 MB in one xz stream, since they differ in one kernel): main's (mlaspec-v0) over ROWS with bf16,
# fp8 and fp8 math, checked, then each variant with fp8 and fp8 math. Run it where it is, carrying
# ".deps/sysroot.tar.xz" and "out/pb" (all of .deps does not fit beside them in the 64 MiB a call
# may carry). Saves the ~4 min a CUDA build takes in each device call. The perf tables still come
# from gpu-check.sh.
# Write the results straight under the call's $OUT (RES=$OUT/res): a call cut short by its time
# limit still brings back every bench finished before it.
set -uo pipefail
cd "$(dirname "$0")/../.."
RES=${RES:-/tmp/res}
mkdir -p "$RES" /tmp/pb
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv |
  tee "$RES/gpu.txt"  # gpu-check.sh's fields
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
echo "total $((SECONDS - t0)) s"
