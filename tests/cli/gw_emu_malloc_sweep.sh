#!/usr/bin/env bash
# gw_emu_malloc_sweep.sh WORKDIR INPUTS MKDIRS VALGRIND -- PROGRAM [ARGS...]
# Fails every device and pinned allocation of one gpuwitness-emu command in turn: run N has
# GW_EMU_FAULT=malloc:N (lib/emu, docs/emu.md "Planted faults"), N = 1, 2, ... until a run meets no Nth
# allocation, which must then succeed (exit 0, or GW_SWEEP_PASS_RC). Every run that met its fault must exit 1, say "out of memory"
# in the command's own words besides the emulator's announcement, leave WORKDIR as it was (nothing written,
# the inputs unchanged) and free all it allocated: no "memory never freed" from the emulator and, when
# VALGRIND is not "-", no definite leak or memory error under Valgrind memcheck (host allocations, streams and
# events included). WORKDIR is made afresh for each run from INPUTS (comma-separated files, or "-") and
# MKDIRS (comma-separated directories, or "-").
set -u
workdir=$(realpath -m "$1") inputs=$2 mkdirs=$3 valgrind=$4
shift 4
[ "${1:-}" = "--" ] && shift
[ $# -gt 0 ] || { echo "usage: $0 WORKDIR INPUTS MKDIRS VALGRIND -- PROGRAM [ARGS...]"; exit 2; }
program=$(realpath -e "$(command -v "$1")") || { echo "malloc sweep: no program '$1'"; exit 2; }
shift
here=$(cd "$(dirname "$0")/../../ctest" && pwd)
vg=()
[ "$valgrind" != "-" ] && vg=("$valgrind" -q --leak-check=full --show-leak-kinds=definite
                              --errors-for-leak-kinds=definite --error-exitcode=99
                              --suppressions="$here/gw_valgrind.supp")

fresh() {
  rm -rf "$workdir" && mkdir -p "$workdir" || exit 1
  local IFS=,
  [ "$inputs" = "-" ] || for f in $inputs; do cp "$f" "$workdir/" || exit 1; done
  [ "$mkdirs" = "-" ] || for d in $mkdirs; do mkdir -p "$workdir/$d" || exit 1; done
}
listing() { (cd "$workdir" && find . -print0 | sort -z | xargs -0 sha256sum 2>/dev/null; find . | sort); }

failed=0 pass_rc=${GW_SWEEP_PASS_RC:-0}
for ((n = 1; ; n++)); do
  fresh
  before=$(listing)
  # a run that hangs is named, and ends: 124 from timeout is no exit 1
  (cd "$workdir" && GW_EMU_FAULT=malloc:$n timeout 120 "${vg[@]}" "$program" "$@" >"$workdir.stdout" \
                                                                                  2>"$workdir.stderr")
  rc=$?
  [ "$rc" -eq 124 ] && echo "malloc:$n: still running after 120 s: stopped"
  out=$(cat "$workdir.stdout") err=$(cat "$workdir.stderr")
  if ! grep -q "planted fault GW_EMU_FAULT=malloc:$n:" <<<"$err"; then
    if [ "$rc" -ne "$pass_rc" ] || grep -q "memory never freed" <<<"$err"; then
      echo "malloc sweep: the run past the last allocation ($n) exited $rc, expected $pass_rc, and must free all"
      echo "--- stdout:"; echo "$out"; echo "--- stderr:"; echo "$err"
      exit 1
    fi
    break
  fi
  what=$(grep -m1 "planted fault" <<<"$err")
  problems=()
  [ "$rc" -eq 1 ] || problems+=("exit $rc, expected 1")
  [ "$(printf '%s\n%s\n' "$out" "$err" | grep -v "planted fault" | grep -c "out of memory")" -ge 1 ] ||
    problems+=("no message of the command's own says 'out of memory'")
  grep -q "memory never freed" <<<"$err" && problems+=("$(grep "memory never freed" <<<"$err")")
  [ "$rc" -eq 99 ] && problems+=("Valgrind found errors")
  [ "$before" = "$(listing)" ] || problems+=("the working directory changed: something was written")
  if [ ${#problems[@]} -gt 0 ]; then
    failed=$((failed + 1))
    printf -v said '%s; ' "${problems[@]}"
    echo "malloc:$n ($what): ${said%; }"; echo "--- stdout:"; echo "$out"; echo "--- stderr:"; echo "$err"
  else
    said=$(grep -v "planted fault" <<<"$err" | grep -m1 "out of memory" || grep -m1 "out of memory" <<<"$out")
    echo "malloc:$n: exit 1, $said"
  fi
done
count=$((n - 1))
echo "malloc sweep: $count allocations failed in turn, $failed badly handled; run $n (no fault met) exited $pass_rc"
[ "$count" -ge 1 ] || { echo "malloc sweep: the command allocated nothing: the sweep proves nothing"; exit 1; }
[ "$failed" -eq 0 ]
