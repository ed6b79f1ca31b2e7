# SPDX-License-Identifier: MIT
"""grid_d4 peer: what a PyTorch user would write (docs/grid_d4.md, "PyTorch peer"), on the same GPU and inputs.

For each grid_d4 case of a `gpuwitness bench --dump-inputs` directory:
  1. scatter the packed grids into a zero-padded (n, 30, 30) uint8 tensor;
  2. transform the whole batch with torch.rot90 / torch.flip / transpose, then .contiguous(); per-grid ops
     are split by op with index masks;
  3. crop each result with the corner rule (docs/grid_d4.md, "The corner rule") and gather it into the packed
     output.
Index tensors depend only on the shapes and ops, so they are built before timing. Two timings: (a) the
padded transform alone (step 2 on prebuilt tiles), (b) packed to packed (steps 1-3). Before timing, every
transform must pass the coordinate probe (torch.rot90 turns anticlockwise: arc-dsl rot270). The outputs
(cells, height, width) are written for bench/merge.py, which compares them with our CPU reference.
"""
import sys

import numpy as np

import peer_util

TILE = 30


def transforms(torch):
    """Op code (4*swap + 2*fr + fc) -> a transform of a (m, S, S) batch, as a PyTorch user writes it."""
    return {
        0: lambda x: x,                                      # identity
        1: lambda x: torch.flip(x, (2,)),                    # vmirror: each row reversed
        2: lambda x: torch.flip(x, (1,)),                    # hmirror: row order reversed
        3: lambda x: torch.rot90(x, 2, (1, 2)),              # rot180
        4: lambda x: x.transpose(1, 2),                      # dmirror: transpose
        5: lambda x: torch.rot90(x, 1, (1, 2)),              # rot270: torch's k=1 turns anticlockwise
        6: lambda x: torch.rot90(x, -1, (1, 2)),             # rot90: clockwise
        7: lambda x: torch.rot90(x, 2, (1, 2)).transpose(1, 2),  # cmirror: transpose of rot180
    }


def coordinate_probe(torch, ops):
    """Each transform on a tile holding its own coordinates must give out[i][j] = in[src_row][src_col]."""
    i, j = torch.meshgrid(torch.arange(TILE), torch.arange(TILE), indexing="ij")
    tile = (i * TILE + j).unsqueeze(0)
    for code, fn in ops.items():
        swap, fr, fc = code >> 2 & 1, code >> 1 & 1, code & 1
        r, c = (j, i) if swap else (i, j)
        want = (TILE - 1 - r if fr else r) * TILE + (TILE - 1 - c if fc else c)
        if not torch.equal(fn(tile).contiguous()[0], want):
            sys.exit(f"torch_grid_d4: the transform for op {code} fails the coordinate probe")


def index_tensors(torch, height, width, ops, device):
    """Scatter indices (packed input cell -> tile cell) and gather indices (tile cell -> packed output cell)."""
    h = torch.from_numpy(height.astype(np.int64)).to(device)
    w = torch.from_numpy(width.astype(np.int64)).to(device)
    op = torch.from_numpy(ops.astype(np.int64)).to(device)
    sizes = h * w
    starts = torch.cumsum(sizes, 0) - sizes
    grid = torch.repeat_interleave(torch.arange(len(h), device=device), sizes)
    local = torch.arange(int(sizes.sum()), device=device) - starts[grid]
    base = grid * TILE * TILE
    scatter = base + (local // w[grid]) * TILE + local % w[grid]
    swap, fr, fc = op >> 2 & 1, op >> 1 & 1, op & 1
    oh = torch.where(swap == 1, w, h)
    ow = torch.where(swap == 1, h, w)
    # The corner rule: the transform moved the content to another corner of the S x S tile.
    row0 = torch.where(torch.where(swap == 1, fc, fr) == 1, TILE - oh, 0)
    col0 = torch.where(torch.where(swap == 1, fr, fc) == 1, TILE - ow, 0)
    gather = base + (row0[grid] + local // ow[grid]) * TILE + col0[grid] + local % ow[grid]
    return scatter, gather, oh, ow


def run_case(torch, timer, ops_fn, case, out_dir):
    device = "cuda"
    cells = peer_util.load_input(case, "cells")
    height, width, ops = (peer_util.load_input(case, k) for k in ("height", "width", "ops"))
    if height.max() > TILE or width.max() > TILE:
        return {"case": case["case"], "rows": [], "outputs": {}, "error": "grids larger than 30x30: no padded tile"}
    n = len(height)
    scatter, gather, oh, ow = index_tensors(torch, height, width, ops, device)
    d_cells = torch.from_numpy(cells).to(device)
    codes = np.unique(ops)
    batch_op = int(codes[0]) if len(codes) == 1 else None
    selections = [(int(c), torch.from_numpy(np.nonzero(ops == c)[0]).to(device)) for c in codes]

    def padded_transform(tiles):
        if batch_op is not None:
            return ops_fn[batch_op](tiles).contiguous()
        out = torch.empty_like(tiles)
        for code, rows in selections:
            out[rows] = ops_fn[code](tiles[rows])
        return out

    def packed_to_packed():
        flat = torch.zeros(n * TILE * TILE, dtype=torch.uint8, device=device)
        flat[scatter] = d_cells
        return padded_transform(flat.view(n, TILE, TILE)).reshape(-1)[gather]

    tiles = torch.zeros(n * TILE * TILE, dtype=torch.uint8, device=device)
    tiles[scatter] = d_cells
    tiles = tiles.view(n, TILE, TILE)
    transform_ms, _ = timer.time(lambda: padded_transform(tiles))
    packed_ms, result = timer.time(packed_to_packed)
    outputs = peer_util.save_outputs(out_dir, case, {
        "cells": result.cpu().numpy(),
        "height": oh.cpu().numpy().astype(np.uint16),
        "width": ow.cpu().numpy().astype(np.uint16),
    })
    print(f"torch_grid_d4 {case['case']}: padded transform {transform_ms['median']:.4f} ms, "
          f"packed to packed {packed_ms['median']:.4f} ms (medians of {timer.reps})")
    return {
        "case": case["case"],
        "rows": [  # both against our kernel-only time: our kernel is packed to packed on device data
            {"variant": "padded transform", "time_ms": transform_ms, "compare_with": "gpu_kernel_ms"},
            {"variant": "packed to packed", "time_ms": packed_ms, "compare_with": "gpu_kernel_ms"},
        ],
        "outputs": outputs,
        "error": None,
    }


def main():
    args = peer_util.parse_args(__doc__.splitlines()[0])
    import torch

    if not torch.cuda.is_available():
        sys.exit("torch_grid_d4: PyTorch sees no CUDA device")
    ops_fn = transforms(torch)
    coordinate_probe(torch, ops_fn)
    timer = peer_util.CudaTimer(torch, args.reps, args.warmup)
    cases = [run_case(torch, timer, ops_fn, case, args.out) for case in peer_util.load_cases(args.inputs, "grid_d4")]
    peer_util.write_result(args.out, "torch_grid_d4", "grid_d4",
                           "PyTorch padded 30x30 tiles: scatter, rot90/flip/transpose over the batch, crop",
                           peer_util.environment(torch), args, cases)


if __name__ == "__main__":
    main()
