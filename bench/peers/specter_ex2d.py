# SPDX-License-Identifier: MIT
"""ex2d peer: specter's own extraction (desihub/specter, specter.extract.ex2d) of a DESI image, compared with a frame
written by `gpuwitness run ex2d --psf PSF.fits --image IMAGE.fits --out FRAME.fits`.

    python3 bench/peers/specter_ex2d.py --psf PSF.fits --image IMAGE.fits --frame FRAME.fits \
        [--fibres F:C] [--waves W0:W1:DW] [--bundle-size 25] [--nsubbundles 5] [--wavesize 50] \
        [--regularize R] [--max-pull S] [--max-ivar-rel X] [--json OUT.json]
    python3 bench/peers/specter_ex2d.py --self-test DIR      # specter alone, on an image it makes itself

It runs specter on the same image, fibres and wavelengths the way desispec's extraction does
(desispec/scripts/extract.py, `--use-specter`): one `ex2d(image, ivar * ((mask & extractmaskval) == 0), psf,
bspecmin, bnspec, wave, regularize=R, ndecorr=False, bundlesize=25, nsubbundles=5, wavesize=50,
full_output=True, psferr=None, pixpad_frac=0.8, wavepad_frac=0.2)` per bundle of 25 fibres (bundles aligned to
multiples of --bundle-size in fibre number, partial at the ends of F:C), extractmaskval = desispec's ccdmask
BAD|HOT|DEAD|SATURATED|COSMIC|PIXFLATZERO|PIXFLATLOW|HIGHVAR|BADAMP = 0x2ff. The decomposition is specter's:
subbundles from `split_bundle` of the (partial) bundle, padded by one neighbour inside it, a wavelength pad
computed from the PSF and a pixel box padded by pixpad_frac = 0.8 of a spot; ours follows gpu_specter (full box,
wavepad 12 bins), so the two differ by a little more than two FP64 solvers do.

Units: specter's ex2d already returns electron/Angstrom (flux /= np.gradient(wave), ivar *= np.gradient(wave)**2
at its end; desispec writes that unchanged with BUNIT = electron/Angstrom), the same units as our FLUX and IVAR.

Fibres and wavelengths: --fibres F:C (F = the PSF's fibre number, FIBERMIN..FIBERMAX of its header; specter's
spectrum index is F - FIBERMIN) and --waves W0:W1:DW (wave = np.arange(W0, W1 + DW/2, DW), desispec's grid); by
default SPECMIN and NSPEC from the frame's FLUX (or primary) header and the frame's WAVELENGTH HDU. When both
are given they must agree.

Reports (stdout: a human summary, then one JSON line; --json FILE writes the same document): the largest and
the median |flux_ours - flux_specter| * sqrt(ivar_specter) over all bins with ivar_specter > 0 (in sigma), the
largest |ivar_ours - ivar_specter| / ivar_specter, the largest |R_ours - R_specter| over the diagonals both
frames hold, and specter's wall time (host clock, after an untimed warm-up call that compiles its numba code).
Exit status: 0 done (and within --max-pull / --max-ivar-rel when given), 1 a limit exceeded or a failure,
2 bad options or files, 77 skipped: specter or one of NumPy, SciPy, Astropy, numba is not importable
(reason on stderr).

Installing specter: from source, not from PyPI (`pip install specter` is not how DESI gets it: DESI installs
it from its git repository, and this peer was checked with a checkout of it). It needs Python >= 3.10, NumPy,
SciPy, Astropy and numba (setup.cfg also lists fitsio, which the extraction does not import):
    git clone https://github.com/desihub/specter && pip install ./specter
or, without installing anything into Python (what was used here, with Debian's packages):
    apt-get install python3-numpy python3-scipy python3-astropy python3-numba
    git clone https://github.com/desihub/specter /tmp/specter
    PYTHONPATH=/tmp/specter/py /usr/bin/python3 bench/peers/specter_ex2d.py ...
CI does not install specter, so this peer and its CTest report Skipped there.

--self-test DIR: projects a known spectrum of fibres 0-4, 6000-6100 A in 0.8 A bins, through the PSF with
specter's psf.project (no noise, ivar = 1/(9 + model)), writes DIR/image.fits (IMAGE, IVAR, MASK) and
DIR/truth-frame.fits (FLUX = R·truth / DW from specter's own resolution data, IVAR 0), and runs the comparison
above on them: the pulls are specter's flux against the truth. Needs the PSF (--psf, default
$GW_DATA_DIR/desi/psf-gausshermite.fits).
"""
import argparse
import json
import os
import platform
import sys
import time

