#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# CTest peer_specter_ex2d: our extraction of a DESI image against specter's own (bench/peers/specter_ex2d.py).
#
#   gw_peer_specter.sh GPUWITNESS DATA_DIR WORK_DIR
#
# DATA_DIR is the shared data folder (the one holding desi/psf-gausshermite.fits); "-" means $GW_DATA_DIR, and
# without either the test is Skipped (exit 77), as the other data tests are.
# 1. Exit 77 (Skipped) at once unless specter and NumPy, SciPy, Astropy, numba import in $GW_PYTHON
#    (default Debian's /usr/bin/python3); specter is not installed in CI, so CI reports Skipped, never Passed.
#    Locally: PYTHONPATH=/path/to/specter/py (a clone of github.com/desihub/specter).
# 2. gpuwitness synth ex2d --clean: a noiseless DESI preprocessed image of fibres 0-4, 6000-6100 A in 0.8 A bins,
#    through DATA_DIR/desi/psf-gausshermite.fits.
# 3. gpuwitness run ex2d on it (--device $GW_PEER_DEVICE, default cpu) into a frame.
# 4. The peer: specter on the same image, fibres and wavelengths; fails when the largest flux pull
#    |flux_ours - flux_specter|·sqrt(ivar_specter) exceeds $GW_PEER_MAX_PULL sigma (default 0.01) or the largest
#    relative ivar difference exceeds $GW_PEER_MAX_IVAR_REL (default 1e-3). specter against itself with another
#    decomposition (nsubbundles 1, pixpad_frac 1, wavepad_frac 0.5, wavesize 30) differs by at most 5.4e-4 sigma
#    and 8.6e-7 in ivar on such an image, so the limits leave room for the decompositions and nothing more.
set -u
PEER_NAME=peer_specter_ex2d
if [ $# -ne 3 ]; then
  echo "usage: $0 GPUWITNESS DATA_DIR WORK_DIR" >&2
  exit 2
fi
GW=$1
DATA=$2
[ "$DATA" = - ] && DATA=${GW_DATA_DIR:-}
WORK=$3
PY=${GW_PYTHON:-/usr/bin/python3}
HERE=$(cd "$(dirname "$0")" && pwd)
PEER=$HERE/../../bench/peers/specter_ex2d.py

# 1. First, before any work: can specter run here?
if ! command -v "$PY" >/dev/null 2>&1; then
  echo "$PEER_NAME: skipped: no Python at $PY (set GW_PYTHON)" >&2
  exit 77
fi
if ! why=$("$PY" -c 'import numpy, scipy, astropy, numba, specter.psf, specter.extract' 2>&1); then
  echo "$PEER_NAME: skipped: specter cannot be imported by $PY: $(printf '%s' "$why" | tail -n 1)" >&2
  echo "$PEER_NAME: specter is not on PyPI under a usable name; install it from source: git clone" \
    "https://github.com/desihub/specter && pip install ./specter, or set PYTHONPATH=/path/to/specter/py;" \
    "it needs python3-numpy python3-scipy python3-astropy python3-numba" >&2
  exit 77
fi

if [ -z "$DATA" ]; then
  echo "$PEER_NAME: skipped: GW_DATA_DIR is not set: this test needs desi/psf-gausshermite.fits of the shared data" >&2
  exit 77
fi
PSF=$DATA/desi/psf-gausshermite.fits
if [ ! -f "$PSF" ]; then
  echo "$PEER_NAME: FAILED: no PSF at $PSF (DATA_DIR must be the shared data folder)" >&2
  exit 1
fi
rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
FIBRES=0:5
WAVES=6000:6100:0.8

run() {
  echo "+ $*"
  "$@"
  rc=$?
  if [ $rc -ne 0 ]; then
    echo "$PEER_NAME: FAILED: exit $rc from: $*" >&2
    exit 1
  fi
}
# 2. A noiseless image; 3. our frame; 4. the peer.
run "$GW" synth ex2d --psf "$PSF" --fibres $FIBRES --waves $WAVES --seed 1 --clean --out "$WORK/image.fits"
run "$GW" run ex2d --device "${GW_PEER_DEVICE:-cpu}" --psf "$PSF" --image "$WORK/image.fits" --fibres $FIBRES \
  --waves $WAVES --out "$WORK/frame.fits"
"$PY" "$PEER" --psf "$PSF" --image "$WORK/image.fits" --frame "$WORK/frame.fits" --fibres $FIBRES --waves $WAVES \
  --max-pull "${GW_PEER_MAX_PULL:-0.01}" --max-ivar-rel "${GW_PEER_MAX_IVAR_REL:-1e-3}" --json "$WORK/peer.json"
rc=$?
if [ $rc -eq 77 ]; then
  exit 77
elif [ $rc -ne 0 ]; then
  echo "$PEER_NAME: FAILED: the peer exited $rc (report above, $WORK/peer.json)" >&2
  exit 1
fi
echo "$PEER_NAME: ok"
