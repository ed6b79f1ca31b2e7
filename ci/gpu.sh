#!/usr/bin/env bash
# The script a GPU CI runner calls: build, run every test with the GPU required, prove that every
# GPU-labelled test really ran, run compute-sanitizer over the GPU tests, and write the artifacts.
#
# usage: ci/gpu.sh [--prefix DIR] [--data DIR] [--out DIR] [--build DIR] [--arch LIST] [--no-sanitizer]
#   --prefix DIR   dependency prefix for machines without package access (headers, libs, pkgconfig),
#                  e.g. the .gpu-deps/ folder made by ci/bundle-deps.sh
#   --data DIR     the data sets (GW_DATA_DIR, docs/testing.md "Data sets"; default: $GW_DATA_DIR). Without
#                  them the data-set tests cannot run, and on a GPU runner a test that did not run fails.
#   --out DIR      artifacts: logs, JUnit, sanitizer summaries, summary.txt (default: ./gpu-artifacts)
#   --build DIR    build directory (default: ./build-gpu)
#   --arch LIST    CMAKE_CUDA_ARCHITECTURES (default: the project's explicit list)
# Exit status: 0 only when the build, every test, the ran-for-real check and the sanitizers passed.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD prefix="" out="$root/gpu-artifacts" build="$root/build-gpu" arch="" sanitizer=1
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix=$(cd "$2" && pwd); shift 2 ;;
    --data) [ -n "${2:-}" ] || { echo "ci/gpu.sh: --data needs a folder (the data sets)" >&2; exit 2; }
            GW_DATA_DIR=$(cd "$2" && pwd) || exit 2; export GW_DATA_DIR; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --arch) arch=$2; shift 2 ;;
    --no-sanitizer) sanitizer=0; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "ci/gpu.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"; out=$(cd "$out" && pwd)
summary="$out/summary.txt"; : > "$summary"
status=0
note() { echo "$*" | tee -a "$summary"; }
fail() { note "FAIL: $*"; status=1; }

export GW_REQUIRE_GPU=1
export CI="${CI:-true}" # a data-set test without its data fails here rather than skips
unset CRITERION_ALWAYS_SUCCEED
if [ -n "$prefix" ]; then
  export CMAKE_PREFIX_PATH="$prefix${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
fi
# The bundle's libraries (and those they load) for the programs under test only (ctest, compute-sanitizer's
# runs of the tests, the CLI): never for cmake, nvcc or git, which the bundle's copies of libz or libcrypto
# could shadow. The link finds them through -rpath-link instead.
libs=${LD_LIBRARY_PATH:-}
[ -n "$prefix" ] && libs="$prefix/lib${libs:+:$libs}"

note "== gpuwitness GPU run: $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
[ -n "${GW_DATA_DIR:-}" ] && note "data sets: $GW_DATA_DIR" || fail "no data sets (--data DIR or GW_DATA_DIR): the data-set tests will fail"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/gpu: /' | tee -a "$summary"
else
  note "gpu: nvidia-smi not found"
fi

cfg=(-S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release)
[ -n "$prefix" ] && cfg+=(-DCMAKE_EXE_LINKER_FLAGS="-Wl,-rpath-link,$prefix/lib")
[ -n "$arch" ] && cfg+=(-DCMAKE_CUDA_ARCHITECTURES="$arch")
if ! cmake "${cfg[@]}" > "$out/configure.log" 2>&1; then fail "configure (see configure.log)"; tail -20 "$out/configure.log"; exit 1; fi
if ! grep -E '^CMAKE_CUDA_COMPILER:[A-Z]+=.+' "$build/CMakeCache.txt" | grep -vq NOTFOUND; then
  fail "configure found no CUDA compiler: the kernels were not built"; exit 1
fi
if ! cmake --build "$build" -j "$(nproc)" > "$out/build.log" 2>&1; then fail "build (see build.log)"; tail -30 "$out/build.log"; exit 1; fi
note "build: ok"

# 1. The whole suite, GPU required. --no-tests=error catches a configure that quietly dropped CUDA.
# The Valgrind gates (label memcheck) belong on driverless CI: with a driver loaded, libcuda's ioctls and
# allocations are Valgrind noise (docs/testing.md, "Valgrind gate"). Device code gets compute-sanitizer below instead.
# The ASan/UBSan suite and the fuzzers (labels sanitizer, fuzz) are host-only checks that driverless CI runs.
LD_LIBRARY_PATH="$libs" ctest --test-dir "$build" -LE 'memcheck|sanitizer|fuzz' --no-tests=error --output-on-failure --output-junit "$out/junit.xml" \
  -j "$(nproc)" > "$out/ctest.log" 2>&1 || fail "ctest (see ctest.log)"
tail -n 25 "$out/ctest.log"
grep -E '^[0-9]+% tests passed' "$out/ctest.log" | sed 's/^/ctest: /' | tee -a "$summary"

