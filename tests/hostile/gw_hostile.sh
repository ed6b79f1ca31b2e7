#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# usage: gw_hostile.sh GPUWITNESS STOP_SHIM WORKDIR
# The hostile-input suite (docs/testing.md, "Hostile input"): `gpuwitness run` against generated inputs of
# every class a hostile user tried, each case in a folder of its own and under a time limit. Every case
# must exit with its code within the limit, print its words on stderr, leave its inputs unchanged, and
# leave the folder holding exactly its inputs plus the outputs it is meant to write: complete outputs or none,
# never a staged ".gw-*" file. STOP_SHIM is tests/hostile/gw_stop_at.c built as a preload library: it stops a
# command at a chosen call so that a signal lands exactly mid-write.
set -u
gw=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") shim=$(cd "$(dirname "$2")" && pwd)/$(basename "$2") work=$3
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
# run LIMIT ARGS...: the command under a time limit (SIGKILL 5 s after the limit), streams kept; sets rc.
run() {
  local limit=$1; shift
  before_list=$(listing) before_sums=$(sums)
  timeout -k 5 "$limit" "$gw" "$@" > "$work/out.$cases" 2> "$work/err.$cases"
  rc=$?
  [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && problems+=" did not finish within ${limit} s;"
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

# ---------------------------------------------------------------- 1. special files never block
for kind in fifo chardev directory; do
  for k in grid-d4 focus-stack; do
    begin "special files" "$k reads a $kind"
    ext=json; [ "$k" = focus-stack ] && ext=npy
    case $kind in
      fifo) mkfifo "in.$ext"; input="in.$ext"; words="in.$ext: not a regular file (a FIFO)" ;;
      chardev) input=/dev/zero; words="/dev/zero: not a regular file (a character device)" ;;
      directory) mkdir "in.$ext"; input="in.$ext"; words="in.$ext: not a regular file (a directory)" ;;
    esac
    if [ "$k" = grid-d4 ]; then
      mkdir out; run 20 run grid-d4 --op rot90 --device cpu --out-dir out "$input"
    else
      run 20 run focus-stack --device cpu --out-ff ff.npy "$input"
    fi
    expect 1 "$words|nothing written"
  done
done

# ---------------------------------------------------------------- 2-3. time follows the bytes
begin "time follows the bytes" "an ARC task of 200,000 train pairs"
awk 'BEGIN { printf "{\"train\": ["; for (i = 0; i < 200000; i++) printf "%s{\"input\": [[1]], \"output\": [[1]]}", i ? ", " : "";
             printf "], \"test\": [{\"input\": [[1]]}]}\n" }' > pairs.json
SECONDS=0; run 60 run grid-d4 --op rot90 --device cpu -o out.json pairs.json; took=$SECONDS
expect 0 "" out.json

# The same 10 MB as 20,000 stacks of 255 one-pixel slices and as one 2257 x 2257 image: the first may take
# at most three times as long as the second, plus a second for start-up noise (before the fix: 4 s against
# 0.2 s on an idle 2-core machine, and minutes on a busy one).
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
begin "time follows the bytes" "a .npy of shape (1, 2257, 2257): 10 MB as one image (the yardstick)"
npy_u2 image.npy '(1, 2257, 2257)' $((2257 * 2257 * 2))
t0=$(now_ms); run 60 run focus-stack --device cpu --out-ff ff.npy image.npy; image_ms=$(( $(now_ms) - t0 ))
took=$(( image_ms / 1000 )); expect 0 "" ff.npy
begin "time follows the bytes" "a .npy of shape (20000, 255, 1, 1): 10 MB of one-pixel slices"
npy_u2 slices.npy '(20000, 255, 1, 1)' $((20000 * 255 * 2))
t0=$(now_ms); run 60 run focus-stack --device cpu --out-ff ff.npy slices.npy; slices_ms=$(( $(now_ms) - t0 ))
took=$(( slices_ms / 1000 ))
[ "$slices_ms" -le $(( 3 * image_ms + 1000 )) ] ||
  problems+=" took $slices_ms ms, the same bytes as one image $image_ms ms: time does not follow the bytes;"
expect 0 "" ff.npy

