#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# usage: gw_hostile_desi.sh GPUWITNESS STOP_SHIM WORKDIR HOSTILE_FITS
# The hostile-input suite's DESI cases (docs/testing.md, "Hostile input"): `run ex2d` and `synth ex2d` on real
# files, the real PSF of $GW_DATA_DIR/desi and images written by HOSTILE_FITS (tests/hostile/gw_hostile_fits.c)
# at its CCD size, each case under gw_hostile.sh's rules (gw_hostile_lib.sh). Without GW_DATA_DIR: Skipped
# (77), or a failure where CI is set or GW_REQUIRE_GPU=1 (docs/testing.md, "Data sets").
psf_src=${GW_DATA_DIR:+$GW_DATA_DIR/desi/psf-gausshermite.fits}
if [ -z "$psf_src" ] || [ ! -f "$psf_src" ]; then
  why="GW_DATA_DIR${GW_DATA_DIR:+/desi/psf-gausshermite.fits} is not set or not there: these cases need the real DESI PSF at \$GW_DATA_DIR/desi/psf-gausshermite.fits"
  ci=${CI:-}
  if { [ -n "$ci" ] && [ "$ci" != false ]; } || [ "${GW_REQUIRE_GPU:-}" = 1 ]; then echo "FAIL $why" >&2; exit 1; fi
  echo "gw_hostile_desi: skipped: $why" >&2
  exit 77
fi
. "$(dirname "$0")/gw_hostile_lib.sh"
fits=$(cd "$(dirname "$4")" && pwd)/$(basename "$4")
nx=4114 ny=4128 # the real PSF's CCD (NPIX_X, NPIX_Y): an image must be its size
cp "$psf_src" "$work/psf.fits"
# the extraction every case runs: 5 fibres over 61 bins, 2 patches, a window at rows 196..434
ex2d=(--fibres 0:5 --waves 5700:5760:1)
"$gw" synth ex2d --psf "$work/psf.fits" "${ex2d[@]}" --out "$work/image.fits" > /dev/null 2>&1 ||
  { echo "FAIL could not synthesise the base image" >&2; exit 1; }
run_ex2d() { run "$1" run ex2d --device cpu --psf "${psf:-psf.fits}" --image "${image:-image.fits}" "${ex2d[@]}" --out "$2"; }

# ---------------------------------------------------------------- 1. an output is never an input (real files)
begin "output is an input" "run ex2d --out names the real --image: the image stays"
cp "$work/psf.fits" "$work/image.fits" .
run_ex2d 60 image.fits
expect 2 "--out 'image.fits' is the input file --image 'image.fits'"
begin "output is an input" "synth ex2d --out names the real --psf: the PSF stays"
cp "$work/psf.fits" .
run 60 synth ex2d --psf psf.fits "${ex2d[@]}" --out psf.fits
expect 2 "--out 'psf.fits' is the input file --psf 'psf.fits'"

# ---------------------------------------------------------------- 3. a run whose every patch fails is a failure
begin "every patch fails" "an image whose every pixel is masked"
cp "$work/psf.fits" .; "$fits" image-masked-rows image.fits $nx $ny 0 $ny
run_ex2d 120 frame.fits
expect 1 "every patch failed (2)|no bin has information|nothing written"
begin "every patch fails" "an image of 1.7e308 everywhere: the sums overflow, and --out is not blamed"
cp "$work/psf.fits" .; "$fits" image-from image.fits $nx $ny 1.7e308
run_ex2d 120 frame.fits
refute "flux is|--out:"
expect 1 "every patch failed (2)|results are not finite|1.7e+308"
begin "every patch fails" "a PSF whose spots are all zero (every GH term and the tail)"
"$fits" psf-scale "$work/psf.fits" gh0.fits 'GH-*' 0 && "$fits" psf-scale gh0.fits psf.fits TAILAMP 0 && rm gh0.fits
cp "$work/image.fits" .
run_ex2d 120 frame.fits
expect 1 "--psf psf.fits: the PSF's spots are not finite|sums to 0|nothing written"

