#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# usage: gw_hostile.sh GPUWITNESS STOP_SHIM WORKDIR
# The hostile-input suite (docs/testing.md, "Hostile input"): `gpuwitness run` against generated inputs of
# every class a hostile user tried, each case in a folder of its own and under a time limit. Every case
# must exit with its code within the limit, print its words on stderr, leave its inputs unchanged, and
# leave the folder holding exactly its inputs plus the outputs it is meant to write: complete outputs or none,
# never a staged ".gw-*" file. STOP_SHIM is tests/hostile/gw_stop_at.c built as a preload library: it stops a
# command at a chosen call so that a signal lands exactly mid-write.
. "$(dirname "$0")/gw_hostile_lib.sh"

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

begin "all or nothing" "ex2d_patch with rdiags.npy already a directory (refused before any work since round 2)"
mkdir -p o/rdiags.npy
run 120 run ex2d --tier S --device cpu --out-dir o
expect 2 "output 'o/rdiags.npy': exists and is not a regular file (a directory)"

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

# ================================================================ round 2 (docs/testing.md, "Hostile input")
# Round 2's classes that need no data set; the DESI-file cases are gw_hostile_desi.sh (hostile_input_desi).
# The files a refused command names need not be valid: the rule is checked before any of them is read.

# ---------------------------------------------------------------- 1. an output is never an input
for how in name "hard link" symlink; do
  begin "output is an input" "run ex2d --out names the --image file by $how"
  printf 'not read\n' > psf.fits; printf 'image bytes\n' > img.fits
  out=img.fits
  case $how in "hard link") ln img.fits out.fits; out=out.fits ;; symlink) ln -s img.fits out.fits; out=out.fits ;; esac
  run 20 run ex2d --device cpu --psf psf.fits --image img.fits --fibres 0:5 --waves 5700:5760:1 --out "$out"
  expect 2 "--out '$out' is the input file --image 'img.fits': refusing to overwrite an input"
done
begin "output is an input" "run ex2d --out names the --psf file"
printf 'psf bytes\n' > psf.fits; printf 'image bytes\n' > img.fits
run 20 run ex2d --device cpu --psf psf.fits --image img.fits --fibres 0:5 --waves 5700:5760:1 --out ./psf.fits
expect 2 "--out './psf.fits' is the input file --psf 'psf.fits'"
begin "output is an input" "synth ex2d --out names the --psf file"
printf 'psf bytes\n' > psf.fits
run 20 synth ex2d --psf psf.fits --fibres 0:5 --waves 5700:5760:1 --out psf.fits
expect 2 "--out 'psf.fits' is the input file --psf 'psf.fits'"

# ---------------------------------------------------------------- 2. bench: every output apart from the inputs and each other
smoke=(bench grid_d4 --size smoke --reps 2 --cpu-reps 1 --device cpu --no-monitor)
"$gw" "${smoke[@]}" --json "$work/base.json" > /dev/null 2>&1 || echo "FAIL could not make the bench baseline"
begin "bench outputs" "--json F --html R --baseline F"
cp "$work/base.json" F.json
run 60 "${smoke[@]}" --json F.json --html R.html --baseline F.json
expect 2 "--json 'F.json' is the input file --baseline 'F.json'"
begin "bench outputs" "--html F --baseline F"
cp "$work/base.json" F.json
run 60 "${smoke[@]}" --html F.json --baseline F.json
expect 2 "--html 'F.json' is the input file --baseline 'F.json'"
begin "bench outputs" "--json R --html R"
run 60 "${smoke[@]}" --json R --html R
expect 2 "--json 'R' and --html 'R' are the same file"
begin "bench outputs" "--json, --html and --baseline apart: both written (the control)"
cp "$work/base.json" old.json
run 120 "${smoke[@]}" --json new.json --html page.html --baseline old.json
expect 0 "" new.json page.html

