# SPDX-License-Identifier: MIT
"""ex2d_patch peer: CuPy following gpu_specter's batched GPU path, same GPU and inputs.

What it follows and why: docs/ex2d_patch.md, "Performance model and targets".

For each ex2d_patch case of a `gpuwitness bench --dump-inputs` directory, patches are grouped by shape
(nspecpad, core_first, ncore) and run in batches (--batch, default 47: one subbundle, gpu_specter's batched
subbundle); per batch, all on the device and batched over patches:
  1. the dense projection A[pixel][bin] of every patch from the dumped K1 spots and corners (gpu_specter's
     projection matrix), pixel boxes padded to the batch's largest with zero-weight rows;
  2. iCov = A^T W A and y = A^T W p through cuBLAS (cupy.matmul), fluxweight = A^T w, regularised as K3;
  3. xflux from the batched Cholesky solve cupyx.lapack.posv (CuPy PR 4291);
  4. C = iCov^-1, the full inverse (batched cupy.linalg.inv: cupyx.lapack.posv takes one right-hand side
     per matrix in a batch), as gpu_specter's decorrelation forms C from the whole iCov, then the core
     spectra's diagonal blocks C_bb;
  5. Q_b = C_bb^(-1/2) from a batched eigendecomposition (cupy.linalg.eigh on the stacked blocks: syevj,
     CuPy PR 3488), eigenvalues clipped at 1e-14 max as gpu_specter's clipped_eigh;
  6. R = diag(1/rowsum Q) Q, ivar = rowsum^2, flux = R xflux, Rdiags; stitched into the frame arrays.
The dumped spots are inputs here, so the peer's time leaves out K1 that ours includes; the comparison is in
favour of the peer. Timed with CUDA events after the warm-up calls, L2 flushed between repetitions. Writes
flux, ivar and rdiags for bench/merge.py, which checks them with the tolerances of docs/ex2d_patch.md,
"Numerics and tolerances".

--numpy runs the same math on the CPU with NumPy in place of CuPy (no timing meaning; for checking the math
on a machine without a GPU).
"""
import argparse
import json
import os
import sys
import time

import numpy as np

import peer_util

PEER = "cupy_ex2d"
# ex2d_patch_desc field order (kernels/ex2d_patch/ex2d_patch.h).
(SPEC_FIRST, NSPECPAD, CORE_FIRST, NCORE, WAVE_FIRST, NCORE_WAVE, OUT_SPEC_FIRST, OUT_WAVE_FIRST,
 XMIN, XMAX, YMIN, YMAX) = range(12)


class Backend:
    """The array module and the dense solvers: CuPy on the GPU, or NumPy for --numpy."""

    def __init__(self, use_numpy):
        if use_numpy:
            self.xp = np
            self.posv = lambda a, b: np.linalg.solve(a, b[..., None])[..., 0]
        else:
            import cupy
            import cupyx.lapack

            self.xp = cupy
            # posv may overwrite its arguments: it gets copies, so every repetition starts from the same data.
            self.posv = lambda a, b: cupyx.lapack.posv(a.copy(), b.copy())
        self.inv = self.xp.linalg.inv


def groups_of(patches, batch):
    """Patch indices grouped by (nspecpad, core_first, ncore), each group cut into batches."""
    keys = {}
    for i, d in enumerate(patches):
        keys.setdefault((int(d[NSPECPAD]), int(d[CORE_FIRST]), int(d[NCORE])), []).append(i)
    out = []
    for key, idx in keys.items():
        for k in range(0, len(idx), batch):
            out.append((key, np.array(idx[k:k + batch], dtype=np.int64)))
    return out


