# GPU plugins: which ones the build makes, and the toolchains they need.
#
# WEFT_WITH_CUDA = AUTO (default) | ON | OFF
#   AUTO  builds plugins/cuda when nvcc is found (CMAKE_CUDA_COMPILER, nvcc on PATH, or
#         /usr/local/cuda/bin/nvcc) together with cuBLAS and cuDNN; otherwise says so in the
#         configure output and builds without it. Sanitizer builds (WEFT_SANITIZE) skip it: the CUDA
#         runtime is not instrumented, and the plugin's host code is the shared kernel layer's,
#         which the gpuhost test plugin exercises under the sanitizers.
#   ON    the CUDA plugin is required: configuring fails, naming the fix, when the toolkit is missing.
#   OFF   never built.
# CMAKE_CUDA_ARCHITECTURES defaults to "90-real;90-virtual" (SASS for H100-class GPUs plus PTX that
# newer GPUs JIT-compile); add SASS for older GPUs with e.g.
#   -DCMAKE_CUDA_ARCHITECTURES="80-real;86-real;89-real;90-real;90-virtual"
# ("native" needs a GPU at configure time and fails without one).
set(WEFT_WITH_CUDA AUTO CACHE STRING "Build the CUDA plugin: AUTO (when the toolkit is found), ON (required) or OFF")
set_property(CACHE WEFT_WITH_CUDA PROPERTY STRINGS AUTO ON OFF)
set(WEFT_BUILD_CUDA OFF)
set(_weft_cuda_why "")

list(JOIN WEFT_SANITIZE "," _weft_san_list)  # no ';' in summary texts
if(WEFT_WITH_CUDA STREQUAL "AUTO" AND WEFT_SANITIZE)
  set(_weft_cuda_why "sanitizer build (WEFT_SANITIZE=${_weft_san_list}): pass -DWEFT_WITH_CUDA=ON to force it")
