#!/usr/bin/env bash
# ctest BuildCheck.LinkageWithAStaticLibstdcxxFirst: rebuilds the toolchain that broke the GPU
# machine's build (a GCC whose `-lstdc++` finds a static libstdc++.a first) and checks that
# cmake/LibstdcxxFirst.cmake still puts the shared libstdc++.so.6 in NEEDED there. The control, the
# rule as it was (`-lstdc++` by name), must lose it on the same toolchain, or the check could not
# fail and says so.
# Usage: tests/check_linkage_static_first.sh SOURCE_DIR CXX
set -uo pipefail
src=$(cd "${1:?usage: check_linkage_static_first.sh SOURCE_DIR CXX}" && pwd)
cxx=${2:?usage: check_linkage_static_first.sh SOURCE_DIR CXX}
archive=$("$cxx" -print-file-name=libstdc++.a)
if [ ! -f "$archive" ]; then
  echo "SKIP: $cxx has no static libstdc++.a to stand in for the toolchain (install libstdc++-dev)"
  exit 77
fi
w=$(mktemp -d); trap 'rm -rf "$w"' EXIT
mkdir -p "$w/static_first"
ln -s "$archive" "$w/static_first/libstdc++.a"
# The compiler as that machine had it: its library directory (searched first) holds only the archive.
printf '#!/bin/sh\nexec "%s" -L"%s" "$@"\n' "$cxx" "$w/static_first" >"$w/cxx"
chmod +x "$w/cxx"
cat >"$w/t.cpp" <<'EOF'
#include <cstdio>
#include <filesystem>
int main() {
  const auto d = std::filesystem::temp_directory_path() / "lerobot_static_first_probe";
  std::filesystem::create_directories(d / "a");
  std::printf("%ju\n", static_cast<std::uintmax_t>(std::filesystem::remove_all(d)));
}
EOF
project() {  # project DIR RULE: a one-program CMake project linking libstdc++ by RULE
  mkdir -p "$1"
  cat >"$1/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.18)
project(static_first LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 17)
$2
add_executable(t $w/t.cpp)
EOF
  cmake -S "$1" -B "$1/b" -DCMAKE_CXX_COMPILER="$w/cxx" -DCMAKE_BUILD_TYPE=Release >"$1/log" 2>&1 &&
    cmake --build "$1/b" >>"$1/log" 2>&1 || { echo "FAIL: the probe project in $1 did not build:"; tail -20 "$1/log"; exit 1; }
  "$1/b/t" >/dev/null || { echo "FAIL: the probe program of $1 did not run"; exit 1; }
}
needed() { readelf -d "$1/b/t" | grep -c 'NEEDED.*\[libstdc++\.so\.6\]'; }

project "$w/old" 'add_link_options("LINKER:--push-state,--no-as-needed,-lstdc++,--pop-state")'
project "$w/new" "include($src/cmake/LibstdcxxFirst.cmake)"
old=$(needed "$w/old")
new=$(needed "$w/new")
echo "libstdc++.so.6 in NEEDED with a static libstdc++.a found first: by name (-lstdc++) $old, by path (LibstdcxxFirst.cmake) $new"
if [ "$old" != 0 ]; then
  echo "FAIL: the control kept libstdc++.so.6, so this toolchain does not reproduce the static-first case"
  exit 1
fi
[ "$new" = 1 ] || { echo "FAIL: cmake/LibstdcxxFirst.cmake lost libstdc++.so.6 from NEEDED"; exit 1; }
echo "check_linkage_static_first: ok"