def extract_batch(be, dev, geom, idx, key):
    """Steps 1-6 for the patches idx of one shape; returns (flux, ivar, rdiags) per patch core, as
    [B][ncore][nwavestep] and [B][ncore][nd][nwavestep]."""
    xp = be.xp
    nspecpad, core_first, ncore = key
    m, wavepad, ndiag, ny, nx = geom["m"], geom["wavepad"], geom["ndiag"], geom["ny"], geom["nx"]
    n = nspecpad * m
    p = dev["patches"][idx]
    nb = len(idx)
    box_w = p[:, XMAX] - p[:, XMIN]
    box_h = p[:, YMAX] - p[:, YMIN]
    npix = int((box_w * box_h).max())
    # 1. Projection: bin k = s*m + w of patch b is table entry (spec_first + s)*nwave_tab + wave_first + w.
    s = xp.arange(nspecpad)[:, None]
    w = xp.arange(m)[None, :]
    entry = ((p[:, SPEC_FIRST, None, None] + s[None]) * geom["nwave_tab"] + p[:, WAVE_FIRST, None, None] + w[None])
    entry = entry.reshape(nb, n)
    x0 = dev["xc"][entry] - p[:, XMIN, None]
    y0 = dev["yc"][entry] - p[:, YMIN, None]
    iy = xp.arange(ny)[:, None]
    ix = xp.arange(nx)[None, :]
    row = (y0[:, :, None, None] + iy) * box_w[:, None, None, None] + x0[:, :, None, None] + ix
    a = xp.zeros((nb, npix, n))
    bidx = xp.arange(nb)[:, None, None, None]
    kidx = xp.arange(n)[None, :, None, None]
    a[bidx, row, kidx] = dev["spots"][entry]
    # Pixel weights and values in box raster order; padding rows weigh 0.
    q = xp.arange(npix)[None, :]
    inside = q < (box_w * box_h)[:, None]
    qq = xp.where(inside, q, 0)
    pix = (p[:, YMIN, None] + qq // box_w[:, None]) * geom["npix_x"] + p[:, XMIN, None] + qq % box_w[:, None]
    wgt = xp.where(inside, dev["ivar"][pix], 0.0)
    img = xp.where(inside, dev["image"][pix], 0.0)
    # 2. Normal equations through cuBLAS, then K3's regularisation.
    aw = a * wgt[:, :, None]
    at_w = xp.swapaxes(aw, 1, 2)
    icov = xp.matmul(at_w, a)
    y = xp.matmul(at_w, img[:, :, None])[:, :, 0]
    fluxweight = aw.sum(axis=1)
    minweight = 1e-4 * fluxweight.max(axis=1, keepdims=True)
    alpha = xp.where(fluxweight < minweight, minweight - fluxweight, geom["regularize"])
    diag = xp.arange(n)
    icov[:, diag, diag] += alpha * alpha + 1e-15
    # 3., 4. Batched Cholesky solves: xflux, and the full inverse C.
    xflux = be.posv(icov, y)
    cov = be.inv(icov)
    # 5. The core blocks' inverse square roots from one batched eigh.
    cb = xp.stack([cov[:, (core_first + c) * m:(core_first + c + 1) * m, (core_first + c) * m:(core_first + c + 1) * m]
                   for c in range(ncore)], axis=1).reshape(nb * ncore, m, m)
    u, v = xp.linalg.eigh(cb)
    u = xp.maximum(u, 1e-14 * u.max(axis=1, keepdims=True))
    qb = xp.matmul(v * (1.0 / xp.sqrt(u))[:, None, :], xp.swapaxes(v, 1, 2))
    # 6. R, ivar, flux, Rdiags of the core bins.
    rowsum = qb.sum(axis=2)
    r = qb / rowsum[:, :, None]
    xb = xp.stack([xflux[:, (core_first + c) * m:(core_first + c + 1) * m] for c in range(ncore)],
                  axis=1).reshape(nb * ncore, m)
    flux = xp.matmul(r, xb[:, :, None])[:, :, 0]
    ivar = rowsum * rowsum
    core = xp.arange(wavepad, m - wavepad)
    nd = 2 * ndiag + 1
    rows = core[None, :] - ndiag + xp.arange(nd)[:, None]
    valid = (rows >= 0) & (rows < m)
    rdiags = xp.where(valid[None], r[:, xp.clip(rows, 0, m - 1), core[None, :]], 0.0)
    nstep = m - 2 * wavepad
    core_bins = slice(wavepad, m - wavepad)
    return (flux[:, core_bins].reshape(nb, ncore, nstep), ivar[:, core_bins].reshape(nb, ncore, nstep),
            rdiags.reshape(nb, ncore, nd, nstep))


def run_case(be, timer, case, args):
    xp = be.xp
    params = case["params"]
    host = {k: peer_util.load_input(case, k) for k in ("image", "ivar", "spots", "xc", "yc", "patches")}
    geom = {"m": params["m"], "wavepad": params["wavepad"], "ndiag": params["ndiag"],
            "regularize": params["regularize"], "ny": host["spots"].shape[1], "nx": host["spots"].shape[2],
            "nwave_tab": host["xc"].shape[1], "npix_x": host["image"].shape[1]}
    ref_flux = peer_util.load_npy(os.path.join(case["path"], case["reference"]["flux"]))
    nspec_out, nwave_out = ref_flux.shape
    nd = 2 * geom["ndiag"] + 1
    # Resident inputs, flattened as the kernels index them; int64 indices for fancy indexing.
    dev = {"image": xp.asarray(host["image"].reshape(-1)), "ivar": xp.asarray(host["ivar"].reshape(-1)),
           "spots": xp.asarray(host["spots"]), "xc": xp.asarray(host["xc"].reshape(-1).astype(np.int64)),
           "yc": xp.asarray(host["yc"].reshape(-1).astype(np.int64)),
           "patches": xp.asarray(host["patches"].astype(np.int64))}
    patches = host["patches"]
    nstep = geom["m"] - 2 * geom["wavepad"]
    # Stitching indices, from the patch table alone (before timing): core (c, j) of batch slot b, j < ncore_wave,
    # goes to frame element (out_spec_first + c, out_wave_first + j).
    batches = []
    for key, idx in groups_of(patches, args.batch):
        d = patches[idx].astype(np.int64)
        b, c, j = np.meshgrid(np.arange(len(idx)), np.arange(key[2]), np.arange(nstep), indexing="ij")
        keep = j < d[b, NCORE_WAVE]
        spec, wave = d[b, OUT_SPEC_FIRST] + c, d[b, OUT_WAVE_FIRST] + j
        src = ((b * key[2] + c) * nstep + j)[keep]
        dst = (spec * nwave_out + wave)[keep]
        # rdiags: [B][ncore][nd][nstep] into [nspec_out][nd][nwave_out], every diagonal.
        dd = np.arange(nd)[:, None]
        src_rd = (((b * key[2] + c)[keep] * nd + dd) * nstep + j[keep]).reshape(-1)
        dst_rd = ((spec[keep] * nd + dd) * nwave_out + wave[keep]).reshape(-1)
        batches.append((key, xp.asarray(idx), xp.asarray(src), xp.asarray(dst), xp.asarray(src_rd),
                        xp.asarray(dst_rd)))

    def extract():
        flux = xp.zeros(nspec_out * nwave_out)
        ivar = xp.zeros(nspec_out * nwave_out)
        rdiags = xp.zeros(nspec_out * nd * nwave_out)
        for key, idx, src, dst, src_rd, dst_rd in batches:
            f, iv, rd = extract_batch(be, dev, geom, idx, key)
            flux[dst] = f.reshape(-1)[src]
            ivar[dst] = iv.reshape(-1)[src]
            rdiags[dst_rd] = rd.reshape(-1)[src_rd]
        return flux.reshape(nspec_out, nwave_out), ivar.reshape(nspec_out, nwave_out), \
            rdiags.reshape(nspec_out, nd, nwave_out)

    time_ms, (flux, ivar, rdiags) = timer.time(extract)
    to_host = (lambda a: a) if xp is np else (lambda a: a.get())
    outputs = peer_util.save_outputs(args.out, case, {"flux": to_host(flux), "ivar": to_host(ivar),
                                                      "rdiags": to_host(rdiags)})
    print(f"{PEER} {case['case']}: {len(patches)} patches in {len(batches)} batches, {time_ms['median']:.3f} ms "
          f"(median of {time_ms['reps']})")
    return {"case": case["case"],
            "rows": [{"variant": "dense A^T W A + posv + eigh, batch %d" % args.batch, "time_ms": time_ms,
                      "compare_with": "gpu_kernel_ms"}],
            "outputs": outputs, "error": None}


class CupyTimer:
    """peer_util.CudaTimer's method with CuPy events: warm-up, L2 flush outside the events, one per rep."""

    def __init__(self, cupy, reps, warmup):
        self.cupy, self.reps, self.warmup = cupy, reps, warmup
        l2 = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id).get("l2CacheSize", 0)
        # Without the L2 size, 256 MiB is more than twice any current L2 (as peer_util.CudaTimer).
        self.flush = cupy.empty(2 * l2 if l2 else 256 << 20, dtype=cupy.uint8)

    def time(self, fn):
        cupy = self.cupy
        for _ in range(self.warmup):
            fn()
        cupy.cuda.Device().synchronize()
        events = [(cupy.cuda.Event(), cupy.cuda.Event()) for _ in range(self.reps)]
        result = None
        for start, stop in events:
            self.flush.fill(0)
            start.record()
            result = fn()
            stop.record()
        cupy.cuda.Device().synchronize()
        return peer_util.stats([cupy.cuda.get_elapsed_time(a, b) for a, b in events]), result


