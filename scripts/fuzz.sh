#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) in build-fuzz and runs them.
#   scripts/fuzz.sh                 every target for MLASPEC_FUZZ_SECONDS (default 20) each
#   scripts/fuzz.sh NAME SECONDS    one target for SECONDS (e.g. a 600-second campaign), on a
#                                   scratch copy of its seed corpus; findings land in build-fuzz/
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
secs=${2:-${MLASPEC_FUZZ_SECONDS:-20}}
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_C_COMPILER=clang -DMLASPEC_CUDA=OFF -DMLASPEC_FUZZ=ON -DMLASPEC_FUZZ_SECONDS="$secs" \
  >/dev/null
cmake --build build-fuzz -j"$jobs" --target mlaspec_fuzzers
if (($# >= 1)); then
  ctest --test-dir build-fuzz -R "^fuzz\.$1\$" --output-on-failure
else
  ctest --test-dir build-fuzz -L fuzz --output-on-failure
fi
