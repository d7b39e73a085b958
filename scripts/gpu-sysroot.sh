#!/usr/bin/env bash
# Source this on a machine without the engine's Debian library packages (the lent GPU machine):
# unpacks .deps/sysroot.tar.xz (scripts/fetch-deps.sh) into .deps/sysroot and exports what CMake, pkg-config
# and the loader need to find OpenBLAS, PCRE2, ICU and cpp-httplib there. Sets MLASPEC_SYSROOT_CMAKE_ARGS.
#   source scripts/gpu-sysroot.sh && cmake ... "${MLASPEC_SYSROOT_CMAKE_ARGS[@]}"
MLASPEC_SYSROOT_CMAKE_ARGS=()
# Needed when any of the three is missing (the lent GPU machine has OpenBLAS but neither PCRE2's
# nor ICU's headers: the tokenizer would build as "unavailable").
mlaspec_need_sysroot() {
  ! ldconfig -p 2>/dev/null | grep -q libopenblas ||
    [[ ! -f /usr/include/pcre2.h ]] ||
    [[ ! -f /usr/include/unicode/uversion.h && ! -f /usr/include/x86_64-linux-gnu/unicode/uversion.h ]]
}
if [[ -f .deps/sysroot.tar.xz ]] && mlaspec_need_sysroot; then
  sysroot=$PWD/.deps/sysroot
  if [[ ! -d $sysroot/usr ]]; then
    mkdir -p "$sysroot" && tar xJf .deps/sysroot.tar.xz -C "$sysroot"
  fi
  lib=$sysroot/usr/lib/x86_64-linux-gnu
  # Debian selects the BLAS through update-alternatives, which dpkg -x does not run: link the
  # pthread OpenBLAS where the plain names are looked for.
  ln -sf openblas-pthread/libopenblas.so.0 "$lib/libopenblas.so"
  ln -sf openblas-pthread/libopenblas.so.0 "$lib/libopenblas.so.0"
  ln -sf x86_64-linux-gnu/openblas-pthread/cblas.h "$sysroot/usr/include/cblas.h"
  ln -sf x86_64-linux-gnu/openblas-pthread/openblas_config.h "$sysroot/usr/include/openblas_config.h"
  export PKG_CONFIG_PATH=$lib/pkgconfig:$lib/openblas-pthread/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
  export PKG_CONFIG_SYSROOT_DIR=$sysroot
  export LD_LIBRARY_PATH=$lib:$lib/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  # OpenSSL's per-architecture headers (httplib.h includes them), which the compiler finds in the
  # system's multiarch directory only.
  export CPATH=$sysroot/usr/include/x86_64-linux-gnu${CPATH:+:$CPATH}
  MLASPEC_SYSROOT_CMAKE_ARGS=(-DCMAKE_PREFIX_PATH="$sysroot/usr" -DICU_ROOT="$sysroot/usr")
  echo "gpu-sysroot: engine libraries from $sysroot"
fi
