#!/usr/bin/env bash
# One command on a GPU machine: build gpuwitness, run `gpuwitness bench` with the GPU required, run the
# peers of bench/peers/ on the same dumped inputs and the same GPU, check their outputs against our
# reference and merge everything into one table; every file lands in one folder.
#
# usage: ci/gpu-bench.sh [--out DIR] [--build DIR] [--size TIER] [--reps N] [--cpu-reps N] [--prefix DIR]
#                        [--arch LIST] [--min-speedup X] [--min-roofline P] [--no-peers]
#   --out DIR        results (default ./bench-results): summary.txt, bench.txt, bench.json, table.md,
#                    merged.json, doctor.txt, the logs, inputs/ (the dumped .npy inputs and reference outputs)
#                    and peers/ (the peers' outputs and timings); realistic needs about 6 GB of disk there
#                    (a full ex2d frame's dumped spots alone are 1.8 GB)
#   --build DIR      build directory (default ./build-gpu-bench); configured Release without the tests, so
#                    Criterion is not needed
#   --size TIER      smoke, small, realistic (default) or full
#   --reps N         GPU repetitions for bench and the peers (default 20); --cpu-reps N for bench (default 3)
#   --prefix DIR     dependency prefix where packages cannot be installed (ci/bundle-deps.sh)
#   --arch LIST      CMAKE_CUDA_ARCHITECTURES (default: the project's explicit list)
#   --min-speedup X, --min-roofline P   the regression guard, passed to gpuwitness bench
#   --no-peers       gpuwitness bench only
# Exit status: 0 when the build, bench (and its guard), every peer and the merge succeeded; 1 otherwise.
# A peer whose outputs differ from the reference does not fail the run: the table marks it.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/bench-results" build="$root/build-gpu-bench" size=realistic reps=20 cpu_reps=3
prefix="" arch="" peers=1 guard=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$(realpath -m "$2"); shift 2 ;;
    --build) build=$(realpath -m "$2"); shift 2 ;;
    --size) size=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --cpu-reps) cpu_reps=$2; shift 2 ;;
    --prefix) prefix=$(cd "$2" && pwd); shift 2 ;;
    --arch) arch=$2; shift 2 ;;
    --min-speedup|--min-roofline) guard+=("$1" "$2"); shift 2 ;;
    --no-peers) peers=0; shift ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "ci/gpu-bench.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
cd "$root"
mkdir -p "$out"
summary="$out/summary.txt"; : > "$summary"
status=0
note() { echo "$*" | tee -a "$summary"; }
fail() { note "FAIL: $*"; status=1; }

export GW_REQUIRE_GPU=1 PYTHONUNBUFFERED=1
unset GW_DEVICE
if [ -n "$prefix" ]; then
  export CMAKE_PREFIX_PATH="$prefix${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  export LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
note "== gpuwitness bench run: $(date -u +%FT%TZ), commit $commit, size $size"
cfg=(-S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF)
[ -n "$arch" ] && cfg+=(-DCMAKE_CUDA_ARCHITECTURES="$arch")
if ! cmake "${cfg[@]}" > "$out/configure.log" 2>&1; then
  fail "configure (see configure.log)"; tail -20 "$out/configure.log"; exit 1
fi
if ! cmake --build "$build" --target gpuwitness -j "$(nproc)" > "$out/build.log" 2>&1; then
  fail "build (see build.log)"; tail -30 "$out/build.log"; exit 1
fi
cli="$build/tools/gpuwitness"
note "build: ok ($cli)"
"$cli" doctor > "$out/doctor.txt" 2>&1 || fail "gpuwitness doctor (see doctor.txt)"

rm -rf "$out/inputs" "$out/peers"
"$cli" bench --device cuda --size "$size" --reps "$reps" --cpu-reps "$cpu_reps" --json "$out/bench.json" \
  --dump-inputs "$out/inputs" "${guard[@]}" 2>&1 | tee "$out/bench.txt"
rc=${PIPESTATUS[0]}
note "gpuwitness bench: exit $rc"
[ "$rc" -eq 0 ] || fail "gpuwitness bench (see bench.txt: a guard, a mismatch, a witness or a CUDA error)"
if [ ! -s "$out/bench.json" ]; then fail "gpuwitness bench wrote no JSON"; exit 1; fi

peer_json=()
if [ "$peers" = 1 ]; then
  # Exit 77: the peer's module (SciPy, CuPy) is not installed here; it says why, and the run goes on without it.
  for peer in torch_grid_d4 torch_focus_stack cupy_ex2d scipy_grid_objects cupy_grid_objects; do
    python3 "$root/bench/peers/$peer.py" --inputs "$out/inputs" --out "$out/peers" --reps "$reps" \
      > "$out/peer-$peer.log" 2>&1
    peer_rc=$?
    if [ "$peer_rc" -eq 0 ]; then
      note "peer $peer: ok"; peer_json+=(--peer "$out/peers/$peer.json")
    elif [ "$peer_rc" -eq 77 ]; then
      note "peer $peer: skipped: $(tail -1 "$out/peer-$peer.log")"
    else
      fail "peer $peer (see peer-$peer.log)"; tail -5 "$out/peer-$peer.log"
    fi
  done
fi
if python3 "$root/bench/merge.py" --bench "$out/bench.json" --inputs "$out/inputs" "${peer_json[@]}" \
     --markdown "$out/table.md" --json "$out/merged.json" > "$out/merge.log" 2>&1; then
  cat "$out/table.md"
  grep 'WRONG PEER OUTPUT' "$out/merge.log" | tee -a "$summary"
  note "merge: ok (table.md, merged.json)"
else
  fail "merge (see merge.log)"; tail -5 "$out/merge.log"
fi
note "== result: $([ $status -eq 0 ] && echo PASS || echo FAIL)"
exit $status