PEER = "specter_ex2d"
SCHEMA = "gpuwitness-frame-peer/1"
INSTALL = ("specter is not installed: pip cannot install it from PyPI; install it from source: "
           "git clone https://github.com/desihub/specter && pip install ./specter, or put its py/ directory "
           "on PYTHONPATH (PYTHONPATH=/path/to/specter/py); it needs NumPy, SciPy, Astropy and numba "
           "(Debian: apt-get install python3-numpy python3-scipy python3-astropy python3-numba)")
# desispec.maskbits.extractmaskval: ccdmask BAD|HOT|DEAD|SATURATED|COSMIC|PIXFLATZERO|PIXFLATLOW|HIGHVAR|BADAMP.
EXTRACTMASKVAL = 0x2FF


def skip_unless_importable():
    """Exit 77 with the reason unless NumPy, SciPy, Astropy, numba and specter all import."""
    for mod, why in (("numpy", "NumPy"), ("scipy", "SciPy"), ("astropy", "Astropy"), ("numba", "numba")):
        try:
            __import__(mod)
        except ImportError as e:
            print(f"{PEER}: skipped: {why} is not installed ({e}); specter needs NumPy, SciPy, Astropy and numba. "
                  + INSTALL, file=sys.stderr)
            sys.exit(77)
    try:
        import specter.psf  # noqa: F401
        import specter.extract  # noqa: F401
    except ImportError as e:
        print(f"{PEER}: skipped: {e}. " + INSTALL, file=sys.stderr)
        sys.exit(77)


def usage_error(msg):
    print(f"{PEER}: {msg}", file=sys.stderr)
    sys.exit(2)


def parse_pair(text, opt):
    try:
        first, count = (int(v) for v in text.split(":"))
    except ValueError:
        usage_error(f"{opt} '{text}': must be FIRST:COUNT")
    if first < 0 or count < 1:
        usage_error(f"{opt} '{text}': must be FIRST:COUNT with FIRST >= 0 and COUNT >= 1")
    return first, count


def parse_waves(text):
    import numpy as np

    try:
        w0, w1, dw = (float(v) for v in text.split(":"))
    except ValueError:
        usage_error(f"--waves '{text}': must be W0:W1:DW")
    if not (dw > 0 and w1 >= w0):
        usage_error(f"--waves '{text}': must have DW > 0 and W1 >= W0")
    return np.arange(w0, w1 + dw / 2, dw)


def read_image(path):
    """IMAGE, IVAR and MASK of a DESI preprocessed image, as desispec reads them for extraction."""
    import numpy as np
    from astropy.io import fits

    with fits.open(path, memmap=False) as hdul:
        names = [h.name for h in hdul]
        for need in ("IMAGE", "IVAR"):
            if need not in names:
                usage_error(f"{path}: no {need} HDU (HDUs: {', '.join(names)})")
        image = np.asarray(hdul["IMAGE"].data, dtype=np.float64)
        ivar = np.asarray(hdul["IVAR"].data, dtype=np.float64)
        mask = np.asarray(hdul["MASK"].data, dtype=np.int64) if "MASK" in names else np.zeros(image.shape, np.int64)
    if image.shape != ivar.shape or image.shape != mask.shape:
        usage_error(f"{path}: IMAGE {image.shape}, IVAR {ivar.shape} and MASK {mask.shape} differ in shape")
    return image, ivar * ((mask & EXTRACTMASKVAL) == 0)


def read_frame(path):
    import numpy as np
    from astropy.io import fits

    with fits.open(path, memmap=False) as hdul:
        names = [h.name for h in hdul]
        for need in ("FLUX", "IVAR", "WAVELENGTH"):
            if need not in names:
                usage_error(f"{path}: no {need} HDU (HDUs: {', '.join(names)})")
        frame = {k.lower(): np.asarray(hdul[k].data, dtype=np.float64)
                 for k in ("FLUX", "IVAR", "WAVELENGTH", "RESOLUTION", "CHI2PIX") if k in names}
        for key in ("SPECMIN", "NSPEC"):
            for h in (hdul["FLUX"].header, hdul[0].header):
                if key in h:
                    frame[key.lower()] = int(h[key])
                    break
        frame["bunit"] = hdul["FLUX"].header.get("BUNIT")
    return frame


