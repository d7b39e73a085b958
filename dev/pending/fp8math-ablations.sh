#!/usr/bin/env bash
# fp8-math ablations (dev/pending/README.md; copy to dev/ with fp8math-ablations.patch applied, run
# from the repository root with .deps carried): builds mlaspec once, benches main's rows, then per
# variant re-compiles one instantiation with its -D flags and relinks, timing each on the same GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
RES=${RES:-/tmp/res}; mkdir -p "$RES"
t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > "$RES/gpu.txt" 2>&1
cat "$RES/gpu.txt"
extra=(-DMLASPEC_EXTRA_INCLUDE="$PWD/.deps/include" -DMLASPEC_GTEST_SOURCE_DIR="$PWD/.deps/googletest")
source scripts/gpu-sysroot.sh
extra+=("${MLASPEC_SYSROOT_CMAKE_ARGS[@]}")
nccl_root=$(python3 -c 'import nvidia.nccl as m; print(list(m.__path__)[0])' 2>/dev/null || true)
if [[ -n $nccl_root && -d $nccl_root/lib ]]; then
  extra+=(-DMLASPEC_NCCL_ROOT="$nccl_root")
  [[ ! -f $nccl_root/include/nccl.h && -f .deps/nccl/include/nccl.h ]] && extra+=(-DMLASPEC_NCCL_INCLUDE="$PWD/.deps/nccl/include")
fi
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S . -B build-gpu "${gen[@]}" -DMLASPEC_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
  -DMLASPEC_WITH_HTTPLIB=OFF "${extra[@]}" > "$RES/configure.log" 2>&1 || { tail -30 "$RES/configure.log"; exit 1; }
cmake --build build-gpu -j"$(nproc)" --target mlaspec > "$RES/build.log" 2>&1 || { tail -40 "$RES/build.log"; exit 1; }
echo "built in $((SECONDS - t0)) s"
ROWS=${ROWS:-0,1,2,4,6}
echo "=== v0 (main), checked"
timeout 150 build-gpu/mlaspec bench --device cuda --set standard --rows $ROWS --kv both --fp8-math \
  --backend cuda_fold --json "$RES/v0.json" > "$RES/bench-v0.txt" 2>&1
grep -E "^\|" "$RES/bench-v0.txt"
compile_cmd() {
  python3 - "$1" <<'PY'
import json, sys
for e in json.load(open('build-gpu/compile_commands.json')):
    if e['file'].endswith('/' + sys.argv[1]):
        print('cd %s && %s' % (e['directory'], e['command']))
PY
}
restore=""
# name=flags (flags: -D options joined by '+')
VARIANTS=${VARIANTS:-direct=fp8math=-DMLASPEC_DEV_FP8MATH=1 n64=fp8math=-DMLASPEC_DEV_PV=1+-DMLASPEC_DEV_PV_N=64+-DMLASPEC_DEV_PV_DEPTH=1 f16n128=fp8math=-DMLASPEC_DEV_PV=2+-DMLASPEC_DEV_PV_N=128+-DMLASPEC_DEV_PV_DEPTH=1 notrans=fp8math=-DMLASPEC_DEV_FP8MATH=2 raw3=fp8=-DMLASPEC_DEV_NARROW_SLOTS=10+-DMLASPEC_DEV_NARROW_RING_KB=188 f16n64d2=fp8math=-DMLASPEC_DEV_PV=2+-DMLASPEC_DEV_PV_N=64+-DMLASPEC_DEV_PV_DEPTH=2 both=fp8math=-DMLASPEC_DEV_FP8MATH=3}
for nv in $VARIANTS; do
  v=${nv%%=*}; rest=${nv#*=}; file=${rest%%=*}_page64.cu; flags=${rest#*=}; flags=${flags//+/ }
  cmd=$(compile_cmd "$file")
  # the other file back to main's code first (one variant at a time)
  if [[ -n $restore && $restore != "$file" ]]; then c0=$(compile_cmd "$restore"); bash -c "$c0" > /dev/null 2>&1; fi
  restore=$file
  echo "=== $v ($flags; left $((${CALL_S:-570} - (SECONDS - t0))) s)"
  ((SECONDS - t0 < ${CALL_S:-570} - 90)) || break
  bash -c "${cmd/ -o / $flags -o }" > "$RES/compile-$v.log" 2>&1 || { tail "$RES/compile-$v.log"; continue; }
  cmake --build build-gpu -j"$(nproc)" --target mlaspec > "$RES/link-$v.log" 2>&1 || { tail "$RES/link-$v.log"; continue; }
  timeout $((${CALL_S:-570} - 5 - (SECONDS - t0))) build-gpu/mlaspec bench --device cuda --set standard --rows $ROWS --kv fp8 --fp8-math \
    --backend cuda_fold --no-check --json "$RES/$v.json" > "$RES/bench-$v.txt" 2>&1
  grep -E "^\|" "$RES/bench-$v.txt" | grep -E "kv=fp8|^\| #" | head -14
done
echo "total $((SECONDS - t0)) s"
