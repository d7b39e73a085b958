#!/usr/bin/env bash
# The test command (README, .ci/run): installs dependencies, builds (with CUDA when nvcc is
# available: the .cu files must compile even where no GPU runs them) and runs every test except
# the GPU-labelled ones; then rebuilds without CUDA under AddressSanitizer + UBSan and runs the
# CPU suite again. Build dirs: build-test, build-asan.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
scripts/install-deps.sh

echo "== build (CUDA ${MLASPEC_CUDA:-AUTO}) =="
cmake -S . -B build-test -DCMAKE_BUILD_TYPE=Release -DMLASPEC_CUDA="${MLASPEC_CUDA:-AUTO}" >/dev/null
cmake --build build-test -j"$jobs"
echo "== tests (everything but label gpu) =="
ctest --test-dir build-test -LE gpu --output-on-failure -j"$jobs"

echo "== AddressSanitizer + UndefinedBehaviorSanitizer build (CPU) =="
# -O1 -g1 (line tables for the reports' stack traces): half the compile time of RelWithDebInfo's
# -O2 -g on the heavy headers (httplib, json, gtest), which was the longest stage of CI.
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DMLASPEC_CUDA=OFF -DMLASPEC_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs"
echo "== tests under ASan + UBSan (label cpu) =="
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan -L cpu --output-on-failure -j"$jobs"

echo "== fuzz: each libFuzzer target for ${MLASPEC_FUZZ_SECONDS:-20} s (clang, ASan + UBSan) =="
scripts/fuzz.sh
