#!/usr/bin/env bash
# fuzz_run.sh BUILD_DIR NAME SEED_CORPUS SECONDS [LIBFUZZER_FLAG...]
# Runs the harness fuzz_NAME for SECONDS over its seed corpus. New inputs go to BUILD_DIR/corpus/NAME (the
# first corpus directory is the only one libFuzzer writes), so the committed seeds are only read; a crash
# input goes to BUILD_DIR/crashes/NAME/. Exit 0 no crash; 1 a crash, leak, timeout, out-of-memory or a
# run that executed nothing; 77 skipped (fuzz_build could not build the harnesses: the reason is printed).
# libFuzzer's own exit code for a bug is 77 by default, CTest's skip code: -error_exitcode=1 keeps a crash
# from reading as a skip.
set -uo pipefail
bin=$1 name=$2 seeds=$3 seconds=$4
shift 4
if [ -f "$bin/unavailable.txt" ]; then
  echo "fuzz_$name: SKIPPED: $(cat "$bin/unavailable.txt")"
  exit 77
fi
exe="$bin/fuzz_$name"
[ -x "$exe" ] || { echo "fuzz_$name: $exe is missing: fuzz_build did not build it"; exit 1; }
[ -d "$seeds" ] || { echo "fuzz_$name: no seed corpus at $seeds"; exit 1; }
work="$bin/corpus/$name" crashes="$bin/crashes/$name"
mkdir -p "$work" "$crashes"
log="$bin/fuzz_$name.log"
args=("$work" "$seeds" -max_total_time="$seconds" -print_final_stats=1 -error_exitcode=1 -timeout_exitcode=1
      -timeout=25 -rss_limit_mb=2048 -artifact_prefix="$crashes/" "$@")
"$exe" "${args[@]}" >"$log" 2>&1
rc=$?
# Everything but libFuzzer's status line per new input ("#1234 NEW ..."): the settings, any report, the stats.
grep -v '^#[0-9]' "$log"
if [ "$rc" -ne 0 ]; then
  echo "fuzz_$name: FAILED (libFuzzer exit $rc). The input is in $crashes/; reproduce with: $exe <input>"
  echo "Fix the bug, add a regression test, and copy the input into $seeds/ (docs/testing.md, Fuzzing)."
  exit 1
fi
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
if [ -z "$runs" ] || [ "$runs" -le 0 ]; then
  echo "fuzz_$name: FAILED: libFuzzer reported no executed inputs"
  exit 1
fi
echo "fuzz_$name: $runs inputs in ${seconds} s, no crash;" \
     "corpus: $(ls "$seeds" | wc -l) seeds + $(ls "$work" | wc -l) found"
