# Cross-compiling for 64-bit ARM (a robot's Jetson- or Raspberry-Pi-class computer) with Debian's
# aarch64-linux-gnu-g++ against a Debian arm64 root file system holding the target's libraries
# (LibTorch, yaml-cpp, nlohmann_json): -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64-debian.cmake
# -DLEROBOT_ARM64_SYSROOT=/path/to/root (scripts/check_arm64.sh makes one with mmdebstrap).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
if(NOT LEROBOT_ARM64_SYSROOT)
  set(LEROBOT_ARM64_SYSROOT "$ENV{LEROBOT_ARM64_SYSROOT}")
endif()
if(NOT IS_DIRECTORY "${LEROBOT_ARM64_SYSROOT}/usr/lib/aarch64-linux-gnu")
  message(FATAL_ERROR "LEROBOT_ARM64_SYSROOT='${LEROBOT_ARM64_SYSROOT}' is not a Debian arm64 root (no usr/lib/aarch64-linux-gnu)")
endif()
set(CMAKE_SYSROOT "${LEROBOT_ARM64_SYSROOT}")
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES LEROBOT_ARM64_SYSROOT)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
# Packages: the root first, then the host paths too, so a lerobot_cpp installed outside the root
# (CMAKE_PREFIX_PATH) is found; libraries and headers come from the root only.
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