# ---------------------------------------------------------------- 6. no reader blocks on a FIFO
begin "FIFO inputs" "bench --baseline a FIFO"
mkfifo base.json
run 20 "${smoke[@]}" --html page.html --baseline base.json
expect 1 "report.py: 'base.json': not a regular file (a FIFO)"
begin "FIFO inputs" "GW_NVML_LIBRARY names a FIFO (check --monitor)"
mkfifo nvml.so
with_env GW_NVML_LIBRARY="$dir/nvml.so" run 60 check --size small --device cpu --monitor
expect 0 "nvml.so: not a regular file (a FIFO)"

begin "FIFO inputs" "bench/merge.py --bench a FIFO, and a peer's FIFO manifest"
mkfifo bench.json; mkdir dump; mkfifo dump/manifest.json
run_cmd 20 /usr/bin/python3 "$(dirname "$docs")/bench/merge.py" --bench bench.json --inputs dump
refute "Traceback"
expect 1 "bench.json: not a regular file (a FIFO)"

# ---------------------------------------------------------------- 7. OMP_NUM_THREADS is capped as --threads is
begin "thread counts" "OMP_NUM_THREADS=100000 check"
with_env OMP_NUM_THREADS=100000 run 120 check --size small --device cpu
expect 0 "OMP_NUM_THREADS=100000 asks for more than 1024 threads|using 1024"
begin "thread counts" "OMP_NUM_THREADS=40000 bench"
with_env OMP_NUM_THREADS=40000 run 120 "${smoke[@]}"
expect 0 "OMP_NUM_THREADS=40000 asks for more than 1024 threads"

# ---------------------------------------------------------------- 8. a bad output place is refused before any work
for place in "nodir/f.fits|directory 'nodir' does not exist" "adir|exists and is not a regular file (a directory)" \
             "afifo|exists and is not a regular file (a FIFO)"; do
  target=${place%%|*} words=${place#*|}
  begin "bad output place" "run ex2d --out $target"
  printf 'not read\n' > psf.fits; printf 'not read\n' > img.fits; mkdir adir; mkfifo afifo
  run 20 run ex2d --device cpu --psf psf.fits --image img.fits --fibres 0:5 --waves 5700:5760:1 --out "$target"
  expect 2 "--out '$target': $words"
done
begin "bad output place" "synth ex2d --out nodir/i.fits"
printf 'not read\n' > psf.fits
run 20 synth ex2d --psf psf.fits --fibres 0:5 --waves 5700:5760:1 --out nodir/i.fits
expect 2 "--out 'nodir/i.fits': directory 'nodir' does not exist"
begin "bad output place" "bench --json a directory: refused before the bench"
mkdir out.json
run 20 "${smoke[@]}" --json out.json
refute "grid_d4_ref"
expect 2 "--json 'out.json': exists and is not a regular file (a directory)"
for baseline in "malformed|{\"schema\": \"gpuwitness-bench/1\"|report.py: 'old.json': not valid JSON" \
                "directory||report.py: 'old.json': not a regular file (a directory)" \
                "another file|{\"a\": 1}|report.py: 'old.json': schema: must be \"gpuwitness-bench/1\"" \
                "a result with a negative time|negative|report.py: 'old.json': measurements[0]"; do
  IFS='|' read -r what text words <<< "$baseline"
  begin "bad output place" "bench --baseline $what: refused before the bench, nothing written"
  case $what in
    directory) mkdir old.json ;;
    *negative*) sed -E '0,/"median":[[:space:]]*[0-9.eE+-]+/s//"median": -1/' "$work/base.json" > old.json ;;
    *) printf '%s\n' "$text" > old.json ;;
  esac
  run 20 "${smoke[@]}" --json new.json --html page.html --baseline old.json
  refute "grid_d4_ref"
  expect 1 "$words|nothing run, nothing written"
done

