#!/usr/bin/env bash
# ctest BuildCheck.Linkage: every executable in the build directory has libstdc++.so.6 in NEEDED,
# and none of its undefined dynamic symbols that libstdc++ defines is unversioned. An unversioned
# reference can bind to the copy an official LibTorch (>= 2.5) exports of the same symbol
# (std::filesystem among them), which crashed 40 tests there. The top-level CMakeLists.txt links
# libstdc++ first into every executable; this check fails if a target escapes that.
# Usage: tests/check_linkage.sh BUILD_DIR
set -uo pipefail
build=${1:?usage: check_linkage.sh BUILD_DIR}
for tool in readelf nm; do
  command -v $tool >/dev/null || { echo "check_linkage: $tool not found (binutils)"; exit 1; }
done
libstdcxx=$(g++ -print-file-name=libstdc++.so.6 2>/dev/null)
[ -f "$libstdcxx" ] || libstdcxx=$(ldconfig -p | awk '/libstdc\+\+\.so\.6 .*x86-64|libstdc\+\+\.so\.6 \(libc6,AArch64/ {print $NF; exit}')
[ -f "$libstdcxx" ] || { echo "check_linkage: cannot find libstdc++.so.6"; exit 1; }
defined=$(mktemp); trap 'rm -f "$defined"' EXIT
nm -D --defined-only "$libstdcxx" | awk '{print $3}' | sed 's/@.*//' | sort -u >"$defined"

exes=()
while IFS= read -r f; do
  [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = "177ELF" ] || continue
  readelf -h "$f" 2>/dev/null | grep -qE 'Type:[[:space:]]+(EXEC|DYN)' || continue
  readelf -l "$f" 2>/dev/null | grep -q 'Requesting program interpreter' || continue  # executables, not .so
  exes+=("$f")
done < <(find "$build" -type f -perm -u+x -not -path '*/CMakeFiles/*' -not -name '*.so*' | sort)

fail=0
have_main=0
for f in "${exes[@]}"; do
  [ "$(basename "$f")" = lerobot-cpp ] && have_main=1
  if ! readelf -d "$f" | grep -q 'NEEDED.*\[libstdc++\.so\.6\]'; then
    echo "FAIL $f: libstdc++.so.6 is not in NEEDED"
    fail=1
    continue
  fi
  # Undefined, unversioned symbols (nm -D prints name@VERSION for versioned ones).
  bad=$(nm -D --undefined-only "$f" | awk '{print $2}' | grep -v '@' | sort -u | comm -12 - "$defined")
  if [ -n "$bad" ]; then
    echo "FAIL $f: $(echo "$bad" | wc -l) unversioned references to libstdc++ symbols, e.g.:"
    echo "$bad" | head -5 | sed 's/^/    /'
    fail=1
  fi
  fsrefs=$(nm -D --undefined-only "$f" | grep -c 'St10filesystem')
  fsver=$(nm -D --undefined-only "$f" | grep 'St10filesystem' | grep -c '@GLIBCXX_')
  if [ "$fsrefs" != "$fsver" ]; then
    echo "FAIL $f: $((fsrefs - fsver)) of $fsrefs std::filesystem references are not versioned"
    fail=1
  fi
done
if [ "$have_main" = 0 ] || [ "${#exes[@]}" -lt 5 ]; then
  echo "FAIL: found ${#exes[@]} executables under $build (lerobot-cpp among them: $have_main); build everything first"
  exit 1
fi
[ "$fail" = 0 ] && echo "check_linkage: ${#exes[@]} executables, each with libstdc++.so.6 in NEEDED and only versioned libstdc++ references"
exit $fail
