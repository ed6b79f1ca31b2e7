# SPDX-License-Identifier: MIT
"""grid_objects peer on the GPU: padded batched labelling with cupyx.scipy.ndimage.label, as a CuPy user would.

For each grid_objects case of a `gpuwitness bench --dump-inputs` directory (variant t in o_g numbering:
univalued = t>>2 & 1, diagonal = t>>1 & 1, without_bg = t & 1):
  1. scatter the packed grids into one canvas of T x T tiles, T = the batch's largest side + 1, so a row and a
     column of padding (outside every grid) separate neighbouring grids even for 8-connectivity;
  2. bg per grid from a (n, 256) histogram: the most frequent colour; a tie goes to the smallest tied colour,
     except under bg_tie arc-dsl when at most 4 colours occur, where arc-dsl's mostcolor follows CPython's set
     order: those grids (few) are resolved on the host with Python's own set, inside the timed region;
  3. label the canvas once with cupyx.scipy.ndimage.label (4- or 8-connected) over the cells that are not bg,
     or, univalued, once per colour present;
  4. canonicalise to grid_objects' outputs: each object's label is the row-major index of its first cell
     (scatter-min of the packed index over its cells), objects sorted by first cell with colour (-1 when
     several: scatter-min and -max of the colours), cell count and bounding box (scatter-min and -max of rows
     and columns), n_objects per grid.
Index arrays depend only on the shapes, so they are built before timing. The outputs are checked against the
dumped reference outputs before any time is reported. Timed with CUDA events (peer_util.CudaTimer's method:
warm-up calls, L2 flushed before every repetition). --numpy runs the same steps with NumPy and SciPy on the CPU,
to check them where there is no GPU; its times are not measurements. Exit status 77 (skipped) when CuPy
(NumPy and SciPy with --numpy) is not installed or sees no GPU, with the reason on stderr.
"""
import argparse
import json
import os
import sys
import time

PEER = "cupy_grid_objects"
NO_OBJECT = 0xFFFF


def skip(why):
    print(f"{PEER}: skipped: {why}", file=sys.stderr)
    sys.exit(77)


class Backend:
    """The array module, ndimage and the scatter reductions: CuPy on the GPU, or NumPy and SciPy (--numpy)."""

    def __init__(self, use_numpy):
        import numpy
        if use_numpy:
            from scipy import ndimage
            self.xp, self.ndi = numpy, ndimage
            self.scatter_min = lambda a, i, v: numpy.minimum.at(a, i, v)
            self.scatter_max = lambda a, i, v: numpy.maximum.at(a, i, v)
            self.to_host = lambda a: a
            self.sync = lambda: None
        else:
            import cupy
            import cupyx
            from cupyx.scipy import ndimage
            if cupy.cuda.runtime.getDeviceCount() < 1:
                skip("CuPy sees no CUDA device")
            self.xp, self.ndi = cupy, ndimage
            self.scatter_min, self.scatter_max = cupyx.scatter_min, cupyx.scatter_max
            self.to_host = cupy.asnumpy
            self.sync = cupy.cuda.Device().synchronize


def set_order_bg(flat_host, counts_host):
    """arc-dsl's mostcolor of one grid: max(set(values), key=values.count), with CPython's set."""
    return max(set(flat_host.tolist()), key=lambda c: counts_host[c])