# ---------------------------------------------------------------- 4. a truncated file is an error, never a shorter result
tiff_u16 "$work/three.tif" 3 16 20
size=$(stat -c %s "$work/three.tif") ifd=$((2 + 9 * 12 + 4)) page=$((16 * 20 * 2))
cuts=""
for k in 0 1 2; do # around and inside IFD k's next-page pointer (its last 4 bytes), then into page k+1
  end=$((8 + (k + 1) * (page + ifd))) # the byte after IFD k
  for ((c = end - 6; c <= end + 2 && c < size; c++)); do cuts+=" $c"; done
  [ "$k" -lt 2 ] && cuts+=" $((end + page / 2)) $((end + page + 2)) $((end + page + ifd / 2))"
done
for c in $cuts; do
  begin "truncated input" "a 3-page uint16 TIFF cut to $c of $size bytes"
  head -c "$c" "$work/three.tif" > cut.tif
  run 20 run focus-stack --device cpu --out-ff ff.npy cut.tif
  expect 1 "cut.tif|nothing written"
done
begin "truncated input" "the whole 3-page TIFF (the control: it must read, Z = 3)"
cp "$work/three.tif" whole.tif
run 20 run focus-stack --device cpu --out-focus focus.npy whole.tif
bytes=$(stat -c %s focus.npy 2>/dev/null || echo 0)
[ "$bytes" -ge $((3 * 16 * 20 * 4)) ] && [ "$bytes" -lt $((3 * 16 * 20 * 4 + 256)) ] ||
  problems+=" focus.npy holds $bytes bytes: not 3 float32 pages of 16 x 20;"
expect 0 "" focus.npy

# ---------------------------------------------------------------- 5. all outputs or none
begin "all or nothing" "two inputs, the second with a 245-character name"
task a.json; long=$(printf 'b%.0s' $(seq 240)).json; task "$long"; mkdir out
run 20 run grid-d4 --op rot90 --device cpu --out-dir out a.json "$long"
expect 0 "" out/a.json "out/$long"

begin "all or nothing" "a file-size limit hit by the second of two outputs"
task small.json
awk 'BEGIN { printf "{\"train\": ["; for (i = 0; i < 40; i++) { printf "%s{\"input\": [", i ? ", " : "";
             for (r = 0; r < 30; r++) printf "%s[0,1,2,3,4,5,6,7,8,9,0,1,2,3,4,5,6,7,8,9,0,1,2,3,4,5,6,7,8,9]", r ? "," : "";
             printf "], \"output\": [[1]]}" } printf "], \"test\": [{\"input\": [[1]]}]}\n" }' > big.json
mkdir out
before_list=$(listing) before_sums=$(sums)
(ulimit -f 16; exec "$gw" run grid-d4 --op rot90 --device cpu --out-dir out small.json big.json) \
  > "$work/out.$cases" 2> "$work/err.$cases"
rc=$?
expect 1 "out/big.json|nothing written"

begin "all or nothing" "ex2d_patch with rdiags.npy already a directory"
mkdir -p o/rdiags.npy
run 120 run ex2d --tier S --device cpu --out-dir o
expect 1 "o/rdiags.npy: cannot replace the file: Is a directory|nothing written"

begin "all or nothing" "focus_stack with --out-idx a directory"
npy_u2 stack.npy '(2, 8, 8)' $((2 * 8 * 8 * 2)); mkdir idx.npy
run 20 run focus-stack --device cpu --out-ff ff.npy --out-idx idx.npy stack.npy
expect 2 "idx.npy"

# ---------------------------------------------------------------- 6. signals: no debris, no half set
begin "signals" "ex2d_patch piped into head -n 1 (SIGPIPE)"
mkdir o
before_list=$(listing) before_sums=$(sums)
timeout -k 5 120 "$gw" run ex2d --tier S --device cpu --out-dir o 2> "$work/err.$cases" | head -n 1 > /dev/null
rc=${PIPESTATUS[0]}
expect 0 "" o/flux.npy o/ivar.npy o/rdiags.npy o/info.npy

begin "signals" "grid_d4 with five inputs piped into head -n 2"
for i in 1 2 3 4 5; do task "t$i.json"; done; mkdir out
before_list=$(listing) before_sums=$(sums)
timeout -k 5 60 "$gw" run grid-d4 --op rot90 --device cpu --out-dir out t1.json t2.json t3.json t4.json t5.json \
  2> "$work/err.$cases" | head -n 2 > /dev/null
