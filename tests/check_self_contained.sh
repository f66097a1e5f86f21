#!/usr/bin/env bash
# ctest BuildCheck.SelfContained: the tests read data only from inside the repository or the build
# directory, since users clone only the repository (the fixtures live in tests/fixtures/).
#  1. No test source, CMake file or test script names a path outside the checkout (../shared,
#     shared/fixtures, or a parent-directory escape from the source root).
#  2. Every path a test is compiled with (-DNAME="/abs/path" in compile_commands.json) lies under
#     the source or the build directory, and the fixture directory exists there.
# Usage: tests/check_self_contained.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
src=$(cd "${1:?usage: check_self_contained.sh SOURCE_DIR BUILD_DIR}" && pwd)
build=$(cd "${2:?usage: check_self_contained.sh SOURCE_DIR BUILD_DIR}" && pwd)
fail=0
self=tests/check_self_contained.sh

cd "$src"
files=$(ls CMakeLists.txt .ci/run scripts/test.sh scripts/setup.sh 2>/dev/null; find cmake tests -type f \( -name '*.cpp' -o -name '*.h' -o -name '*.cmake' -o -name 'CMakeLists.txt' -o -name '*.sh' -o -name '*.py' \) | grep -v "^$self$")
hits=$(grep -nE '\.\./shared|shared/fixtures|PROJECT_SOURCE_DIR\}/\.\.|SOURCE_DIR "/\.\.' $files 2>/dev/null)
if [ -n "$hits" ]; then
  echo "FAIL: these read from outside the repository:"
  echo "$hits" | sed 's/^/    /'
  fail=1
fi

db="$build/compile_commands.json"
if [ ! -f "$db" ]; then
  echo "FAIL: $db is missing (configure with CMAKE_EXPORT_COMPILE_COMMANDS, as CMakeLists.txt does)"
  exit 1
fi
checked=0
while IFS= read -r path; do
  case "$path" in /usr/*|/bin/*) continue ;; esac  # system programs (torchrun), not test data
  [ -f "$path" ] && [ -x "$path" ] && continue  # a program found at configure time (a venv's torchrun)
  checked=$((checked + 1))
  real=$(realpath -m "$path")
  case "$real" in
    "$src"|"$src"/*|"$build"|"$build"/*) ;;
    *) echo "FAIL: a test is compiled with the path $path, outside $src and $build"; fail=1 ;;
  esac
done < <(grep -oE -- '-DLEROBOT_[A-Z_]+=[\\]*"/[^\\"]*' "$db" | sed -E 's/^[^=]*=[\\]*"//' | sort -u)
fixtures=$(grep -oE -- '-DLEROBOT_FIXTURES_DIR=[\\]*"/[^\\"]*' "$db" | head -1 | sed -E 's/^[^=]*=[\\]*"//')
if [ -z "$fixtures" ] || [ ! -d "$fixtures" ] || [ -z "$(ls -A "$fixtures")" ]; then
  echo "FAIL: the tests' fixture directory '$fixtures' is missing or empty"
  fail=1
fi
if [ "$checked" -lt 2 ]; then
  echo "FAIL: found only $checked compiled-in paths in $db; expected the tests' LEROBOT_* paths"
  fail=1
fi
[ "$fail" = 0 ] && echo "check_self_contained: $checked compiled-in paths, all inside the checkout or the build; no reference outside the repository"
exit $fail