class Case:
    """One dumped case: the index arrays (built once) and the labelling (timed)."""

    def __init__(self, be, cells, height, width, variant, bg_tie):
        xp, np = be.xp, __import__("numpy")
        self.be, self.variant, self.bg_tie = be, variant, bg_tie
        self.n = n = len(height)
        self.cells_host = cells
        sizes = height.astype(np.int64) * width.astype(np.int64)
        starts = np.cumsum(sizes) - sizes
        self.tile = t = int(max(height.max(), width.max())) + 1
        grid = np.repeat(np.arange(n), sizes)
        local = np.arange(len(cells)) - starts[grid]
        row, col = local // width[grid], local % width[grid]
        per_row = int(np.ceil(np.sqrt(n)))  # tiles per canvas row: a square-ish canvas
        self.shape = (((n + per_row - 1) // per_row) * t, per_row * t)
        canvas_pos = ((grid // per_row) * t + row) * self.shape[1] + (grid % per_row) * t + col
        self.grid_starts_host = starts
        dev = lambda a: xp.asarray(a)  # noqa: E731
        self.cells = dev(cells.astype(np.int16))
        self.pos, self.grid, self.row, self.col = dev(canvas_pos), dev(grid), dev(row), dev(col)
        self.local, self.starts = dev(local), dev(starts)
        self.n_cells = len(cells)
        # grids whose tie is broken by set order under arc-dsl: at most 4 distinct colours (found per call)
        self.flat_by_grid = [cells[s:s + z] for s, z in zip(starts.tolist(), sizes.tolist())]
        structure = np.ones((3, 3), dtype=bool) if variant >> 1 & 1 else np.array(
            [[0, 1, 0], [1, 1, 1], [0, 1, 0]], dtype=bool)
        self.structure = xp.asarray(structure)

    def bg(self):
        xp, be = self.be.xp, self.be
        counts = xp.bincount(self.grid * 256 + self.cells, minlength=self.n * 256).reshape(self.n, 256)
        bg = xp.argmax(counts, axis=1).astype(xp.int32)  # the smallest tied colour
        if self.bg_tie == "arc-dsl":
            top = counts.max(axis=1, keepdims=True)
            tied = (counts == top).sum(axis=1) > 1
            few = (counts > 0).sum(axis=1) <= 4
            odd = be.to_host(xp.nonzero(tied & few)[0])
            if len(odd):
                counts_host = be.to_host(counts[xp.asarray(odd)])
                fix = [set_order_bg(self.flat_by_grid[k], counts_host[i]) for i, k in enumerate(odd.tolist())]
                bg[xp.asarray(odd)] = xp.asarray(fix, dtype=xp.int32)
        return bg

    def run(self):
        xp, be = self.be.xp, self.be
        univalued, without_bg = self.variant >> 2 & 1, self.variant & 1
        bg = self.bg() if without_bg else xp.full(self.n, -1, dtype=xp.int32)
        member = self.cells != bg[self.grid]  # cells in some object (all of them without bg)
        comp = xp.zeros(self.n_cells, dtype=xp.int64)
        total = 0
        colours = [None] if not univalued else be.to_host(xp.unique(self.cells)).tolist()
        for colour in colours:
            mask = member if colour is None else member & (self.cells == colour)
            canvas = xp.zeros(self.shape[0] * self.shape[1], dtype=bool)
            canvas[self.pos[mask]] = True
            labels, m = be.ndi.label(canvas.reshape(self.shape), structure=self.structure)
            got = labels.reshape(-1)[self.pos]
            comp = xp.where(mask, got.astype(xp.int64) + total, comp)
            total += int(m)
        # canonical labels: each component's first packed index (= first row-major cell of its grid)
        packed = xp.arange(self.n_cells, dtype=xp.int64)
        first = xp.full(total + 1, self.n_cells, dtype=xp.int64)
        be.scatter_min(first, comp, packed)
        labels = xp.where(comp > 0, first[comp] - self.starts[self.grid], NO_OBJECT).astype(xp.uint16)
        # the table: per component, sorted by first cell
        big = xp.iinfo(xp.int32).max
        lo_c = xp.full(total + 1, big, dtype=xp.int32)
        hi_c = xp.full(total + 1, -1, dtype=xp.int32)
        top, left = xp.full(total + 1, big, dtype=xp.int32), xp.full(total + 1, big, dtype=xp.int32)
        bottom, right = xp.full(total + 1, -1, dtype=xp.int32), xp.full(total + 1, -1, dtype=xp.int32)
        c32, r32, k32 = self.cells.astype(xp.int32), self.row.astype(xp.int32), self.col.astype(xp.int32)
        be.scatter_min(lo_c, comp, c32)
        be.scatter_max(hi_c, comp, c32)
        be.scatter_min(top, comp, r32)
        be.scatter_max(bottom, comp, r32)
        be.scatter_min(left, comp, k32)
        be.scatter_max(right, comp, k32)
        n_cells = xp.bincount(comp, minlength=total + 1)
        order = xp.argsort(first[1:]) + 1
        f = first[order]
        owner = self.grid[f]
        colour = xp.where(lo_c[order] == hi_c[order], lo_c[order], -1)
        objects = xp.stack([(f - self.starts[owner]).astype(xp.int32), colour.astype(xp.int32),
                            n_cells[order].astype(xp.int32), top[order], left[order], bottom[order], right[order]],
                           axis=1)
        n_objects = xp.bincount(owner, minlength=self.n).astype(xp.int32)
        return {"labels": labels, "n_objects": n_objects, "bg": bg.astype(xp.int32),
                "objects": objects.reshape(-1, 7)}


def cupy_timer(reps, warmup):
    """peer_util.CudaTimer's method with CuPy: warm-up calls, then per repetition an L2 flush (a write of twice
    the L2 size) outside the events, CUDA events around the call only; one synchronisation at the end."""
    import cupy
    dev = cupy.cuda.Device()
    l2 = cupy.cuda.runtime.getDeviceProperties(dev.id).get("l2CacheSize", 0)
    flush = cupy.empty(2 * l2 if l2 else 256 << 20, dtype=cupy.uint8)

    def time_it(fn):
        import peer_util
        for _ in range(warmup):
            fn()
        dev.synchronize()
        events = [(cupy.cuda.Event(), cupy.cuda.Event()) for _ in range(reps)]
        for start, stop in events:
            flush.fill(0)
            start.record()
            fn()
            stop.record()
        dev.synchronize()
        return peer_util.stats([cupy.cuda.get_elapsed_time(start, stop) for start, stop in events])
    return time_it


def check(np, case, outputs):
    import peer_util
    for name, ref_file in case["reference"].items():
        want = peer_util.load_npy(os.path.join(case["path"], ref_file))
        got = outputs[name]
        if got.shape != want.shape:
            return f"{name}: shape {got.shape}, reference {want.shape}"
        bad = np.flatnonzero((got != want).ravel())
        if bad.size:
            i = np.unravel_index(int(bad[0]), want.shape)
            return f"{name}: {bad.size} of {want.size} values differ; first at {tuple(int(j) for j in i)}: " \
                   f"{got[i]} vs reference {want[i]}"
    return ""


def main():
    own = argparse.ArgumentParser(add_help=False)
    own.add_argument("--numpy", action="store_true")
    extra, rest = own.parse_known_args()
    sys.argv = sys.argv[:1] + rest
    try:
        import numpy as np
        if extra.numpy:
            import scipy  # noqa: F401
        else:
            import cupy  # noqa: F401
            import cupyx.scipy.ndimage  # noqa: F401
    except ImportError as e:
        skip(f"{e.name or 'a module'} is not installed ({e})")
    import peer_util

    args = peer_util.parse_args(__doc__.splitlines()[0] + " (--numpy: the same on the CPU)")
    be = Backend(extra.numpy)
    timer = None if extra.numpy else cupy_timer(args.reps, args.warmup)
    cases_out = []
    for case in peer_util.load_cases(args.inputs, "grid_objects"):
        cells = peer_util.load_input(case, "cells")
        height, width = peer_util.load_input(case, "height"), peer_util.load_input(case, "width")
        c = Case(be, cells, height, width, int(case["params"]["variant"]), case["params"].get("bg_tie", "arc-dsl"))
        result = c.run()
        be.sync()
        outputs = {k: np.asarray(be.to_host(v)) for k, v in result.items()}
        why = check(np, case, outputs)
        saved = peer_util.save_outputs(args.out, case, outputs)
        if why:
            print(f"{PEER} {case['case']}: WRONG OUTPUT, not timed: {why}", file=sys.stderr)
            cases_out.append({"case": case["case"], "rows": [], "outputs": saved,
                              "error": f"outputs differ from the reference: {why}"})
            continue
        if extra.numpy:
            t0 = time.perf_counter()
            c.run()
            ms = peer_util.stats([(time.perf_counter() - t0) * 1e3])
        else:
            ms = timer(c.run)
        print(f"{PEER} {case['case']}: {ms['median']:.3f} ms (median of {ms['reps']}), outputs equal the reference")
        cases_out.append({"case": case["case"], "rows": [{"variant": "padded canvas, ndimage.label" +
                                                          (" (NumPy on the CPU: not a measurement)" if extra.numpy else ""),
                                                          "time_ms": ms, "compare_with": "gpu_kernel_ms"}],
                          "outputs": saved, "error": None})
    doc = {"schema": peer_util.SCHEMA, "peer": PEER, "kernel": "grid_objects",
           "description": "padded batched labelling with cupyx.scipy.ndimage.label, canonicalised by scatter-min",
           "environment": {"python": sys.version.split()[0], "numpy": np.__version__,
                           "backend": "numpy+scipy (--numpy)" if extra.numpy else "cupy"},
           "method": {"reps": 1 if extra.numpy else args.reps, "warmup": 0 if extra.numpy else args.warmup,
                      "timer": "time.perf_counter (--numpy)" if extra.numpy else "CUDA events around the timed calls",
                      "l2_flush": "none (--numpy)" if extra.numpy else
                      "a write of twice the L2 size before every timed repetition, outside the events"},
           "cases": cases_out}
    path = os.path.join(args.out, PEER + ".json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    print(f"{PEER}: wrote {path}")
    if any(c["error"] for c in cases_out):
        sys.exit(1)


if __name__ == "__main__":
    main()
