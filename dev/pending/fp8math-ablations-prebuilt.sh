#!/usr/bin/env bash
# fp8math-ablations without building on the device: times mlaspec binaries built on the CPU machine
# and packed into out/pb/pb.tar.xz (dev/pending/README.md says how; seven binaries of ~21 MB pack to
# ~3 MB in one xz stream, since they differ in one kernel). Run it where it is, carrying ".deps/sysroot.tar.xz" and "out/pb" (all of .deps does not fit beside
# them in the 64 MiB a call may carry). Saves the ~4 min a CUDA build takes in each device call.
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
    --backend cuda_fold --no-check --json "$RES/$v.json" > "$RES/bench-$v.txt" 2>&1
  echo "rc $?"
  grep -E "^\|" "$RES/bench-$v.txt" | grep -E "kv=fp8|^\| #" | head -14
done
echo "total $((SECONDS - t0)) s"
