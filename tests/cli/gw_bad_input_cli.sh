#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# usage: GW_KERNEL_NAMES="a, b" gw_bad_input_cli.sh GPUWITNESS WORKDIR [VALGRIND GATE_SCRIPT]
# The bad-input table of the gpuwitness CLI: global options, doctor, check, run grid_d4 and run focus_stack,
# each with bad arguments and bad files (made here, in WORKDIR). Every row must exit with its code (2 bad
# usage, 1 bad input file), print every one of its words on stderr (the argument or file and the rule), and
# leave WORKDIR exactly as it was: no output file created, no input modified. With VALGRIND and GATE_SCRIPT
# (ctest/gw_valgrind_gate.sh) every row also runs under memcheck and must leak nothing. The rows already
# registered one by one in tests/cli/CMakeLists.txt and tests/focus_stack/cli.cmake are not repeated here.
set -u
: "${GW_KERNEL_NAMES:?the kernels as the CLI lists them, e.g. 'grid_d4, focus_stack'}"
gw=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") work=$2 valgrind=${3:-} gate=${4:-}
rm -rf "$work" "$work.io"
mkdir -p "$work" "$work.io" || exit 1
work=$(cd "$work" && pwd) io=$(cd "$work.io" && pwd) # the rows run in $work; their streams go to $io
cd "$work" || exit 1
unset GW_REQUIRE_GPU GW_DEVICE CRITERION_ALWAYS_SUCCEED

