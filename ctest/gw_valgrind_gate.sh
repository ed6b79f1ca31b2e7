#!/usr/bin/env bash
# usage: gw_valgrind_gate.sh VALGRIND LOG_DIR EXPECT_EXIT COMMAND [ARGS...]
# Valgrind memcheck over a command and every process it starts. Criterion runs each test in a child
# process whose Valgrind exit code never reaches the runner, so the verdict comes from the logs:
# any log with a non-zero ERROR SUMMARY fails the gate (exit 1) and is printed, and so does a command exit
# status other than EXPECT_EXIT. Valgrind's --error-exitcode is 99, out of the way of the command's codes.
set -u
valgrind=$1 log_dir=$2 expect_exit=$3; shift 3
rm -rf "$log_dir"; mkdir -p "$log_dir"
here=$(cd "$(dirname "$0")" && pwd)
"$valgrind" --tool=memcheck --trace-children=yes --leak-check=full --show-leak-kinds=definite,possible \
  --errors-for-leak-kinds=definite,possible --track-origins=yes --error-exitcode=99 \
  --suppressions="$here/gw_valgrind.supp" --log-file="$log_dir/vg.%p.log" "$@"
rc=$?
bad=0; logs=0
for log in "$log_dir"/vg.*.log; do
  [ -e "$log" ] || continue
  logs=$((logs + 1))
  summary=$(grep -E 'ERROR SUMMARY: [0-9]+' "$log" | tail -n 1)
  if [ -z "$summary" ] || ! printf '%s' "$summary" | grep -q 'ERROR SUMMARY: 0 errors'; then
    bad=$((bad + 1)); echo "=== $log: ${summary:-no ERROR SUMMARY (process killed?)}"; cat "$log"
  fi
done
echo "valgrind gate: $logs process logs, $bad with errors, command exit $rc (expected $expect_exit)"
[ "$logs" -gt 0 ] || { echo "valgrind gate: no log written: Valgrind did not run"; exit 1; }
[ "$bad" -eq 0 ] && [ "$rc" -eq "$expect_exit" ]