class HostTimer:
    """--numpy: wall-clock times, only so that the same code path runs; not a measurement."""

    def __init__(self, reps, warmup):
        self.reps, self.warmup = reps, warmup

    def time(self, fn):
        times, result = [], None
        for _ in range(self.reps):
            t0 = time.perf_counter()
            result = fn()
            times.append((time.perf_counter() - t0) * 1e3)
        return peer_util.stats(times), result


def main():
    # This peer's own options; peer_util.parse_args takes the common ones.
    own = argparse.ArgumentParser(add_help=False)
    own.add_argument("--numpy", action="store_true")
    own.add_argument("--batch", type=int, default=47)
    extra, rest = own.parse_known_args()
    sys.argv = sys.argv[:1] + rest
    args = peer_util.parse_args(__doc__.splitlines()[0] + " (own options: --batch N, --numpy)")
    args.batch = extra.batch
    numpy_mode = extra.numpy
    if args.batch < 1:
        sys.exit(f"{PEER}: --batch must be at least 1")
    be = Backend(numpy_mode)
    if numpy_mode:
        timer = HostTimer(args.reps, args.warmup)
        env = {"python": sys.version.split()[0], "numpy": np.__version__, "backend": "numpy (--numpy: CPU check)"}
    else:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < 1:
            sys.exit(f"{PEER}: CuPy sees no CUDA device")
        timer = CupyTimer(cupy, args.reps, args.warmup)
        props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
        env = {"python": sys.version.split()[0], "numpy": np.__version__, "cupy": cupy.__version__,
               "cuda_runtime": cupy.cuda.runtime.runtimeGetVersion(), "gpu": props["name"].decode()}
    cases = [run_case(be, timer, case, args) for case in peer_util.load_cases(args.inputs, "ex2d_patch")]
    doc = {"schema": peer_util.SCHEMA, "peer": PEER, "kernel": "ex2d_patch",
           "description": "CuPy, gpu_specter's batched path: dense A^T W A (cuBLAS), batched posv, full inverse, "
                          "batched eigh of the core blocks",
           "environment": env,
           "method": {"reps": args.reps, "warmup": args.warmup, "batch": args.batch,
                      "timer": "wall clock (--numpy)" if numpy_mode else "cupy.cuda.Event around the timed calls",
                      "l2_flush": "none (--numpy)" if numpy_mode else
                      "fill(0) of twice the L2 size before every timed repetition, outside the events"},
           "cases": cases}
    path = os.path.join(args.out, PEER + ".json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    print(f"{PEER}: wrote {path}")


if __name__ == "__main__":
    main()
