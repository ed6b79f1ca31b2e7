# SPDX-License-Identifier: MIT
"""grid_objects peer on the CPU: a per-grid scipy.ndimage.label loop, as a NumPy user would write arc-dsl's objects.

For each grid_objects case of a `gpuwitness bench --dump-inputs` directory, and every grid of it, with the
case's variant t (o_g numbering: univalued = t>>2 & 1, diagonal = t>>1 & 1, without_bg = t & 1):
  1. bg: the most frequent colour; a tie goes, under bg_tie arc-dsl, to the first tied colour in the iteration
     order of Python's own set of the grid's values (row-major), exactly as arc-dsl's mostcolor
     (max(set(values), key=values.count)); under bg_tie smallest, to the smallest tied colour;
  2. label with scipy.ndimage.label, structure 4- or 8-connected: the mask of cells that are not bg (or every
     cell with bg), or, univalued, each colour's mask separately;
  3. canonicalise to grid_objects' outputs: each object's label is the row-major index of its first cell
     (-1 / 0xFFFF: no object), objects in order of first cell with colour (-1 when several), cell count and
     bounding box (ndimage.find_objects).
The outputs are checked against the dumped reference outputs before any time is reported (a case that
differs reports the difference and no time), then the whole loop is timed on the host clock (time.perf_counter)
for min(--reps, 3) repetitions after one warm-up: a per-grid Python loop takes seconds per 1e5 grids.
Exit status 77 (skipped) when SciPy is not installed, with the reason on stderr.
"""
import json
import os
import sys
import time

PEER = "scipy_grid_objects"
try:
    import numpy as np
    import scipy
    from scipy import ndimage
except ImportError as e:  # the skip, with the reason: this peer needs NumPy and SciPy, the project does not
    print(f"{PEER}: skipped: {e.name or 'a module'} is not installed ({e})", file=sys.stderr)
    sys.exit(77)

import peer_util  # noqa: E402 (after the skip: it needs NumPy)

NO_OBJECT = 0xFFFF


def most_colour(flat, counts, bg_tie):
    """The grid's bg under bg_tie ("arc-dsl" or "smallest")."""
    if bg_tie == "smallest":
        return int(np.argmax(counts))  # argmax takes the first, i.e. the smallest, tied colour
    return max(set(flat.tolist()), key=lambda c: counts[c])  # arc-dsl's mostcolor, with CPython's set order


def objects_of(grid, variant, bg_tie, structures):
    """One grid: (labels as uint16 row-major, bg, [(first_cell, colour, n_cells, top, left, bottom, right)])."""
    univalued, diagonal, without_bg = variant >> 2 & 1, variant >> 1 & 1, variant & 1
    h, w = grid.shape
    flat = grid.ravel()
    bg = -1
    if without_bg:
        bg = most_colour(flat, np.bincount(flat, minlength=256), bg_tie)
    structure = structures[diagonal]
    components = np.zeros((h, w), dtype=np.int32)
    n = 0
    if univalued:
        for colour in np.unique(flat):
            if colour == bg:
                continue
            lab, m = ndimage.label(grid == colour, structure=structure)
            components[lab > 0] = lab[lab > 0] + n
            n += m
    else:
        mask = grid != bg if without_bg else np.ones((h, w), dtype=bool)
        components, n = ndimage.label(mask, structure=structure)
    comp = components.ravel()
    labels = np.full(h * w, NO_OBJECT, dtype=np.uint16)
    records = []
    if n:
        ids, first = np.unique(comp, return_index=True)  # first: the row-major index of each label's first cell
        keep = ids > 0
        ids, first = ids[keep], first[keep]
        first_of = np.zeros(n + 1, dtype=np.int64)
        first_of[ids] = first
        inside = comp > 0
        labels[inside] = first_of[comp[inside]]
        boxes = ndimage.find_objects(components)
        sizes = np.bincount(comp, minlength=n + 1)
        low = ndimage.minimum(grid, components, ids)  # an object has one colour when its min equals its max
        high = ndimage.maximum(grid, components, ids)
        for i in np.argsort(first):
            label = int(ids[i])
            rows, cols = boxes[label - 1]
            colour = int(low[i]) if low[i] == high[i] else -1
            records.append((int(first[i]), colour, int(sizes[label]), rows.start, cols.start, rows.stop - 1,
                            cols.stop - 1))
    return labels, bg, records


def run_all(cells, height, width, variants, bg_tie, structures):
    """Every grid, packed outputs as the dump has them."""
    labels = np.empty(len(cells), dtype=np.uint16)
    n_objects = np.empty(len(height), dtype=np.int32)
    bg = np.empty(len(height), dtype=np.int32)
    records = []
    at = 0
    for k in range(len(height)):
        h, w = int(height[k]), int(width[k])
        grid = cells[at:at + h * w].reshape(h, w)
        lab, bg[k], rec = objects_of(grid, int(variants[k]), bg_tie, structures)
        labels[at:at + h * w] = lab
        n_objects[k] = len(rec)
        records.extend(rec)
        at += h * w
    objects = np.array(records, dtype=np.int32).reshape(-1, 7)
    return {"labels": labels, "n_objects": n_objects, "bg": bg, "objects": objects}


def check(case, outputs):
    """'' when every output equals the dumped reference, else the first difference."""
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


def run_case(structures, case, args, reps):
    cells = peer_util.load_input(case, "cells")
    height, width, variants = (peer_util.load_input(case, k) for k in ("height", "width", "variants"))
    bg_tie = case["params"].get("bg_tie", "arc-dsl")
    fn = lambda: run_all(cells, height, width, variants, bg_tie, structures)  # noqa: E731
    outputs = fn()  # the warm-up call, and the outputs checked before any time is taken
    why = check(case, outputs)
    if why:
        print(f"{PEER} {case['case']}: WRONG OUTPUT, not timed: {why}", file=sys.stderr)
        return {"case": case["case"], "rows": [], "outputs": peer_util.save_outputs(args.out, case, outputs),
                "error": f"outputs differ from the reference: {why}"}
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    ms = peer_util.stats(times)
    print(f"{PEER} {case['case']}: {ms['median']:.2f} ms (median of {reps}), outputs equal the reference")
    return {"case": case["case"],
            "rows": [{"variant": "per-grid scipy.ndimage.label loop (CPU, 1 thread)", "time_ms": ms,
                      "compare_with": "gpu_kernel_ms"}],
            "outputs": peer_util.save_outputs(args.out, case, outputs), "error": None}


def main():
    args = peer_util.parse_args(__doc__.splitlines()[0])
    structures = {0: ndimage.generate_binary_structure(2, 1), 1: np.ones((3, 3), dtype=bool)}
    reps = min(args.reps, 3)
    cases = [run_case(structures, c, args, reps) for c in peer_util.load_cases(args.inputs, "grid_objects")]
    doc = {
        "schema": peer_util.SCHEMA, "peer": PEER, "kernel": "grid_objects",
        "description": "per-grid scipy.ndimage.label loop on the CPU (what a NumPy user writes), canonicalised",
        "environment": {"python": sys.version.split()[0], "numpy": np.__version__, "scipy": scipy.__version__},
        "method": {"reps": reps, "warmup": 1, "timer": "time.perf_counter around the whole loop over the grids",
                   "l2_flush": "none (CPU)"},
        "cases": cases,
    }
    path = os.path.join(args.out, PEER + ".json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    print(f"{PEER}: wrote {path}")
    if any(c["error"] for c in cases):
        sys.exit(1)


if __name__ == "__main__":
    main()
