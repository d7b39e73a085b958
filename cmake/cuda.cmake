# MLASPEC_CUDA=AUTO|ON|OFF -> MLASPEC_WITH_CUDA. Kernels build for sm_90a (wgmma, setmaxnreg).
include(CheckLanguage)
set(MLASPEC_WITH_CUDA OFF)
if(NOT MLASPEC_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(MLASPEC_WITH_CUDA ON)
  elseif(MLASPEC_CUDA STREQUAL "ON")
    message(FATAL_ERROR "MLASPEC_CUDA=ON but no CUDA compiler was found (set CUDACXX or "
                        "CMAKE_CUDA_COMPILER)")
  endif()
endif()

if(MLASPEC_WITH_CUDA)
  # sm_90a via -gencode (the -arch=sm_90a shorthand also runs a plain sm_90 pass that rejects
  # wgmma on nvcc 13.0).
  set(CMAKE_CUDA_ARCHITECTURES OFF)
  enable_language(CUDA)
  # CMake 3.25 predates nvcc's C++20 support and would reject CUDA_STANDARD 20 ("does not know the
  # flags"); tell it the flag. (CUDA falls back to CXX_STANDARD, so the standard must be known.)
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA_STANDARD 20)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  set(CMAKE_CUDA_EXTENSIONS OFF)
  find_package(CUDAToolkit REQUIRED)
  set(MLASPEC_CUDA_FLAGS -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr
      -lineinfo -Xcompiler=-Wall)
  message(STATUS "mlaspec: CUDA backends ON (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, sm_90a)")
else()
  message(STATUS "mlaspec: CUDA backends OFF")
endif()

# NCCL (decode context parallelism across GPUs): optional. Looked for in the CUDA toolkit and in
# MLASPEC_NCCL_ROOT (e.g. the nvidia-nccl wheel's folder); MLASPEC_NCCL_INCLUDE / _LIBRARY can be
# given directly.
set(MLASPEC_WITH_NCCL OFF)
if(MLASPEC_WITH_CUDA)
  set(MLASPEC_NCCL_ROOT "" CACHE PATH "NCCL install holding include/nccl.h and lib/libnccl.so*")
  find_path(MLASPEC_NCCL_INCLUDE nccl.h
            HINTS ${MLASPEC_NCCL_ROOT}/include ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
  find_library(MLASPEC_NCCL_LIBRARY NAMES nccl libnccl.so.2
               HINTS ${MLASPEC_NCCL_ROOT}/lib ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib
                     /usr/local/cuda/lib64)
  if(MLASPEC_NCCL_INCLUDE AND MLASPEC_NCCL_LIBRARY)
    set(MLASPEC_WITH_NCCL ON)
    message(STATUS "mlaspec: NCCL ON (${MLASPEC_NCCL_LIBRARY})")
  else()
    message(STATUS "mlaspec: NCCL OFF (not found; set MLASPEC_NCCL_ROOT)")
  endif()
endif()
