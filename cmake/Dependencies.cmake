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
find_package(GTest)

# Torch's exported flags include -D_GLIBCXX_USE_CXX11_ABI; keep them on the torch-using targets only.
message(STATUS "LibTorch ${Torch_VERSION} at ${TORCH_INSTALL_PREFIX}")
if(TORCH_CUDA_LIBRARIES OR CUDA_FOUND)
  set(LEROBOT_WITH_CUDA ON)
else()
  set(LEROBOT_WITH_CUDA OFF)
endif()