elseif(NOT WEFT_WITH_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc CACHE FILEPATH "CUDA compiler")
  endif()
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES "90-real;90-virtual" CACHE STRING "CUDA architectures the plugin is built for")
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    # CMake 3.25 does not know nvcc's C++20 flag, which the SDK's cxx_std_20 requirement asks for.
    if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.0)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
      list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
    endif()
    find_package(CUDAToolkit)
    find_library(WEFT_CUDNN_LIBRARY cudnn HINTS ${CUDAToolkit_LIBRARY_DIR})
    find_path(WEFT_CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
    if(NOT CUDAToolkit_FOUND OR NOT TARGET CUDA::cublas)
      set(_weft_cuda_why "nvcc found (${CMAKE_CUDA_COMPILER}) but not the CUDA runtime / cuBLAS libraries")
    elseif(NOT WEFT_CUDNN_LIBRARY OR NOT WEFT_CUDNN_INCLUDE_DIR)
      set(_weft_cuda_why "cuDNN (libcudnn.so, cudnn.h) not found next to the toolkit; install cuDNN 9 or set "
                         "WEFT_CUDNN_LIBRARY and WEFT_CUDNN_INCLUDE_DIR")
    else()
      set(WEFT_BUILD_CUDA ON)
    endif()
  else()
    set(_weft_cuda_why "no CUDA compiler found (nvcc): install the CUDA toolkit (e.g. into /usr/local/cuda) or pass "
                       "-DCMAKE_CUDA_COMPILER=/path/to/nvcc")
  endif()
endif()

if(WEFT_BUILD_CUDA)
  find_program(CCACHE_PROGRAM ccache)
  if(CCACHE_PROGRAM)
    set(CMAKE_CUDA_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
  endif()
  message(STATUS "weft: CUDA plugin ON (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, architectures "
                 "${CMAKE_CUDA_ARCHITECTURES}, cuDNN ${WEFT_CUDNN_LIBRARY})")
elseif(WEFT_WITH_CUDA STREQUAL "ON")
  message(FATAL_ERROR "WEFT_WITH_CUDA=ON but the CUDA plugin cannot be built: ${_weft_cuda_why}. "
                      "Or configure with -DWEFT_WITH_CUDA=OFF (or AUTO) to build without it.")
elseif(WEFT_WITH_CUDA STREQUAL "OFF")
  message(STATUS "weft: CUDA plugin OFF (WEFT_WITH_CUDA=OFF)")
else()
  message(STATUS "weft: CUDA plugin not built: ${_weft_cuda_why}")
endif()

# WEFT_WITH_HIP = AUTO (default) | ON | OFF: plugins/hip, built with hipcc (Debian: hipcc,
# libamdhip64-dev, rocm-device-libs; scripts/packages.txt). AUTO builds it when hipcc, the HIP
# runtime library and its headers are found (not in sanitizer builds); ON fails without them.
# WEFT_HIP_ARCHITECTURES: the --offload-arch list (default gfx90a;gfx940, the MI200/MI300 targets
# Debian's ROCm 5.2 compiles; gfx942 and gfx11xx need a newer ROCm).
set(WEFT_WITH_HIP AUTO CACHE STRING "Build the HIP plugin: AUTO (when hipcc is found), ON (required) or OFF")
set_property(CACHE WEFT_WITH_HIP PROPERTY STRINGS AUTO ON OFF)
set(WEFT_HIP_ARCHITECTURES "gfx90a;gfx940" CACHE STRING "AMD GPU architectures (hipcc --offload-arch) of the HIP plugin")
set(WEFT_BUILD_HIP OFF)
set(_weft_hip_why "")
if(WEFT_WITH_HIP STREQUAL "AUTO" AND WEFT_SANITIZE)
  set(_weft_hip_why "sanitizer build (WEFT_SANITIZE=${_weft_san_list}): pass -DWEFT_WITH_HIP=ON to force it")
elseif(NOT WEFT_WITH_HIP STREQUAL "OFF")
  find_program(WEFT_HIPCC hipcc)
  find_library(WEFT_AMDHIP64_LIBRARY amdhip64)
  find_path(WEFT_HIP_INCLUDE_DIR hip/hip_runtime_api.h)
  if(WEFT_HIPCC AND WEFT_AMDHIP64_LIBRARY AND WEFT_HIP_INCLUDE_DIR)
    set(WEFT_BUILD_HIP ON)
    # Optional vendor libraries of the HIP plugin. rocPRIM (Debian librocprim-dev, header-only):
    # full reductions (sum / mean / max over every element) through rocprim::reduce
    # (DeviceLaunch::FullReduce); without it the layer's two-pass kernels run.
    find_path(WEFT_ROCPRIM_INCLUDE_DIR rocprim/rocprim.hpp HINTS ${WEFT_HIP_INCLUDE_DIR})
    # hipBLAS and MIOpen (AMD's ROCm packages; not in Debian, so not built or tested here) would
    # plug in the same way as cuBLAS / cuDNN do for CUDA: find_package(hipblas) / find_package(miopen)
    # -> WEFT_GPU_HIPBLAS / WEFT_GPU_MIOPEN defined for hip_kernels.hip and the libraries linked;
    # hipBLAS installed as DeviceLaunch::vendor_gemm (the cuBLAS hook: row-major operands swapped,
    # false for shapes it rejects -> the tiled kernel), MIOpen Convolution / Pooling / BatchNorm
    # registered over the layer's classes through GpuLayerOptions, each falling back per node.
  else()
    set(_weft_hip_why "hipcc, libamdhip64 or hip/hip_runtime_api.h not found: apt-get install hipcc libamdhip64-dev "
                      "rocm-device-libs (scripts/setup.sh does), or point WEFT_HIPCC at a ROCm install")
  endif()
endif()
if(WEFT_BUILD_HIP)
  if(WEFT_ROCPRIM_INCLUDE_DIR)
    set(_weft_rocprim "rocPRIM reductions")
  else()
    set(_weft_rocprim "no rocPRIM (apt-get install librocprim-dev): the layer's reductions")
  endif()
  message(STATUS "weft: HIP plugin ON (${WEFT_HIPCC}, architectures ${WEFT_HIP_ARCHITECTURES}; ${_weft_rocprim})")
elseif(WEFT_WITH_HIP STREQUAL "ON")
  message(FATAL_ERROR "WEFT_WITH_HIP=ON but the HIP plugin cannot be built: ${_weft_hip_why}. "
                      "Or configure with -DWEFT_WITH_HIP=OFF (or AUTO) to build without it.")
elseif(WEFT_WITH_HIP STREQUAL "OFF")
  message(STATUS "weft: HIP plugin OFF (WEFT_WITH_HIP=OFF)")
else()
  message(STATUS "weft: HIP plugin not built: ${_weft_hip_why}")
endif()

# In the configure summary, with the reason when AUTO did not build a plugin.
foreach(_gpu CUDA HIP)
  string(TOLOWER ${_gpu} _dir)
  set(_desc "${_gpu} device plugin (plugins/${_dir}) and its device tests")
  if(NOT WEFT_BUILD_${_gpu} AND _weft_${_dir}_why)
    string(APPEND _desc " — not built: ${_weft_${_dir}_why}")
  endif()
  weft_feature(${_dir} WEFT_WITH_${_gpu} "${_desc}" ENABLED WEFT_BUILD_${_gpu})
endforeach()
