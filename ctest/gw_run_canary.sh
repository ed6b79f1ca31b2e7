#!/usr/bin/env bash
# usage: gw_run_canary.sh EXPECT_REGEX COMMAND [ARGS...]
# Runs a canary (a build with a planted fault). Registered with WILL_FAIL, so:
#   exit 1  the canary failed and its output names the expected guard: caught (CTest: Passed)
#   exit 0  the canary passed, or failed for some other reason: not caught (CTest: Failed)
#   exit 77 no usable GPU: passed through (CTest: Skipped); with GW_CANARY_NO_SKIP=1, not caught
set -u
expect=$1; shift
out=$("$@" 2>&1); rc=$?
printf '%s\n' "$out"
if [ "$rc" -eq 77 ]; then
  # GW_CANARY_NO_SKIP=1 (the emu tier's canaries): the emulated device is always there, so a skip is no catch
  if [ -n "${GW_CANARY_NO_SKIP:-}" ]; then echo "canary NOT caught: it skipped (exit 77) where it cannot"; exit 0; fi
  echo "canary: skipped (no usable GPU)"; exit 77
fi
if [ "$rc" -eq 0 ]; then echo "canary NOT caught: the faulty build passed every test"; exit 0; fi
if printf '%s\n' "$out" | grep -Eq -- "$expect"; then
  echo "canary caught (exit $rc), guard message matched: $expect"; exit 1
fi
echo "canary failed (exit $rc) but not through the expected guard /$expect/: treated as not caught"
exit 0