# ---------------------------------------------------------------- bad files
# Bytes are written with printf octal escapes (POSIX printf has no \x).
le16() { printf "\\$(printf %03o $(($1 & 255)))\\$(printf %03o $((($1 >> 8) & 255)))"; }
le32() { le16 $(($1 & 65535)); le16 $((($1 >> 16) & 65535)); }
# npy FILE MAJOR HEADER_TEXT DATA_BYTES [HEADER_LEN]: a .npy preamble (HEADER_LEN defaults to the text's).
npy() {
  local len=${5:-${#3}}
  { printf '\223NUMPY'; printf "\\$(printf %03o "$2")\\000"
    if [ "$2" = 1 ]; then le16 "$len"; else le32 "$len"; fi
    printf '%s' "$3"; head -c "$4" /dev/zero; } > "$1"
}
hdr() { printf "{'descr': '%s', 'fortran_order': False, 'shape': %s, }\n" "$1" "$2"; }
# tiff FILE WIDTH HEIGHT BITS DATA_BYTES: a one-page little-endian TIFF whose tags may lie about its data.
tiff() {
  local data_at=$((8 + 2 + 12 * 9 + 4))
  { printf 'II*\000'; le32 8; le16 9
    entry() { le16 "$1"; le16 "$2"; le32 1; if [ "$2" = 3 ]; then le16 "$3"; le16 0; else le32 "$3"; fi; }
    entry 256 4 "$2"; entry 257 4 "$3"; entry 258 3 "$4"; entry 259 3 1; entry 262 3 1
    entry 273 4 "$data_at"; entry 277 3 1; entry 278 4 "$3"; entry 279 4 "$5"
    le32 0; head -c "$5" /dev/zero; } > "$1"
}
task() { printf '{"train": [{"input": %s, "output": [[1]]}], "test": [{"input": [[1]]}]}' "$1" > "$2"; }

mkdir d d.npy
mkfifo fifo.json fifo.npy # no writer: a reader that opened it before checking would block here forever
printf '{"train": [{"input": [[1, 2]], "output": [[2, 1]]}], "test": [{"input": [[3]]}]}' > a.json
: > empty.json
printf '[]' > list.json
printf '{"train": [{"input": [[1]], "output": [[1]]}]}' > no_test.json
task '[[1, 2], [3]]' ragged.json
task '[[-1]]' negative.json
task "[$(printf '[0],%.0s' $(seq 255))[0]]" rows256.json
task '[[NaN]]' nan.json
task '[[1e400]]' inf.json
task '[[1.5]]' fraction.json
task '[["7"]]' string_cell.json
printf '{"train": [{"input": [[1]], "input": [[2]], "output": [[1]]}], "test": [{"input": [[1]]}]}' > dup_key.json
printf '{"train": [{"input": [[1]], "output": [[1]]}], "test": [{"input": [[1]]}]} x' > trailing.json
printf '{' > huge.json && truncate -s $((256 * 1024 * 1024 + 1)) huge.json
: > empty.npy
printf '\223NUMPY' > magic_only.npy
npy v4.npy 4 "$(hdr '<u2' '(1, 1, 1)')" 2
npy huge_header.npy 2 '{' 0 $((2 * 1024 * 1024))
npy overflow.npy 1 "$(hdr '<u2' '(4294967296, 4294967296, 2)')" 0
npy f4.npy 1 "$(hdr '<f4' '(1, 2, 2)')" 16
npy zero_dim.npy 1 "$(hdr '<u2' '(2, 0, 3)')" 0
npy rank5.npy 1 "$(hdr '<u2' '(1, 1, 1, 1, 1)')" 2
printf 'II*\000' > sig_only.tif
printf 'II*\000\000\020\000\000' > ifd_past_end.tif
tiff width0.tif 0 2 16 8
tiff huge_page.tif 65536 65536 16 8
tiff short_strip.tif 2 2 16 6
head -c 60 short_strip.tif > cut.tif

# ---------------------------------------------------------------- the table runner
snapshot() {
  find . -mindepth 1 -printf '%P %y %s %T@\n' | LC_ALL=C sort
  find . -type f -size -1024k -exec md5sum {} + | LC_ALL=C sort
}
rows=0 failed=0 group=""
declare -A per_group # rows per command, for the closing count
# row NAME EXIT WORDS ARGS...: one gpuwitness call; WORDS is '|'-separated text stderr must contain.
row() { row_env "" "$@"; }
# row_env VAR=VALUE NAME EXIT WORDS ARGS...: the same with one variable set for the command.
row_env() {
  local env_set=$1 name=$2 want=$3 words=$4
  shift 4
  rows=$((rows + 1))
  per_group[$group]=$((${per_group[$group]:-0} + 1))
  local before after rc problems=""
  before=$(snapshot)
  local -a cmd=(env)
  [ -n "$env_set" ] && cmd+=("$env_set")
  if [ -n "$valgrind" ]; then
    cmd+=(bash "$gate" "$valgrind" "$io/vg.row$rows" "$want" "$gw" "$@")
  else
    cmd+=("$gw" "$@")
  fi
  "${cmd[@]}" > "$io/row.out" 2> "$io/row.err"
  rc=$?
  after=$(snapshot)
  if [ -n "$valgrind" ]; then
    [ "$rc" -eq 0 ] || problems+=" the Valgrind gate failed (its report follows);"
  else
    [ "$rc" -eq "$want" ] || problems+=" exit $rc, want $want;"
  fi
  local -a word_list
  IFS='|' read -ra word_list <<< "$words"
  local w
  for w in "${word_list[@]}"; do
    grep -qF -- "$w" "$io/row.err" || problems+=" stderr lacks \"$w\";"
  done
  [ "$before" = "$after" ] || problems+=" the work directory changed: $(diff <(echo "$before") <(echo "$after") | tr '\n' ' ');"
  if [ -n "$problems" ]; then
    failed=$((failed + 1))
    echo "FAIL $name: gpuwitness $*:$problems"
    sed 's/^/    stderr: /' "$io/row.err"
    [ -n "$valgrind" ] && sed 's/^/    gate: /' "$io/row.out"
  else
    echo "ok   $name: $(head -n 1 "$io/row.err")"
  fi
}

# ---------------------------------------------------------------- global options
group="gpuwitness (global options)"
row "help for an unknown command" 2 "help: unknown command 'frob'" help frob
row "empty command" 2 "unknown command ''" ''
row "--version with an argument" 2 "--version: unexpected argument 'extra'" --version extra
row "unknown option before the command" 2 "unknown option '--Version'|only --help and --version" --Version

# ---------------------------------------------------------------- doctor
group="gpuwitness doctor"
row "doctor with an argument" 2 "doctor: unknown argument 'extra'|takes no arguments" doctor extra
row "doctor with --device" 2 "doctor: unknown option '--device'" doctor --device cpu

# ---------------------------------------------------------------- check
group="gpuwitness check"
row "check with an argument" 2 "check: unexpected argument 'extra'|options only" check extra
row "check --seed negative" 2 "--seed '-1': must be a non-negative decimal integer below 2^64" check --seed -1
row "check --seed not a number" 2 "--seed 'abc': must be a non-negative decimal integer" check --seed abc
row "check --seed 2^64" 2 "--seed '18446744073709551616': must be a non-negative decimal integer below 2^64" \
  check --seed 18446744073709551616
row "check --seed empty" 2 "option '--seed' needs a non-empty value" check --seed=
row "check --seed with a space and a sign" 2 "--seed ' -1': must be a non-negative decimal integer" check --seed ' -1'
row "check --seed with a plus sign" 2 "--seed '+1': must be a non-negative decimal integer" check --seed +1
row "check --device empty" 2 "option '--device' needs a non-empty value" check --device=
row "check --seed without a value" 2 "option '--seed' needs a value" check --seed
row "check --size empty" 2 "option '--size' needs a non-empty value" check --size=
row "check --device cuda:abc" 2 "--device 'cuda:abc': the device ordinal after 'cuda:' must be a number 0..1024" \
  check --device cuda:abc
row "check --device cuda:1025" 2 "--device 'cuda:1025': the device ordinal after 'cuda:' must be a number 0..1024" \
  check --device cuda:1025
row "check --device cuda:" 2 "--device 'cuda:': the device ordinal" check --device cuda:
row "check --device CPU (case)" 2 "--device 'CPU': must be one of cuda, cuda:N, cpu, auto" check --device CPU
row "check --device 'cuda: 1' (space)" 2 "--device 'cuda: 1': the device ordinal after 'cuda:' must be a number 0..1024, written as plain decimal digits (no sign, space or leading zero)" check --device 'cuda: 1'
row "check --device cuda:+0" 2 "--device 'cuda:+0': the device ordinal after 'cuda:' must be a number 0..1024, written as plain decimal digits" check --device cuda:+0
row "check --device cuda:-0" 2 "--device 'cuda:-0': the device ordinal after 'cuda:' must be a number 0..1024" check --device cuda:-0
row "check --device 'cuda:1 ' (trailing space)" 2 "--device 'cuda:1 ': the device ordinal after 'cuda:' must be a number 0..1024" check --device 'cuda:1 '
row "check --device cuda:00 (one spelling)" 2 "--device 'cuda:00': the device ordinal after 'cuda:' must be a number 0..1024" check --device cuda:00
row "check --device cuda:01 (leading zero)" 2 "--device 'cuda:01': the device ordinal after 'cuda:' must be a number 0..1024" check --device cuda:01
row_env GW_DEVICE=cuda:+0 "GW_DEVICE cuda:+0" 2 "GW_DEVICE 'cuda:+0': the device ordinal after 'cuda:' must be a number 0..1024" check

# ---------------------------------------------------------------- run grid-d4: arguments
group="gpuwitness run grid-d4 (arguments)"
row "run without a kernel" 2 "run: missing KERNEL: one of $GW_KERNEL_NAMES" run --device cpu
row "--op without a value" 2 "option '--op' needs a value" run grid-d4 -o out.json a.json --op
row "--op in capitals" 2 "--op 'ROT90': unknown op; must be one of identity, rot90" \
  run grid-d4 --op ROT90 --device cpu -o out.json a.json
row "--op empty" 2 "option '--op' needs a non-empty value" run grid-d4 --op '' --device cpu -o out.json a.json
row "-o empty" 2 "option '-o' needs a non-empty value" run grid-d4 --op rot90 --device cpu -o '' a.json
row "--out-dir and -o together" 2 "give exactly one of --out-dir DIR and -o FILE" \
  run grid-d4 --op rot90 --device cpu --out-dir d -o out.json a.json
row "--out-dir without a value" 2 "option '--out-dir' needs a value" run grid-d4 --op rot90 a.json --out-dir
row "--out-dir is a file" 2 "--out-dir 'a.json': not an existing directory" \
  run grid-d4 --op rot90 --device cpu --out-dir a.json a.json
row "-o is a directory" 2 "-o 'd': exists and is not a regular file (a directory)" run grid-d4 --op rot90 --device cpu -o d a.json
row "two inputs, one output name" 2 "output 'd/a.json' (of 'a.json') and output 'd/a.json' (of './a.json') are the same file" \
  run grid-d4 --op rot90 --device cpu --out-dir d a.json ./a.json
row "--device cuda:abc" 2 "--device 'cuda:abc': the device ordinal" run grid-d4 --op rot90 --device cuda:abc -o out.json a.json
row_env GW_DEVICE=gpu0 "GW_DEVICE gpu0" 2 "GW_DEVICE 'gpu0': must be one of cuda, cuda:N, cpu, auto" \
  run grid-d4 --op rot90 -o out.json a.json

# ---------------------------------------------------------------- run grid-d4: bad files
group="gpuwitness run grid-d4 (ARC JSON files)"
arc() { row "$1" 1 "$2|nothing written" run grid-d4 --op rot90 --device cpu -o out.json "$3"; }
arc "input is a directory" "d: not a regular file (a directory)" d
arc "input is /dev/null" "/dev/null: not a regular file (a character device)" /dev/null
arc "input is a FIFO" "fifo.json: not a regular file (a FIFO)" fifo.json
arc "empty file" "empty.json: empty input" empty.json
arc "a list, not an object" "list.json: top level: must be an object with \"train\" and \"test\" lists, got a list" list.json
arc "no test list" "no_test.json: top level: missing \"test\"" no_test.json
arc "ragged rows" "ragged.json: train[0].input row 1: ragged grid: 1 columns, but row 0 has 2" ragged.json
arc "cell -1" "negative.json: train[0].input row 0 column 0: value -1 is outside 0..9" negative.json
arc "256 rows" "rows256.json: train[0].input: 256 rows, more than GW_ARC_MAX_DIM (255)" rows256.json
arc "NaN cell" "nan.json: invalid JSON at line 1" nan.json
arc "1e400 cell (Inf)" "inf.json: train[0].input row 0 column 0: number too large (not finite)" inf.json
arc "1.5 cell" "fraction.json: train[0].input row 0 column 0: 1.5 is not an integer" fraction.json
arc "string cell" "string_cell.json: train[0].input row 0 column 0: a cell must be an integer 0..9, got a string" \
  string_cell.json
arc "duplicate input key" "dup_key.json: train[0]: duplicate key \"input\"" dup_key.json
arc "text after the task" "trailing.json: invalid JSON: extra characters after the task object" trailing.json
arc "256 MiB + 1 byte" "huge.json: 268435457 bytes, more than the 268435456-byte limit" huge.json

# ---------------------------------------------------------------- run focus-stack: arguments
group="gpuwitness run focus-stack (arguments)"
row "--ksize beyond int" 2 "--ksize '99999999999': not an integer (bad ksize: must be 3, 5 or 7)" \
  run focus-stack --device cpu --ksize 99999999999 --out-ff ff.npy f4.npy
row "--window beyond int" 2 "--window '2147483648': not an integer (bad window" \
  run focus-stack --device cpu --window 2147483648 --out-ff ff.npy f4.npy
row "--out-ff names a directory" 2 "--out-ff 'd.npy': exists and is not a regular file" \
  run focus-stack --device cpu --out-ff d.npy f4.npy
row "--out-idx empty" 2 "option '--out-idx' needs a non-empty value" \
  run focus-stack --device cpu --out-idx '' f4.npy
row "--out-best without a value" 2 "option '--out-best' needs a value" run focus-stack --device cpu f4.npy --out-best
row "--device cuda:abc" 2 "--device 'cuda:abc': the device ordinal" run focus-stack --device cuda:abc --out-ff ff.npy f4.npy
row_env GW_DEVICE=gpu0 "GW_DEVICE gpu0" 2 "GW_DEVICE 'gpu0': must be one of cuda, cuda:N, cpu, auto" \
  run focus-stack --out-ff ff.npy f4.npy

# ---------------------------------------------------------------- run focus-stack: bad files
group="gpuwitness run focus-stack (.npy and TIFF files)"
stack() { row "$1" 1 "$2|nothing written" run focus-stack --device cpu --out-ff ff.npy --out-idx idx.tif "$3"; }
stack "input is a directory" "d: not a regular file (a directory)" d
stack "input is /dev/null" "/dev/null: not a regular file (a character device)" /dev/null
stack "input is a FIFO" "fifo.npy: not a regular file (a FIFO)" fifo.npy
stack "empty file" "empty.npy: neither a .npy file (\\x93NUMPY) nor a TIFF (II*, MM*)" empty.npy
stack "the .npy magic only" "magic_only.npy: truncated: the file ends inside the .npy preamble" magic_only.npy
stack ".npy version 4.0" "v4.npy: unsupported .npy format version 4.0" v4.npy
stack ".npy header of 2 MiB" "huge_header.npy: header length 2097152 is absurd (more than 1 MiB)" huge_header.npy
stack ".npy shape product overflows" "overflow.npy: shape (4294967296, 4294967296, 2): the size overflows" overflow.npy
stack ".npy float32 ('<f4')" "f4.npy: dtype '<f4' (float32): expected '<u2' (uint16)" f4.npy
stack ".npy dimension 0" "zero_dim.npy: shape (2, 0, 3): dimension 1 is 0: every dimension must be at least 1" zero_dim.npy
stack ".npy rank 5" "rank5.npy: shape (1, 1, 1, 1, 1) has rank 5: expected rank 3 or 4" rank5.npy
stack "TIFF signature only" "sig_only.tif: not a readable TIFF file" sig_only.tif
stack "TIFF directory past the end" "ifd_past_end.tif: not a readable TIFF file" ifd_past_end.tif
stack "TIFF cut in its directory" "cut.tif: not a readable TIFF file" cut.tif
stack "TIFF width 0" "width0.tif: not a readable TIFF file" width0.tif
stack "TIFF strip cut short" "short_strip.tif: page 0: cannot decode strip 0 (rows 0..1): data missing or corrupt" \
  short_strip.tif
stack "TIFF of 65536x65536 declared, 8 bytes stored" "huge_page.tif: page 0: cannot decode strip 0" huge_page.tif

# ---------------------------------------------------------------- run ex2d: arguments
# (the rows of tests/ex2d_patch/cli.cmake, cli_ex2d_usage_*, are not repeated). d is an existing directory, a.json a
# regular file; every row stops before the frame is synthesised, so nothing can be written into d.
group="gpuwitness run ex2d (arguments)"
ex2d() { row "$1" 2 "$2" run ex2d --device cpu "${@:3}"; }
ex2d "--tier empty" "option '--tier' needs a non-empty value" --out-dir d --tier=
ex2d "--tier XL_BUNDLE (the CLI says XL)" "--tier 'XL_BUNDLE': must be S, M, L, XL or frame" --out-dir d --tier XL_BUNDLE
ex2d "--tier with a trailing space" "--tier 'S ': must be S, M, L, XL or frame" --out-dir d --tier 'S '
ex2d "--fibres without a count" "--fibres '1:': must be FIRST:COUNT, whole numbers, FIRST >= 0 and COUNT >= 1" \
  --out-dir d --fibres 1:
ex2d "--fibres not numbers" "--fibres 'a:b': must be FIRST:COUNT" --out-dir d --fibres a:b
ex2d "--fibres with three fields" "--fibres '1:2:3': must be FIRST:COUNT" --out-dir d --fibres 1:2:3
ex2d "--fibres FIRST beyond int" "--fibres '2147483648:1': must be FIRST:COUNT" --out-dir d --fibres 2147483648:1
ex2d "--fibres COUNT beyond int" "--fibres '0:2147483648': must be FIRST:COUNT" --out-dir d --fibres 0:2147483648
ex2d "--fibres COUNT negative" "--fibres '0:-1': must be FIRST:COUNT|COUNT >= 1" --out-dir d --fibres 0:-1
ex2d "--fibres 5 on tier S (one patch only)" \
  "tier S with --fibres: image_kind EX2D_IMAGE_PATCH needs a frame of exactly one patch" --out-dir d --tier S --fibres 0:5
ex2d "--waves 11 on tier S (two patches)" \
  "tier S with --waves: image_kind EX2D_IMAGE_PATCH needs a frame of exactly one patch" --out-dir d --tier S --waves 600:11
ex2d "--waves past the camera" "with --waves: wavelengths: nwave >= 1 and 0 <= wave_first <= nwave_camera - nwave" \
  --out-dir d --tier L --waves 0:2327
ex2d "--waves empty" "option '--waves' needs a non-empty value" --out-dir d --waves=
ex2d "--threads 1025" "--threads '1025': must be a whole number from 0 to 1024" --out-dir d --threads 1025
ex2d "--threads -1" "--threads '-1': must be a whole number from 0 to 1024" --out-dir d --threads -1
ex2d "--threads 1e3" "--threads '1e3': must be a whole number from 0 to 1024" --out-dir d --threads 1e3
ex2d "--threads without a value" "option '--threads' needs a value" --out-dir d --threads
ex2d "--seed 2^64" "--seed '18446744073709551616': must be a whole number from 0 to 18446744073709551615" \
  --out-dir d --seed 18446744073709551616
ex2d "--seed hexadecimal" "--seed '0x10': must be a whole number from 0 to" --out-dir d --seed 0x10
ex2d "--seed empty" "option '--seed' needs a non-empty value" --out-dir d --seed=
ex2d "--out-dir missing, other options fine" "missing --out-dir DIR: where flux.npy, ivar.npy, rdiags.npy and info.npy go" \
  --tier S --threads 1
ex2d "--out-dir names a regular file" "--out-dir 'a.json': not an existing directory (create it first)" --out-dir a.json
ex2d "--out-dir empty" "option '--out-dir' needs a non-empty value" --out-dir=
ex2d "--out-dir without a value" "option '--out-dir' needs a value" --tier S --out-dir
ex2d "unknown short option" "unknown option '-x': options are --tier, --fibres, --waves, --device, --threads, --seed, --out-dir" \
  --out-dir d -x
ex2d "a lone dash" "unexpected argument '-': the frame is synthetic, ex2d_patch takes options only" --out-dir d -
ex2d "--device cuda:abc" "--device 'cuda:abc': the device ordinal" --out-dir d --device cuda:abc

# ---------------------------------------------------------------- summary
for g in "${!per_group[@]}"; do echo "bad inputs tried: ${per_group[$g]} on $g"; done | LC_ALL=C sort
echo "bad_input_cli: $rows rows, $failed failed${valgrind:+ (each under Valgrind memcheck)}"
cd / && rm -rf "$work" "$io"
[ "$failed" -eq 0 ] && [ "$rows" -gt 0 ]
