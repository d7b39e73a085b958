#!/usr/bin/env bash
# Copies the header-only dependencies and GoogleTest's sources from this machine's Debian packages,
# and a sysroot of the engine's library packages, into .deps/ (git-ignored), so a machine without
# those packages (the lent GPU machine) can build: carry .deps there and configure with
# -DMLASPEC_EXTRA_INCLUDE=.deps/include -DMLASPEC_GTEST_SOURCE_DIR=.deps/googletest and the
# arguments scripts/gpu-sysroot.sh sets (scripts/gpu-check.sh does both).
set -euo pipefail
cd "$(dirname "$0")/.."
for f in /usr/src/googletest/CMakeLists.txt /usr/include/CLI/CLI.hpp /usr/include/nlohmann/json.hpp; do
  [[ -e $f ]] || { echo "fetch-deps: $f missing: apt-get install googletest libcli11-dev nlohmann-json3-dev" >&2; exit 1; }
done
rm -rf .deps && mkdir -p .deps/include
cp -r /usr/src/googletest .deps/googletest
cp -r /usr/include/CLI /usr/include/nlohmann .deps/include/
# nccl.h for machines whose NCCL (e.g. a Python wheel) ships the library without the header.
nccl_h=$(ls /usr/local/cuda/include/nccl.h /usr/include/nccl.h 2>/dev/null | head -1 || true)
if [[ -n $nccl_h ]]; then mkdir -p .deps/nccl/include && cp "$nccl_h" .deps/nccl/include/; fi
# The engine layers' shared libraries (OpenBLAS, PCRE2, ICU, cpp-httplib) from their Debian packages, as one
# trimmed sysroot tarball (headers and shared libraries only: the whole working tree a GPU call
# carries is limited to 64 MiB): the lent GPU machine has none of them and no package access.
# scripts/gpu-sysroot.sh unpacks it there.
tmp=$(mktemp -d)
# cpp-httplib (the server): Debian's split build, a header and a library made with OpenSSL, zlib
# and Brotli support, so their headers come too (their runtime libraries are the machine's, except
# Brotli's).
(cd "$tmp" && apt-get download libopenblas0-pthread libopenblas-pthread-dev libgfortran5 \
   libpcre2-8-0 libpcre2-dev libicu72 libicu-dev libcpp-httplib0.11 libcpp-httplib-dev \
   libssl-dev zlib1g-dev libbrotli-dev libbrotli1 >/dev/null 2>&1)
mkdir -p "$tmp/root"
for f in "$tmp"/*.deb; do dpkg -x "$f" "$tmp/root"; done
find "$tmp/root" -name '*.a' -delete
rm -rf "$tmp/root/usr/share" "$tmp/root/usr/bin" "$tmp/root/usr/sbin"
lib=$tmp/root/usr/lib/x86_64-linux-gnu
rm -f "$lib"/openblas-pthread/liblapack* "$lib"/libpcre2-{16,32,posix}* "$lib"/libicu{test,tu,io}*
tar cJf .deps/sysroot.tar.xz -C "$tmp/root" .
rm -rf "$tmp"
echo "fetch-deps: .deps ready ($(du -sh .deps | cut -f1))"