# 2. A skip is never a pass on a GPU runner: every gpu-labelled test (canaries included) must appear in the
# JUnit file with status="run". A missing or truncated file (ctest killed) fails too.
gpu_tests=$(ctest --test-dir "$build" -N -L gpu | sed -n 's/^ *Test *#[0-9]*: //p')
[ -n "$gpu_tests" ] || fail "no gpu-labelled tests registered"
if [ ! -s "$out/junit.xml" ]; then
  fail "no JUnit file: cannot prove the GPU tests ran"
else
  not_run=0
  for t in $gpu_tests; do
    if ! grep -q "<testcase name=\"$t\"[^>]*status=\"run\"" "$out/junit.xml"; then
      not_run=$((not_run + 1)); note "did not run: $t"
    fi
  done
  [ "$not_run" -eq 0 ] && note "gpu tests run for real: $(echo "$gpu_tests" | wc -w)" || fail "$not_run gpu-labelled tests did not run"
fi
for c in $(ctest --test-dir "$build" -N -L canary -LE memcheck | sed -n 's/^ *Test *#[0-9]*: //p'); do
  # WILL_FAIL: "Passed" means the planted fault was caught by its guard (the wrapper checks the message)
  result=$(grep -E "Test +#[0-9]+: $c " "$out/ctest.log" | tail -n 1 | sed -E 's/.*\.\.+ *//')
  note "canary $c: ${result:-missing from ctest.log}"
done

# 3. compute-sanitizer over the GPU tests (not the canaries, which are meant to misbehave).
cuda_home=${CUDA_HOME:-${CUDA_PATH:-/usr/local/cuda}}
sanitizer_bin=$(command -v compute-sanitizer || true)
for candidate in "$cuda_home/bin/compute-sanitizer" "$cuda_home/compute-sanitizer/compute-sanitizer"; do
  [ -n "$sanitizer_bin" ] || { [ -x "$candidate" ] && sanitizer_bin=$candidate; }
done
if [ "$sanitizer" = 1 ]; then
  if [ -z "$sanitizer_bin" ]; then
    fail "compute-sanitizer not found: the GPU runner image must have it"
  else
    for tool in memcheck racecheck initcheck synccheck; do
      extra=(); [ "$tool" = memcheck ] && extra=(--leak-check full --padding 512)
      log="$out/sanitizer-$tool.log"; : > "$log"; bad=0
      for t in $(ctest --test-dir "$build" -N -L gpu -LE canary | sed -n 's/^ *Test *#[0-9]*: //p'); do
        cmd=$(ctest --test-dir "$build" -N -V -R "^$t\$" | sed -n 's/^[0-9]*: Test command: //p' | head -n 1)
        [ -n "$cmd" ] || continue
        echo "### $t: $cmd" >> "$log"
        # Criterion runs each test in a child process: --target-processes all.
        # $cmd is ctest's quoted command line, hence eval
        # ctest's TIMEOUT does not apply here: bound each run (racecheck and initcheck are slow)
        # GW_UNDER_SANITIZER=1: the realistic-size cases skip themselves here (the plain pass above ran them)
        if ! eval LD_LIBRARY_PATH='"$libs"' GW_UNDER_SANITIZER=1 CRITERION_JOBS=1 timeout 1800 "$sanitizer_bin" --tool "$tool" --error-exitcode 1 --target-processes all \
             "${extra[@]}" "$cmd" >> "$log" 2>&1; then bad=$((bad + 1)); echo "### FAILED: $t" >> "$log"; fi
      done
      [ "$bad" -eq 0 ] && note "compute-sanitizer $tool: clean" || fail "compute-sanitizer $tool: $bad tests with findings (sanitizer-$tool.log)"
    done
  fi
fi

# 4. The CLI, for the record.
cli="$build/tools/gpuwitness"
if [ -x "$cli" ]; then
  export LD_LIBRARY_PATH="$libs" # from here on only the CLI runs
  "$cli" doctor > "$out/doctor.txt" 2>&1; rc=$?; note "gpuwitness doctor: exit $rc"; [ $rc -eq 0 ] || fail "doctor"
  "$cli" check > "$out/check.txt" 2>&1; rc=$?; note "gpuwitness check: exit $rc"; [ $rc -eq 0 ] || fail "check"
  # Chrome traces (Perfetto, chrome://tracing) of each kernel's host path, with the ledger checked.
  for k in grid-d4 focus-stack ex2d grid-objects; do
    "$cli" trace "$k" --out "$out/trace-$k.json" > "$out/trace-$k.txt" 2>&1; rc=$?
    note "gpuwitness trace $k: exit $rc"; [ $rc -eq 0 ] || fail "trace $k"
  done
fi

note "== result: $([ $status -eq 0 ] && echo PASS || echo FAIL)"
exit $status
