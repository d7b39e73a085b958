#!/usr/bin/env bash
# Formats (or with --check, verifies) every C++/CUDA source with clang-format (.clang-format).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=(-i)
[[ "${1:-}" == "--check" ]] && mode=(--dry-run --Werror)
git ls-files '*.h' '*.cc' '*.cu' '*.cuh' | xargs -r clang-format "${mode[@]}"
