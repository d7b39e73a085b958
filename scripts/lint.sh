#!/usr/bin/env bash
# Runs clang-tidy (.clang-tidy) over the C++ sources using a CPU build's compile database.
# Usage: scripts/lint.sh [files...]   (default: every src/ .cc file)
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-lint -DMLASPEC_CUDA=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
files=("$@")
((${#files[@]})) || mapfile -t files < <(git ls-files 'src/*.cc')
clang-tidy -p build-lint --quiet "${files[@]}"