rc=${PIPESTATUS[0]}
expect 0 "" out/t1.json out/t2.json out/t3.json out/t4.json out/t5.json

for sig in TERM INT; do
  code=$((128 + $(kill -l "$sig")))
  begin "signals" "SIG$sig while ex2d_patch writes its first output: nothing is left"
  mkdir o
  stopped_case fsync "$sig" run ex2d --tier S --device cpu --out-dir o
  expect "$code" ""
  begin "signals" "SIG$sig while ex2d_patch commits its outputs: all four are there, complete"
  mkdir o
  stopped_case rename "$sig" run ex2d --tier S --device cpu --out-dir o
  expect "$code" "" o/flux.npy o/ivar.npy o/rdiags.npy o/info.npy
  begin "signals" "SIG$sig while grid_d4 writes the first of three outputs: nothing is left"
  task a.json; task b.json; task c.json; mkdir out
  stopped_case fsync "$sig" run grid-d4 --op rot90 --device cpu --out-dir out a.json b.json c.json
  expect "$code" ""
done

# ---------------------------------------------------------------- 7. strict JSON
json_case() { # json_case NAME WORDS BYTES (printf format)
  begin "strict JSON" "$1"
  printf "$3" > bad.json; mkdir out
  run 20 run grid-d4 --op rot90 --device cpu --out-dir out bad.json
  expect 1 "bad.json|$2"
}
json_case "a 0x01 byte between tokens" "control character" '{"train": [{"input": [[1]],\001 "output": [[1]]}], "test": [{"input": [[1]]}]}'
json_case "a 0x1f byte between tokens" "control character" '{"train": [{"input": [[1]], "output": [[1]]}],\037 "test": [{"input": [[1]]}]}'
json_case "a NUL byte between tokens" "NUL" '{"train": [{"input": [[1]], "output": [[1]]}], \000"test": [{"input": [[1]]}]}'
json_case "a cell written 01" "leading zero" '{"train": [{"input": [[01]], "output": [[1]]}], "test": [{"input": [[1]]}]}'
json_case "a cell written 1.0" "a cell must be an integer 0..9" '{"train": [{"input": [[1.0]], "output": [[1]]}], "test": [{"input": [[1]]}]}'

# ---------------------------------------------------------------- 8. messages that name the rule
begin "messages" "an ARC task nested 100,000 deep"
awk 'BEGIN { for (i = 0; i < 100000; i++) printf "["; for (i = 0; i < 100000; i++) printf "]"; printf "\n" }' > deep.json
mkdir out
run 20 run grid-d4 --op rot90 --device cpu --out-dir out deep.json
expect 1 "deep.json|nesting deeper than"
# The rule, not "no usable GPU": where a GPU is present, strtol would have taken the first four as ordinals.
for spelling in 'cuda: 1' 'cuda:+0' 'cuda:-0' 'cuda:00' 'cuda:1 ' ' cuda'; do
  begin "messages" "--device '$spelling'"
  task a.json
  run 20 run grid-d4 --op rot90 --device "$spelling" -o out.json a.json
  rule="written as plain decimal digits"; [ "$spelling" = ' cuda' ] && rule="must be one of cuda, cuda:N, cpu, auto"
  expect 2 "--device '$spelling'|$rule"
done

# ---------------------------------------------------------------- 9. nothing silently dropped
begin "lossless output" "identity keeps a top-level \"name\" and unknown pair keys"
printf '{"name": "t\\u00e9st", "train": [{"input": [[1, 2]], "output": [[2]], "note": {"a": [1, "x"]}}], "test": [{"input": [[3]]}], "z": null}\n' > named.json
run 20 run grid-d4 --op identity --device cpu -o out.json named.json
for key in '"name"' '"note"' '"z"' 't\\u00e9st'; do
  grep -q -- "$key" out.json 2>/dev/null || problems+=" out.json lacks $key;"
done
expect 0 "" out.json

# ---------------------------------------------------------------- summary
for c in "${!per_class[@]}"; do echo "cases: ${per_class[$c]} $c"; done | LC_ALL=C sort
echo "gw_hostile: $cases cases, $failed failed"
cd / && rm -rf "$work"
[ "$failed" -eq 0 ] && [ "$cases" -gt 0 ]
