#!/usr/bin/env bash
# fuzz_build.sh CMAKE CLANG SOURCE_DIR BUILD_DIR
# The fixture of the fuzz tests: configures tests/fuzz with clang into BUILD_DIR and builds the harnesses.
# Exit 0 built; 77 skipped, the reason printed and kept in BUILD_DIR/unavailable.txt for the fuzz_<name>
# tests (no clang, or clang without its libFuzzer/sanitizer runtime); 1 a configure or build error.
set -uo pipefail
cmake=$1 clang=$2 src=$3 bin=$4
mkdir -p "$bin"
rm -f "$bin/unavailable.txt"
if [ -z "$clang" ] || [ ! -x "$clang" ]; then
  echo "clang not found (GW_FUZZ_CLANG='$clang'): the libFuzzer harnesses need clang and its runtime" \
       "(Debian: clang libclang-rt-dev; ci/setup installs them)" >"$bin/unavailable.txt"
fi
if [ ! -f "$bin/unavailable.txt" ]; then
  # The flags come from tests/fuzz/CMakeLists.txt alone: no build type adds its own optimisation level.
  "$cmake" -S "$src" -B "$bin" -DCMAKE_C_COMPILER="$clang" -DCMAKE_BUILD_TYPE= ||
    { echo "fuzz_build: configuring $src failed"; exit 1; }
fi
if [ -f "$bin/unavailable.txt" ]; then
  echo "fuzz_build: SKIPPED: $(cat "$bin/unavailable.txt")"
  exit 77
fi
"$cmake" --build "$bin" -j 2 || { echo "fuzz_build: building the harnesses failed"; exit 1; }
