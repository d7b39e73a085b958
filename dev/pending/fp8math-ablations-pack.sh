#!/usr/bin/env bash
# Builds the fp8math-ablations binaries on the CPU machine (nvcc, no GPU) and packs them into
# out/pb/pb.tar.xz for fp8math-ablations-prebuilt.sh. Run from the repository root with
# dev/pending/fp8math-ablations.patch applied (~5 min cold on 2 cores, ~1 min a variant).
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake -S . -B build-gl -DMLASPEC_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DMLASPEC_WITH_HTTPLIB=OFF > /dev/null
compile_cmd() {
  python3 - "$1" <<'PY'
import json, sys
for e in json.load(open('build-gl/compile_commands.json')):
    if e['file'].endswith('/' + sys.argv[1]):
        print('cd %s && %s' % (e['directory'], e['command']))
PY
}
link() { cmake --build build-gl -j"$(nproc)" --target mlaspec > /dev/null; }
rm -rf out/prebuilt && mkdir -p out/prebuilt out/pb
for f in fp8math_page64.cu fp8_page64.cu; do bash -c "$(compile_cmd $f)"; done  # main's code
link
cp build-gl/mlaspec out/prebuilt/mlaspec-v0
# name=instantiation=flags ('+' between flags); VARIANTS= (empty) packs main's binary only
VARIANTS=${VARIANTS-direct=fp8math=-DMLASPEC_DEV_FP8MATH=1 notrans=fp8math=-DMLASPEC_DEV_FP8MATH=2 both=fp8math=-DMLASPEC_DEV_FP8MATH=3 n64=fp8math=-DMLASPEC_DEV_PV=1+-DMLASPEC_DEV_PV_N=64+-DMLASPEC_DEV_PV_DEPTH=1 f16n128=fp8math=-DMLASPEC_DEV_PV=2+-DMLASPEC_DEV_PV_N=128+-DMLASPEC_DEV_PV_DEPTH=1 raw3=fp8=-DMLASPEC_DEV_NARROW_SLOTS=10+-DMLASPEC_DEV_NARROW_RING_KB=188}
for nv in $VARIANTS; do
  v=${nv%%=*} rest=${nv#*=}
  file=${rest%%=*}_page64.cu flags=${rest#*=}
  cmd=$(compile_cmd "$file")
  bash -c "${cmd/ -o / ${flags//+/ } -o }"
  link
  cp build-gl/mlaspec "out/prebuilt/mlaspec-$v"
  bash -c "$cmd"  # back to main's code
  echo "built $v"
done
link
# One xz stream with a dictionary larger than a binary: the copies compress to their differences.
tar cf - -C out/prebuilt . | xz -9 -T1 > out/pb/pb.tar.xz
ls -la out/pb/pb.tar.xz
