# Finds every third-party dependency once; targets below are used by the layer libraries.
find_package(Threads REQUIRED)
find_package(Torch REQUIRED)           # Debian libtorch-dev (CPU) or a CUDA LibTorch via CMAKE_PREFIX_PATH
find_package(nlohmann_json 3.9 REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(FFMPEG REQUIRED IMPORTED_TARGET libavformat libavcodec libswscale libavutil)
find_library(SNAPPY_LIB snappy REQUIRED)
find_library(ZSTD_LIB zstd REQUIRED)
find_library(ZLIB_LIB z REQUIRED)
find_library(BOX2D_LIB box2d)
find_library(CHIPMUNK_LIB chipmunk REQUIRED)  # envs/pusht: Chipmunk2D, the engine under pymunk (Debian libchipmunk-dev)
find_path(CHIPMUNK_INCLUDE_DIR chipmunk/chipmunk.h REQUIRED)
find_package(CURL REQUIRED)         # hub/: the Hugging Face Hub client (Debian libcurl4-openssl-dev)
find_package(JPEG)                  # the JPEGCompression augmentation (Debian libjpeg-dev); left out without it
find_package(GTest)

# Torch's exported flags include -D_GLIBCXX_USE_CXX11_ABI; keep them on the torch-using targets only.
if(TORCH_CUDA_LIBRARIES OR CUDA_FOUND OR CUDAToolkit_FOUND)
  set(LEROBOT_WITH_CUDA ON)
else()
  set(LEROBOT_WITH_CUDA OFF)
endif()

# Gloo headers. c10d's ProcessGroupGloo.hpp includes <gloo/...>; Debian's LibTorch has them beside
# it (libgloo-dev), the official LibTorch zip and pip's torch ship none. Looked for, in order: the
# GLOO_INCLUDE_DIR variable or environment variable, the LibTorch's own include dirs, then the
# system and CMAKE_PREFIX_PATH (a distribution's libgloo-dev). Without them the Gloo process group
# is left out: one-process and NCCL training still build, multi-process CPU training does not.
if(DEFINED GLOO_INCLUDE_DIR OR DEFINED ENV{GLOO_INCLUDE_DIR})
  find_path(LEROBOT_GLOO_INCLUDE_DIR gloo/algorithm.h PATHS ${GLOO_INCLUDE_DIR} $ENV{GLOO_INCLUDE_DIR} NO_DEFAULT_PATH)
endif()
find_path(LEROBOT_GLOO_INCLUDE_DIR gloo/algorithm.h PATHS ${TORCH_INCLUDE_DIRS} NO_DEFAULT_PATH)
find_path(LEROBOT_GLOO_INCLUDE_DIR gloo/algorithm.h)
# Where they came from, for the build summary.
set(LEROBOT_GLOO_SOURCE "the system (a distribution's libgloo-dev)")
if(LEROBOT_GLOO_INCLUDE_DIR AND (DEFINED GLOO_INCLUDE_DIR OR DEFINED ENV{GLOO_INCLUDE_DIR}))
  set(LEROBOT_GLOO_SOURCE "GLOO_INCLUDE_DIR")
elseif(LEROBOT_GLOO_INCLUDE_DIR MATCHES "^${TORCH_INSTALL_PREFIX}/" AND NOT TORCH_INSTALL_PREFIX MATCHES "^/usr(/local)?$")
  set(LEROBOT_GLOO_SOURCE "the LibTorch")
endif()
find_file(LEROBOT_C10D_GLOO_HEADER torch/csrc/distributed/c10d/ProcessGroupGloo.hpp
          PATHS ${TORCH_INCLUDE_DIRS} NO_DEFAULT_PATH)
if(LEROBOT_GLOO_INCLUDE_DIR AND LEROBOT_C10D_GLOO_HEADER)
  set(LEROBOT_WITH_GLOO ON)
else()
  set(LEROBOT_WITH_GLOO OFF)
  message(WARNING "No gloo headers (gloo/algorithm.h) found: building without the Gloo process group, "
                  "so multi-process CPU training and its tests will not work. Install libgloo-dev, or "
                  "pass -DGLOO_INCLUDE_DIR=<dir holding gloo/>, and configure again.")
endif()

# One block that says what this build is made of and where each header came from.
function(lerobot_print_build_summary)
  set(_cuda "no")
  if(LEROBOT_WITH_CUDA)
    set(_cuda_version "${CUDAToolkit_VERSION}")
    if(NOT _cuda_version)
      set(_cuda_version "${CUDA_VERSION}")
    endif()
    set(_cuda_inc "${CUDAToolkit_INCLUDE_DIRS}")
    if(NOT _cuda_inc)
      set(_cuda_inc "${CUDA_INCLUDE_DIRS}")
    endif()
    set(_cuda "yes, CUDA ${_cuda_version} (headers: ${_cuda_inc})")
  endif()
  set(_nccl "no (this LibTorch has no c10d NCCL, or nccl.h was not found)")
  get_property(_nccl_inc GLOBAL PROPERTY LEROBOT_NCCL_INCLUDE_DIR)
  if(_nccl_inc)
    set(_nccl "yes (nccl.h from ${_nccl_inc})")
  endif()
  set(_gloo "no: multi-process CPU training unavailable (install libgloo-dev or set GLOO_INCLUDE_DIR)")
  if(LEROBOT_WITH_GLOO)
    set(_gloo "yes (gloo headers from ${LEROBOT_GLOO_SOURCE}: ${LEROBOT_GLOO_INCLUDE_DIR})")
  endif()
  list(GET TORCH_INCLUDE_DIRS 0 _torch_inc)
  message(STATUS "lerobot.cpp build:")
  message(STATUS "  LibTorch  ${Torch_VERSION} at ${TORCH_INSTALL_PREFIX} (headers: ${_torch_inc})")
  message(STATUS "  CUDA      ${_cuda}")
  message(STATUS "  NCCL      ${_nccl}")
  message(STATUS "  Gloo      ${_gloo}")
  message(STATUS "  FFmpeg    ${FFMPEG_libavcodec_VERSION} (headers: ${FFMPEG_INCLUDE_DIRS})")
  if(JPEG_FOUND)
    message(STATUS "  libjpeg   ${JPEG_VERSION} (JPEGCompression augmentation)")
  else()
    message(STATUS "  libjpeg   not found: the JPEGCompression augmentation is refused (install libjpeg-dev)")
  endif()
  message(STATUS "  libstdc++ linked first in every executable (no std symbol can bind into libtorch): ${LEROBOT_LIBSTDCXX}")
endfunction()