def psf_fibermin(path):
    """FIBERMIN of the PSF file (HDU 1, else 0), 0 without one."""
    from astropy.io import fits

    with fits.open(path) as hdul:
        for h in hdul[1:2] + hdul[0:1]:
            if "FIBERMIN" in h.header:
                return int(h.header["FIBERMIN"])
    return 0


def run_specter(psf, image, ivar, fibre0, nfibre, wave, args):
    """desispec's loop: one ex2d call per bundle (aligned to multiples of bundle_size in fibre number)."""
    import numpy as np
    from specter.extract import ex2d

    fibermin = args.fibre_offset
    fibres = np.arange(fibre0, fibre0 + nfibre)
    out = {"flux": [], "ivar": [], "resolution": [], "chi2pix": []}
    calls = []
    for b in sorted(set(fibres // args.bundle_size)):
        lo = max(fibre0, b * args.bundle_size)
        hi = min(fibre0 + nfibre, (b + 1) * args.bundle_size)
        res = ex2d(image, ivar, psf, lo - fibermin, hi - lo, wave, regularize=args.regularize, ndecorr=False,
                   bundlesize=args.bundle_size, wavesize=args.wavesize, verbose=False, full_output=True,
                   nsubbundles=min(args.nsubbundles, hi - lo), psferr=args.psferr,
                   wavepad_frac=args.wavepad_frac, pixpad_frac=args.pixpad_frac)
        calls.append([int(lo), int(hi - lo)])
        out["flux"].append(res["flux"])
        out["ivar"].append(res["ivar"])
        out["resolution"].append(res["resolution_data"])
        out["chi2pix"].append(res["chi2pix"])
    nd = max(r.shape[1] for r in out["resolution"])
    # Bundles can differ in ndiag (specter sizes it from the PSF per call): centre them in the widest.
    res = np.zeros((nfibre, nd, len(wave)))
    row = 0
    for r in out["resolution"]:
        off = (nd - r.shape[1]) // 2
        res[row:row + r.shape[0], off:off + r.shape[1]] = r
        row += r.shape[0]
    return {"flux": np.concatenate(out["flux"]), "ivar": np.concatenate(out["ivar"]), "resolution": res,
            "chi2pix": np.concatenate(out["chi2pix"]), "calls": calls}


def compare(frame, spec):
    """The numbers of the report: pulls against specter's ivar, relative ivar, R on the common diagonals."""
    import numpy as np

    f_o, iv_o, f_s, iv_s = frame["flux"], frame["ivar"], spec["flux"], spec["ivar"]
    ok = np.isfinite(f_o) & np.isfinite(f_s) & np.isfinite(iv_s) & (iv_s > 0)
    pull = np.abs(f_o - f_s)[ok] * np.sqrt(iv_s[ok])
    c = {"bins": int(f_s.size), "bins_compared": int(ok.sum()),
         "bins_ivar_specter_zero": int((iv_s == 0).sum()), "bins_nonfinite_ours": int((~np.isfinite(f_o)).sum())}
    if pull.size:
        worst = np.unravel_index(np.argmax(np.where(ok, np.abs(f_o - f_s) * np.sqrt(np.where(ok, iv_s, 0)), -1)),
                                 f_s.shape)
        c.update({"flux_pull_max": float(pull.max()), "flux_pull_median": float(np.median(pull)),
                  "flux_pull_max_at": [int(worst[0]), int(worst[1])]})
    else:
        c.update({"flux_pull_max": None, "flux_pull_median": None, "flux_pull_max_at": None})
    has_ivar = bool(np.any(iv_o > 0))
    both = ok & np.isfinite(iv_o)
    if has_ivar and both.any():
        rel = np.abs(iv_o - iv_s)[both] / iv_s[both]
        c["ivar_rel_max"] = float(rel.max())
        c["ivar_rel_median"] = float(np.median(rel))
    else:
        c["ivar_rel_max"] = c["ivar_rel_median"] = None  # the frame holds no ivar (--self-test's truth frame)
    c["bins_ivar_zero_mismatch"] = int(((iv_o > 0) != (iv_s > 0)).sum()) if has_ivar else None
    r_o, r_s = frame.get("resolution"), spec["resolution"]
    if r_o is not None and r_o.ndim == 3 and r_o.shape[0] == r_s.shape[0] and r_o.shape[2] == r_s.shape[2]:
        h = min(r_o.shape[1], r_s.shape[1]) // 2
        a = r_o[:, r_o.shape[1] // 2 - h:r_o.shape[1] // 2 + h + 1]
        b = r_s[:, r_s.shape[1] // 2 - h:r_s.shape[1] // 2 + h + 1]
        c["resolution_ndiag_ours"] = r_o.shape[1] // 2
        c["resolution_ndiag_specter"] = r_s.shape[1] // 2
        c["resolution_max_abs"] = float(np.nanmax(np.abs(a - b)))
    else:
        c["resolution_max_abs"] = None
    return c


def environment():
    import astropy
    import numba
    import numpy as np
    import scipy
    import specter

    return {"python": sys.version.split()[0], "numpy": np.__version__, "scipy": scipy.__version__,
            "astropy": astropy.__version__, "numba": numba.__version__,
            "specter": getattr(specter, "__version__", "unknown"),
            "specter_path": os.path.dirname(specter.__file__), "cpu": platform.processor() or platform.machine(),
            "cpu_count": os.cpu_count()}


def self_test_files(args):
    """Writes DIR/image.fits (specter's projection of a known spectrum) and DIR/truth-frame.fits."""
    import numpy as np
    from astropy.io import fits
    import specter.psf

    psf = specter.psf.load_psf(args.psf)
    dw, fibre0, nfibre = 0.8, 0, 5
    wave = np.arange(6000.0, 6100.0 + dw / 2, dw)
    npad = 60  # truth continues 48 A beyond both ends, so every pixel the extraction sees is modelled
    wext = wave[0] + dw * np.arange(-npad, len(wave) + npad)
    s = np.arange(nfibre)[:, None]
    truth = 300.0 * (1 + 0.1 * s) * (1 + 0.3 * np.sin(2 * np.pi * wext / 37.0)) \
        + 2000.0 * np.exp(-0.5 * ((wext - 6040.0 - 7 * s) / 1.2) ** 2)  # electrons per bin
    model = psf.project(wext, truth, specmin=fibre0)
    ivar = 1.0 / (9.0 + model)
    os.makedirs(args.self_test, exist_ok=True)
    image_path = os.path.join(args.self_test, "image.fits")
    fits.HDUList([fits.PrimaryHDU(), fits.ImageHDU(model, name="IMAGE"), fits.ImageHDU(ivar, name="IVAR"),
                  fits.ImageHDU(np.zeros(model.shape, np.int32), name="MASK")]).writeto(image_path, overwrite=True)
    return psf, image_path, wave, wext, truth, npad


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--psf", help="the PSF (specter's load_psf; DESI GAUSS-HERMITE)")
    ap.add_argument("--image", help="DESI preprocessed image: HDUs IMAGE, IVAR, MASK")
    ap.add_argument("--frame", help="our frame: HDUs FLUX, IVAR, WAVELENGTH[, RESOLUTION]")
    ap.add_argument("--fibres", help="F:C, default SPECMIN and NSPEC of the frame")
    ap.add_argument("--waves", help="W0:W1:DW, default the frame's WAVELENGTH")
    ap.add_argument("--bundle-size", type=int, default=25)
    ap.add_argument("--nsubbundles", type=int, default=5)
    ap.add_argument("--wavesize", type=int, default=50)
    ap.add_argument("--regularize", type=float, default=0.0)
    ap.add_argument("--psferr", type=float, default=None, help="chi2pix only (default: the PSF's, else 0.01)")
    ap.add_argument("--pixpad-frac", type=float, default=0.8)
    ap.add_argument("--wavepad-frac", type=float, default=0.2)
    ap.add_argument("--max-pull", type=float, help="exit 1 when the largest flux pull exceeds this (sigma)")
    ap.add_argument("--max-ivar-rel", type=float, help="exit 1 when the largest relative ivar difference exceeds this")
    ap.add_argument("--json", help="also write the JSON document here")
    ap.add_argument("--self-test", metavar="DIR", help="specter against a known truth, files written in DIR")
    args = ap.parse_args()
    if args.bundle_size < 1 or args.nsubbundles < 1 or args.wavesize < 1:
        usage_error("--bundle-size, --nsubbundles and --wavesize must be at least 1")
    if args.self_test and not args.psf and os.environ.get("GW_DATA_DIR"):
        args.psf = os.path.join(os.environ["GW_DATA_DIR"], "desi", "psf-gausshermite.fits")
    if not args.psf or not (args.self_test or (args.image and args.frame)):
        usage_error("needs --psf PSF.fits --image IMAGE.fits --frame FRAME.fits, or --self-test DIR [--psf PSF.fits]")
    for path in (args.psf, args.image, args.frame):
        if path and not args.self_test and not os.path.isfile(path):
            usage_error(f"'{path}': no such file")

    skip_unless_importable()
    import numpy as np
    import specter.psf
    from specter.extract import ex2d

    if args.self_test:
        psf, image_path, wave, wext, truth, npad = self_test_files(args)
        fibre0, nfibre = 0, truth.shape[0]
        frame = None
    else:
        psf = specter.psf.load_psf(args.psf)
        image_path = args.image
        frame = read_frame(args.frame)
        fibre0, nfibre = frame.get("specmin"), frame.get("nspec")
        if args.fibres:
            f0, nf = parse_pair(args.fibres, "--fibres")
            if fibre0 is not None and (f0, nf) != (fibre0, nfibre):
                usage_error(f"--fibres {args.fibres} but the frame says SPECMIN {fibre0}, NSPEC {nfibre}")
            fibre0, nfibre = f0, nf
        if fibre0 is None or nfibre is None:
            usage_error(f"{args.frame}: no SPECMIN/NSPEC keywords: give --fibres F:C")
        wave = frame["wavelength"]
        if args.waves:
            w = parse_waves(args.waves)
            if w.shape != wave.shape or not np.allclose(w, wave, rtol=0, atol=1e-6):
                usage_error(f"--waves {args.waves} ({len(w)} bins) differs from the frame's WAVELENGTH "
                            f"({len(wave)} bins, {wave[0]}..{wave[-1]})")
            wave = w
        if frame["flux"].shape != (nfibre, len(wave)):
            usage_error(f"{args.frame}: FLUX is {frame['flux'].shape}, expected ({nfibre}, {len(wave)})")

    # F:C in the PSF's fibre numbers (FIBERMIN..FIBERMAX) when they fall there, else as spectrum indices
    # 0..nspec-1 of the PSF (desispec's --specmin); specter's index is F minus the offset.
    fibermin = psf_fibermin(args.psf)
    if fibermin > 0 and fibre0 >= fibermin and fibre0 - fibermin + nfibre <= psf.nspec:
        args.fibre_offset = fibermin
    elif fibre0 + nfibre <= psf.nspec:
        args.fibre_offset = 0
    else:
        usage_error(f"fibres {fibre0}..{fibre0 + nfibre - 1} are outside the PSF's {psf.nspec} spectra "
                    f"(FIBERMIN {fibermin})")
    fibermin = args.fibre_offset
    image, ivar = read_image(image_path)
    if image.shape != (psf.npix_y, psf.npix_x):
        usage_error(f"{image_path}: IMAGE is {image.shape}, the PSF's CCD is ({psf.npix_y}, {psf.npix_x})")

    # Warm-up (untimed): one fibre, a few bins, so numba's compilation is not in the timing.
    t0 = time.perf_counter()
    ex2d(image, ivar, psf, fibre0 - fibermin, 1, wave[:min(len(wave), 5)], bundlesize=1, nsubbundles=1,
         wavesize=5, full_output=True)
    warmup_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    spec = run_specter(psf, image, ivar, fibre0, nfibre, wave, args)
    wall_s = time.perf_counter() - t0

    if args.self_test:
        # The truth frame: R·truth from specter's own Rdiags (column c of R holds rows c-ndiag..c+ndiag).
        rd = spec["resolution"]
        nd = rd.shape[1] // 2
        # (R t)[r] = sum_d R[r, c] t[c], c = r + nd - d, R[r, c] = rd[d, c] (dia storage: column c, row c-nd+d).
        rt = np.zeros((nfibre, len(wave)))
        for d in range(2 * nd + 1):
            c = np.arange(len(wave)) + nd - d
            inside = (c >= 0) & (c < len(wave))
            rt[:, inside] += rd[:, d, c[inside]] * truth[:, npad + c[inside]]
        # The first and last nd bins' rows of R reach columns outside the grid, which Rdiags does not hold:
        # NaN there, so only the interior is compared.
        from astropy.io import fits
        frame = {"flux": rt / (wave[1] - wave[0]), "ivar": np.zeros_like(rt), "wavelength": wave}
        frame["flux"][:, :nd] = np.nan
        frame["flux"][:, len(wave) - nd:] = np.nan
        hdr = fits.Header({"SPECMIN": fibre0, "NSPEC": nfibre, "BUNIT": "electron/Angstrom"})
        fits.HDUList([fits.PrimaryHDU(), fits.ImageHDU(frame["flux"], header=hdr, name="FLUX"),
                      fits.ImageHDU(frame["ivar"], name="IVAR"), fits.ImageHDU(wave, name="WAVELENGTH")]).writeto(
            os.path.join(args.self_test, "truth-frame.fits"), overwrite=True)
        frame = read_frame(os.path.join(args.self_test, "truth-frame.fits"))

    c = compare(frame, spec)
    failed = []
    if args.max_pull is not None and (c["flux_pull_max"] is None or c["flux_pull_max"] > args.max_pull):
        failed.append(f"flux pull {c['flux_pull_max']} > --max-pull {args.max_pull}")
    if args.max_ivar_rel is not None and (c["ivar_rel_max"] is None or c["ivar_rel_max"] > args.max_ivar_rel):
        failed.append(f"relative ivar difference {c['ivar_rel_max']} > --max-ivar-rel {args.max_ivar_rel}")
    # Bins left out of the pulls must not hide a broken frame.
    if c["bins_nonfinite_ours"]:
        failed.append(f"{c['bins_nonfinite_ours']} bins of the frame's flux are not finite")
    if not args.self_test and c.get("bins_ivar_zero_mismatch"):
        failed.append(f"{c['bins_ivar_zero_mismatch']} bins have ivar 0 on one side only")
    what = "specter vs the truth R·f (--self-test)" if args.self_test else "ours vs specter"
    doc = {"schema": SCHEMA, "peer": PEER, "kernel": "ex2d_patch",
           "description": "specter.extract.ex2d (desihub/specter, CPU, NumPy/SciPy/numba) on the same image, "
                          "fibres and wavelengths, called per bundle as desispec does",
           "environment": environment(),
           "inputs": {"psf": args.psf, "image": image_path, "frame": None if args.self_test else args.frame,
                      "self_test": bool(args.self_test), "fibres": [int(fibre0), int(nfibre)],
                      "waves": [float(wave[0]), float(wave[-1]), float(wave[1] - wave[0]) if len(wave) > 1 else 0.0],
                      "nwave": int(len(wave)), "frame_bunit": frame.get("bunit")},
           "method": {"bundle_size": args.bundle_size, "nsubbundles": args.nsubbundles, "wavesize": args.wavesize,
                      "regularize": args.regularize, "psferr": args.psferr, "pixpad_frac": args.pixpad_frac,
                      "wavepad_frac": args.wavepad_frac, "ndecorr": False,
                      "specter_spectrum_index": f"fibre - {args.fibre_offset}", "extractmaskval": EXTRACTMASKVAL,
                      "ex2d_calls": spec["calls"],
                      "timer": "time.perf_counter around the per-bundle ex2d calls, after one untimed warm-up call"},
           "timing": {"wall_s": wall_s, "warmup_s": warmup_s},
           "comparison": dict(c, what=what),
           "failed": failed}
    fmt = lambda v, f: "n/a" if v is None else format(v, f)  # noqa: E731
    print(f"{PEER}: {what}: fibres {fibre0}..{fibre0 + nfibre - 1}, {len(wave)} bins "
          f"{wave[0]:.2f}..{wave[-1]:.2f} A; specter {wall_s:.2f} s wall ({len(spec['calls'])} ex2d call(s), "
          f"warm-up {warmup_s:.2f} s)")
    print(f"{PEER}: flux |diff|*sqrt(ivar_specter): max {fmt(c['flux_pull_max'], '.3g')} sigma at "
          f"{c['flux_pull_max_at']}, median {fmt(c['flux_pull_median'], '.3g')} sigma over {c['bins_compared']} bins; "
          f"ivar relative: max {fmt(c['ivar_rel_max'], '.3g')}; R max |diff| {fmt(c['resolution_max_abs'], '.3g')}")
    for f in failed:
        print(f"{PEER}: FAILED: {f}", file=sys.stderr)
    line = json.dumps(doc)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            f.write(line + "\n")
    print(line)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
