#!/usr/bin/env bash
# Diagnoses how this machine's toolchain links a program against this LibTorch: whether
# libstdc++.so.6 ends up in NEEDED and whether std::filesystem references are versioned (bound to
# libstdc++) or can bind to the copies an official LibTorch (>= 2.5) exports. Tries several ways of
# linking libstdc++ first, plainly and through CMake as the project's CMakeLists does, and runs
# each program (create_directories + remove_all on a filled folder: a crash there is the bug).
#   scripts/linkage_probe.sh [python-with-torch|libtorch-dir]     (default: python3)
set -uo pipefail
TORCH=${1:-python3}
if [ -d "$TORCH" ]; then PREFIX=$(cd "$TORCH" && pwd); else
  PREFIX=$("$TORCH" -c 'import torch.utils;print(torch.utils.cmake_prefix_path)')/../..; fi
TL=$(cd "$PREFIX/lib" 2>/dev/null && pwd || dirname "$(ldconfig -p | awk '/libtorch_cpu.so / {print $NF; exit}')")
export PATH=/usr/local/cuda/bin:$PATH CUDACXX=${CUDACXX:-/usr/local/cuda/bin/nvcc}  # a CUDA LibTorch's CMake wants nvcc
W=$(mktemp -d); cd "$W" || exit 1
echo "compiler: $(c++ --version | head -1); $(ld --version | head -1); cmake $(cmake --version | head -1)"
echo "libtorch: $TL"
echo "std::filesystem definitions exported by libtorch_cpu.so: $(nm -D --defined-only "$TL/libtorch_cpu.so" | grep -c St10filesystem)"
echo "c++ default linker options: $(c++ -dumpspecs | grep -o -- '--as-needed\|--no-as-needed' | sort | uniq -c | tr '\n' ' ')"
cat >t.cpp <<'EOF'
#include <cstdio>
#include <filesystem>
#include <fstream>
int main() {
  namespace fs = std::filesystem;
  const fs::path d = fs::temp_directory_path() / "linkage_probe_dir";
  fs::create_directories(d / "a" / "b");
  std::ofstream(d / "a" / "f.txt") << "x";
  std::printf("removed %ju\n", static_cast<std::uintmax_t>(fs::remove_all(d)));
  return 0;
}
EOF
TORCH_LIBS="-L$TL -Wl,-rpath,$TL -Wl,--no-as-needed -ltorch_cpu -lc10 -Wl,--as-needed"
report() {  # report NAME EXE
  local needed fs_all fs_ver run
  needed=$(readelf -d "$2" 2>/dev/null | grep -c 'NEEDED.*libstdc++')
  fs_all=$(nm -D --undefined-only "$2" | grep -c St10filesystem)
  fs_ver=$(nm -D --undefined-only "$2" | grep St10filesystem | grep -c '@GLIBCXX')
  run=$(timeout 10 "./$2" 2>&1); local rc=$?
  run="rc=$rc ${run##*$'\n'}"
  echo "$1: libstdc++ in NEEDED=$needed, filesystem refs versioned $fs_ver/$fs_all, run: $run"
}
try() {  # try NAME compile-and-link-args...
  local name=$1; shift
  if c++ -std=c++17 -O1 "$@" -o "$name" >"$name.log" 2>&1; then report "$name" "$name"; else
    echo "$name: link failed: $(tail -2 "$name.log" | tr '\n' ' ')"; fi
}
try v0_plain t.cpp $TORCH_LIBS
try v1_flag_first -Wl,--push-state,--no-as-needed,-lstdc++,--pop-state t.cpp $TORCH_LIBS
try v2_flag_after_objects t.cpp -Wl,--push-state,--no-as-needed,-lstdc++,--pop-state $TORCH_LIBS
try v3_driver_lstdcxx t.cpp -Wl,--push-state,--no-as-needed -lstdc++ -Wl,--pop-state $TORCH_LIBS
try v4_path t.cpp -Wl,--push-state,--no-as-needed "$(c++ -print-file-name=libstdc++.so)" -Wl,--pop-state $TORCH_LIBS
# The project's way: add_link_options(LINKER:...) in CMake, Torch's own targets.
mkdir -p cm && cp t.cpp cm/ && cat >cm/CMakeLists.txt <<'EOF'
cmake_minimum_required(VERSION 3.18)
project(probe LANGUAGES C CXX)
set(CMAKE_CXX_STANDARD 17)
add_link_options("LINKER:--push-state,--no-as-needed,-lstdc++,--pop-state")
find_package(Torch REQUIRED)
add_executable(cmake_linker_opt t.cpp)
target_link_libraries(cmake_linker_opt ${TORCH_LIBRARIES})
execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libstdc++.so.6 OUTPUT_VARIABLE STDCXX
                OUTPUT_STRIP_TRAILING_WHITESPACE)
# The same, as link items right after the objects (ahead of Torch's libraries).
add_executable(cmake_items t.cpp)
target_link_libraries(cmake_items "-Wl,--push-state,--no-as-needed" stdc++ "-Wl,--pop-state" ${TORCH_LIBRARIES})
add_executable(cmake_items_path t.cpp)
target_link_libraries(cmake_items_path "-Wl,--push-state,--no-as-needed" "${STDCXX}" "-Wl,--pop-state" ${TORCH_LIBRARIES})
EOF
if cmake -S cm -B cm/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$PREFIX" >cm.log 2>&1 &&
   ninja -C cm/b -v >cm_build.log 2>&1; then
  for t in cmake_linker_opt cmake_items cmake_items_path; do
    grep -- "-o $t " cm_build.log | sed 's/^/  link line: /' | cut -c1-1200
    (cd cm/b && report $t $t)
  done
  readelf -d cm/b/cmake_linker_opt | grep NEEDED | sed 's/^/  cmake_linker_opt /' 
else
  echo "cmake probe failed:"; tail -15 cm.log cm_build.log
fi
rm -rf "$W"