# ---------------------------------------------------------------- 4-5. undefined and masked pixels
begin "undefined pixels" "an int32 IMAGE with BLANK: its BLANK pixels are masked"
cp "$work/psf.fits" .; blanks=$("$fits" image-int-blank image.fits $nx $ny)
run_ex2d 120 frame.fits
grep -qF "$blanks masked pixels" "$work/out.$cases" || problems+=" stdout does not count the $blanks BLANK pixels as masked;"
expect 0 "" frame.fits
begin "undefined pixels" "two HDUs named IMAGE"
cp "$work/psf.fits" .; "$fits" image-dup-hdu image.fits $nx $ny
run_ex2d 120 frame.fits
expect 1 "both named 'IMAGE'|nothing written"
begin "masked bins" "rows 300..330 masked: every bin that sees no unmasked pixel has IVAR 0"
cp "$work/psf.fits" .; "$fits" image-masked-rows image.fits $nx $ny 300 331
run_ex2d 120 frame.fits
counts=$("$fits" frame-masked-ivar frame.fits 2>&1)
case $counts in
  "ALLBADPIX 0 "*) problems+=" no bin is ALLBADPIX: the band masks nothing whole ($counts);" ;;
  *"IVAR_NONZERO 0") ;;
  *) problems+=" bins without an unmasked pixel keep IVAR ($counts);" ;;
esac
expect 0 "" frame.fits

# ---------------------------------------------------------------- 9-10. the right limit, the right blame
begin "wavelength grid" "--waves 1e300:2e300:1e299: outside the PSF's domain, said so"
cp "$work/psf.fits" "$work/image.fits" .
run 60 run ex2d --device cpu --psf psf.fits --image image.fits --fibres 0:5 --waves 1e300:2e300:1e299 --out f.fits
refute "must be finite"
expect 2 "must lie inside the PSF's wavelength domain"
begin "messages" "a damaged tile-compressed header is named, not \"missing\""
cp "$work/psf.fits" .; "$fits" image-corrupt-zheader image.fits $nx $ny
run_ex2d 120 frame.fits
refute "missing"
expect 1 "corrupt tile-compressed image header|nothing written"
begin "messages" "bytes appended to the PSF are named, not \"truncated\""
cp "$work/image.fits" .; "$fits" psf-append "$work/psf.fits" psf.fits 100
run_ex2d 60 frame.fits
refute "truncated"
expect 1 "100 bytes after the last HDU|nothing written"
begin "messages" "a PSF whose CCD exceeds the image limit: refused as the PSF is read"
cp "$work/image.fits" .; "$fits" psf-set "$work/psf.fits" psf.fits 1 NPIX_X 100000
run_ex2d 20 frame.fits
expect 1 "NPIX_X|GW_DESI_MAX_PIXELS|nothing written"
begin "messages" "a PSF whose widths are 1e-300 of the real ones: synth blames --psf, not --out"
"$fits" psf-scale "$work/psf.fits" psf.fits GHSIGX 1e-300
run 60 synth ex2d --psf psf.fits "${ex2d[@]}" --out image.fits
refute "--out:"
expect 1 "--psf psf.fits: the PSF's spots are not finite|nothing written"

# ---------------------------------------------------------------- 6. no reader hangs
begin "hangs" "an image whose GZIP tile is cut short (cfitsio 4.2 loops for ever on it)"
cp "$work/psf.fits" .; "$fits" image-gzip-cut image.fits $nx $ny
run_ex2d 20 frame.fits
expect 1 "HDU 'IMAGE': tile 3: its GZIP data|a damaged tile|nothing written"

# ---------------------------------------------------------------- 12. time follows the bytes
begin "time follows the bytes" "a MASK tile-compressed in one-column tiles (41-76 s before the fix)"
cp "$work/psf.fits" .; "$fits" image-column-tiles image.fits $nx $ny
SECONDS=0; run_ex2d 20 frame.fits; took=$SECONDS
expect 0 "" frame.fits

# ---------------------------------------------------------------- summary
hostile_summary gw_hostile_desi
