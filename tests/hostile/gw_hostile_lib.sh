# SPDX-License-Identifier: MIT
# Sourced by the hostile-input suites (gw_hostile.sh, gw_hostile_desi.sh; docs/testing.md, "Hostile input"):
# the set-up of the arguments GPUWITNESS STOP_SHIM WORKDIR, the generators, and the functions of one case
# (begin, run, with_env, refute, expect, finish, stopped_case), then hostile_summary at the end.
set -u
gw=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") shim=$(cd "$(dirname "$2")" && pwd)/$(basename "$2") work=$3
docs=$(cd "$(dirname "$0")/../../docs" && pwd)
rm -rf "$work"
mkdir -p "$work" || exit 1
work=$(cd "$work" && pwd)
unset GW_REQUIRE_GPU GW_DEVICE CRITERION_ALWAYS_SUCCEED GW_STOP_AT
# The ASan build (sanitizer_suite) runs this too: let the stop shim be preloaded before ASan's runtime.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

cases=0 failed=0 dir="" name="" rc=0 problems="" took=""
declare -A per_class

# ---------------------------------------------------------------- generators
le16() { printf "\\$(printf %03o $(($1 & 255)))\\$(printf %03o $((($1 >> 8) & 255)))"; }
le32() { le16 $(($1 & 65535)); le16 $((($1 >> 16) & 65535)); }
# npy_u2 FILE SHAPE_TEXT BYTES: a .npy of uint16 zeros, header padded to 64 bytes as numpy writes it.
npy_u2() {
  local text="{'descr': '<u2', 'fortran_order': False, 'shape': $2, }"
  local pad=$(( (64 - (10 + ${#text} + 1) % 64) % 64 ))
  { printf '\223NUMPY\001\000'; le16 $((${#text} + pad + 1)); printf '%s%*s\n' "$text" "$pad" ''
    head -c "$3" /dev/zero; } > "$1"
}
# tiff_u16 FILE PAGES HEIGHT WIDTH: a little-endian multi-page uint16 TIFF laid out as libtiff writes one:
# page k's data (one strip of random bytes), then its IFD, whose last 4 bytes point to IFD k+1 (0 after the
# last). A file cut inside such a pointer still holds every byte of the pages before it.
# entry TAG TYPE VALUE: one 12-byte IFD entry of count 1 (TYPE 3 SHORT, padded; 4 LONG).
entry() { le16 "$1"; le16 "$2"; le32 1; if [ "$2" = 3 ]; then le16 "$3"; le16 0; else le32 "$3"; fi; }
tiff_u16() {
  local file=$1 pages=$2 h=$3 w=$4 k
  local bytes=$((h * w * 2)) ifd=$((2 + 9 * 12 + 4))
  { printf 'II*\000'; le32 $((8 + bytes))
    for ((k = 0; k < pages; k++)); do
      local data=$((8 + k * (bytes + ifd)))
      local next=$(( k + 1 < pages ? data + bytes + ifd + bytes : 0 ))
      head -c "$bytes" /dev/urandom
      le16 9; entry 256 4 "$w"; entry 257 4 "$h"; entry 258 3 16; entry 259 3 1; entry 262 3 1
      entry 273 4 "$data"; entry 277 3 1; entry 278 4 "$h"; entry 279 4 "$bytes"; le32 "$next"
    done; } > "$file"
}
# task FILE: a valid ARC task of two small grids.
task() { printf '{"train": [{"input": [[1, 2], [3, 4]], "output": [[4, 3], [2, 1]]}], "test": [{"input": [[5]]}]}\n' > "$1"; }

# ---------------------------------------------------------------- one case
# begin CLASS NAME: a fresh folder for the case, made current; the caller then writes its inputs there.
begin() {
  cases=$((cases + 1)) problems="" name="$1: $2"
  per_class[$1]=$((${per_class[$1]:-0} + 1))
  dir="$work/case$cases"
  mkdir -p "$dir" && cd "$dir" || exit 1
}
listing() { find . -mindepth 1 -printf '%P\n' | LC_ALL=C sort; }
sums() { find . -type f -exec md5sum {} + | LC_ALL=C sort -k 2; }
# run LIMIT ARGS...: gpuwitness ARGS under a time limit (SIGKILL 5 s after the limit), streams kept; sets rc.
# with_env VAR=VALUE... run LIMIT ARGS...: the same with those variables set.
run() { local limit=$1; shift; run_cmd "$limit" "$gw" "$@"; }
# run_cmd LIMIT COMMAND ARGS...: the same for another program of the project (bench/merge.py).
run_cmd() {
  local limit=$1; shift
  before_list=$(listing) before_sums=$(sums)
  env "${run_env[@]}" timeout -k 5 "$limit" "$@" > "$work/out.$cases" 2> "$work/err.$cases"
  rc=$?
  run_env=()
  [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && problems+=" did not finish within ${limit} s;"
}
run_env=()
with_env() { while [ "$1" != run ]; do run_env+=("$1"); shift; done; "$@"; }
# refute WORDS: '|'-separated words that must not be on stderr (a wrong blame, a traceback); before expect.
refute() {
  local -a list; IFS='|' read -ra list <<< "$1"
  for w in "${list[@]}"; do grep -qF -- "$w" "$work/err.$cases" && problems+=" stderr says \"$w\";"; done
}
# expect EXIT WORDS OUTPUTS...: exit status; '|'-separated words on stderr ("" for none); the folder must
# hold the inputs (unchanged) plus exactly OUTPUTS (each non-empty), and nothing else.
expect() {
  local want=$1 words=$2 w o; shift 2
  [ "$rc" -eq "$want" ] || problems+=" exit $rc, want $want;"
  if [ -n "$words" ]; then
    local -a list; IFS='|' read -ra list <<< "$words"
    for w in "${list[@]}"; do grep -qF -- "$w" "$work/err.$cases" || problems+=" stderr lacks \"$w\";"; done
  fi
  local sum path
  while read -r sum path; do
    [ -n "$path" ] || continue
    [ "$(md5sum < "$path" 2>/dev/null | cut -d ' ' -f 1)" = "$sum" ] || problems+=" input $path changed or vanished;"
  done <<< "$before_sums"
  local want_list; want_list=$( (echo "$before_list"; for o in "$@"; do echo "$o"; done) | grep -v '^$' | LC_ALL=C sort -u)
  [ "$(listing)" = "$want_list" ] || problems+=" the folder holds [$(listing | tr '\n' ' ')], want [$(echo "$want_list" | tr '\n' ' ')];"
  for o in "$@"; do [ -s "$o" ] || [ -d "$o" ] || problems+=" output $o is missing or empty;"; done
  finish
}
finish() {
  if [ -n "$problems" ]; then
    failed=$((failed + 1))
    echo "FAIL $name:$problems"
    sed 's/^/    stderr: /' "$work/err.$cases" | head -n 5
  else
    echo "ok   $name (exit $rc${took:+, $took s})"
  fi
  took=""
  cd "$work" || exit 1
}
# stopped_case AT SIGNAL ARGS...: runs the command with the shim stopping it at the first call of AT, sends
# SIGNAL while it is stopped, lets it continue, and sets rc (128 + the signal when it died of it).
stopped_case() {
  local at=$1 sig=$2; shift 2
  before_list=$(listing) before_sums=$(sums)
  # A background job of a script starts with SIGINT and SIGQUIT ignored, which the CLI rightly keeps:
  # give it the default actions, as a command started from a terminal has.
  GW_STOP_AT=$at LD_PRELOAD=$shim env --default-signal=INT,QUIT "$gw" "$@" > "$work/out.$cases" 2> "$work/err.$cases" &
  local pid=$! state="" i
  for ((i = 0; i < 600; i++)); do
    state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)
    [ "$state" = T ] || [ -z "$state" ] && break
    sleep 0.05
  done
  if [ "$state" = T ]; then
    kill "-$sig" "$pid"; kill -CONT "$pid"
  else
    problems+=" the command never reached $at (state '${state:-gone}');"
  fi
  wait "$pid"; rc=$?
}


# hostile_summary SUITE: the counts per class, the verdict (the suite's exit status), the work folder removed.
hostile_summary() {
  for c in "${!per_class[@]}"; do echo "cases: ${per_class[$c]} $c"; done | LC_ALL=C sort
  echo "$1: $cases cases, $failed failed"
  cd / && rm -rf "$work"
  [ "$failed" -eq 0 ] && [ "$cases" -gt 0 ]
}
