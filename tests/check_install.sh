#!/usr/bin/env bash
# ctest BuildCheck.InstalledPackageRunsTheRobotLoop: the C++ deployment package works as a user's
# project uses it. `cmake --install` of this build into an empty prefix; examples/robot_loop
# configured and built against that prefix alone (find_package(lerobot_cpp), lerobot_cpp::inference),
# linking libstdc++ first as an official LibTorch needs; then tests/robot_loop_matches_infer.sh: its
# actions on a tiny trained ACT are lerobot-cpp infer's.
# Usage: tests/check_install.sh SOURCE_DIR BUILD_DIR CXX_COMPILER PREFIX_PATH [-DVAR=VALUE ...]
# (the build's CMAKE_PREFIX_PATH with '|' between entries, and the dependency locations it was
# configured with, e.g. -DTorch_DIR=...)
set -euo pipefail
src=${1:?usage: check_install.sh SOURCE_DIR BUILD_DIR CXX [-Dvar=value ...]}
build=${2:?}
cxx=${3:?}
deps_prefix=${4-}
shift 4
work=$(mktemp -d "${TMPDIR:-/tmp}/lerobot_install_check.XXXXXX")
trap 'rm -rf "$work"' EXIT
cli="$build/apps/lerobot-cpp/lerobot-cpp"

cmake --install "$build" --prefix "$work/prefix" >"$work/install.log"
for f in lib/cmake/lerobot_cpp/lerobot_cppConfig.cmake include/lerobot/policies/inference.h lib/liblerobot_policies.a; do
  [ -f "$work/prefix/$f" ] || { echo "FAIL: the install has no $f"; exit 1; }
done
cmake -S "$src/examples/robot_loop" -B "$work/robot" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_PREFIX_PATH="$work/prefix${deps_prefix:+;${deps_prefix//|/;}}" "$@" >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log"; exit 1; }
cmake --build "$work/robot" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
robot="$work/robot/robot_loop"
readelf -d "$robot" | grep -q 'NEEDED.*\[libstdc++\.so\.6\]' || { echo "FAIL: robot_loop lacks libstdc++.so.6 in NEEDED"; exit 1; }

bash "$src/tests/robot_loop_matches_infer.sh" "$cli" "$work" "$robot"
