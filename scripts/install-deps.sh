#!/usr/bin/env bash
# Installs what mlaspec needs to build and test on Debian/Ubuntu (no-op when already present).
# CUDA is optional: with nvcc on PATH or in /usr/local/cuda the CUDA backends build too.
set -euo pipefail
pkgs=(build-essential cmake libgtest-dev googletest libcli11-dev nlohmann-json3-dev clang-format clang-tidy
      clang libclang-rt-14-dev pkg-config libopenblas-dev libpcre2-dev libicu-dev libcpp-httplib-dev
      python3 python3-pip)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all packages present"
else
  SUDO=""
  [[ $(id -u) -eq 0 ]] || SUDO="sudo"
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# Python packages the tests use: openai (tests/serve/openai_client_test.py; skipped without it).
pip_pkgs=(openai)
for p in "${pip_pkgs[@]}"; do
  python3 -c "import $p" 2>/dev/null && continue
  echo "install-deps: pip install $p"
  python3 -m pip install --quiet "$p" || python3 -m pip install --quiet --user --break-system-packages "$p" ||
    echo "install-deps: warning: pip could not install $p (its tests will skip)"
done