# ---------------------------------------------------------------- 9. --waves refused on its own terms
begin "wavelength grid" "a step below the spacing of doubles"
printf 'not read\n' > psf.fits; printf 'not read\n' > img.fits
run 20 run ex2d --device cpu --psf psf.fits --image img.fits --fibres 0:5 --waves 5700:5700.00000000001:1e-15 --out f.fits
expect 2 "--waves '5700:5700.00000000001:1e-15'|below 8 times the spacing of doubles at W1"
begin "wavelength grid" "DW = 1e-300: no 300-digit bin count"
printf 'not read\n' > psf.fits; printf 'not read\n' > img.fits
run 20 run ex2d --device cpu --psf psf.fits --image img.fits --fibres 0:5 --waves 5700:5760:1e-300 --out f.fits
[ "$(wc -L < "$work/err.$cases")" -lt 300 ] || problems+=" a message line of $(wc -L < "$work/err.$cases") characters;"
expect 2 "--waves '5700:5760:1e-300'"
begin "wavelength grid" "too many bins, a count in digits (the control: 1e-300 above gave 300 of them)"
printf 'not read\n' > psf.fits; printf 'not read\n' > img.fits
run 20 run ex2d --device cpu --psf psf.fits --image img.fits --fibres 0:5 --waves 1:1000000:1e-5 --out f.fits
expect 2 "99999900001 bins, at most 100000"

# ---------------------------------------------------------------- 10. messages that blame the right thing
begin "messages" "doctor with GW_DEVICE=banana"
with_env GW_DEVICE=banana run 60 doctor
grep -qF "GW_DEVICE:            banana: INVALID" "$work/out.$cases" || problems+=" stdout does not call banana invalid;"
expect 1 "GW_DEVICE 'banana': must be one of cuda, cuda:N, cpu, auto"

# ---------------------------------------------------------------- 11. re-running over existing outputs costs what the first run did
# Counted in stat() calls (the stop shim counts them): 8,000 files took 92 s against 8 s the first time, with
# n^2 calls; the rule is at most 8 calls per file, whatever the disk's speed.
begin "linear cost" "run grid_d4 over 600 existing outputs: stat() calls grow with n, not n^2"
mkdir in out
for ((i = 0; i < 600; i++)); do printf '{"train": [{"input": [[1]], "output": [[2]]}], "test": [{"input": [[3]]}]}\n'; done |
  split -l 1 -a 3 -d --additional-suffix=.json - in/t
"$gw" run grid-d4 --op rot90 --device cpu --out-dir out in/*.json > /dev/null 2>&1
with_env LD_PRELOAD="$shim" GW_COUNT_STAT="$work/stats.$cases" run 120 run grid-d4 --op rot90 --device cpu --out-dir out in/*.json
calls=$(sort -n "$work/stats.$cases" 2>/dev/null | tail -n 1)
[ -n "$calls" ] && [ "$calls" -le $((8 * 600)) ] || problems+=" ${calls:-no count of} stat() calls for 600 files;"
expect 0 ""

# ---------------------------------------------------------------- docs that say what the tool does
begin "docs" "docs/errors.md lists the kernels that run names"
run 20 run nope
listed=$(sed -n "s/.*unknown kernel 'nope': kernels are \(.*\)$/\1/p" "$work/err.$cases")
tr '\n' ' ' < "$docs/errors.md" | grep -qF "unknown kernel 'X': kernels are $listed" ||
  problems+=" docs/errors.md does not say \"kernels are $listed\";"
expect 2 "unknown kernel 'nope'"
begin "docs" "run --help names --threads for DESI ex2d; synth --help every option of synth ex2d"
run 20 run --help
sed -n '/gpuwitness run ex2d --psf/,/^  the same on DESI/p' "$work/out.$cases" | grep -qF -- "--threads" ||
  problems+=" run --help's DESI synopsis lacks --threads;"
"$gw" synth --help > "$work/synth.$cases" 2>&1
for option in --psf --fibres --waves --out --seed --clean --bundle-size --wavesize --threads; do
  grep -qF -- "$option" "$work/synth.$cases" || problems+=" synth --help lacks $option;"
done
expect 0 ""

# ---------------------------------------------------------------- summary
hostile_summary gw_hostile
