#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the generated seeds of tests/fuzz/corpus/<harness>/ (standard library only, deterministic).

Seeds are small valid inputs of every form each reader accepts, plus one of each kind it must refuse, so the
fuzzer starts deep inside the parsers. Files are (re)written under their own names; other files in the
corpus (crash reproducers) are left alone.
Usage: python3 tests/fuzz/make_seed_corpus.py
"""
import pathlib
import struct
import zlib

CORPUS = pathlib.Path(__file__).resolve().parent / "corpus"
TESTS = CORPUS.parent.parent


def put(harness, name, data):
    d = CORPUS / harness
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data)


# ---------------------------------------------------------------- ARC JSON
def arc_seeds():
    # small tasks of the shapes real ones have (made here: no third-party task is copied into the corpus)
    put("arc", "task_3x3_two_pairs.json",
        b'{"train": [{"input": [[6, 6, 6], [1, 6, 1], [8, 8, 6]], "output": [[6, 8, 8], [1, 6, 1], [6, 6, 6]]}, '
        b'{"input": [[6, 8, 1], [6, 1, 1], [1, 1, 6]], "output": [[6, 1, 1], [1, 1, 6], [1, 8, 6]]}], '
        b'"test": [{"input": [[1, 1, 8], [1, 6, 6], [6, 8, 8]], "output": [[8, 8, 6], [6, 6, 1], [8, 1, 1]]}]}\n')
    put("arc", "task_2x6_to_6x2.json",
        b'{"train": [{"input": [[3, 3, 3, 3, 3, 3], [9, 9, 9, 9, 9, 9]], "output": [[3, 9], [9, 3], [3, 9], '
        b'[9, 3], [3, 9], [9, 3]]}], "test": [{"input": [[4, 4, 4, 4, 4, 4], [5, 5, 5, 5, 5, 5]], "output": '
        b'[[4, 5], [5, 4], [4, 5], [5, 4], [4, 5], [5, 4]]}]}\n')
    put("arc", "task_1x1_and_3x3.json",
        b'{"train": [{"input": [[0, 2, 0], [2, 0, 0], [0, 0, 2]], "output": [[3]]}, {"input": [[0, 0, 0], '
        b'[0, 0, 0], [0, 0, 0]], "output": [[0]]}], "test": [{"input": [[2, 2, 0], [0, 0, 0], [0, 0, 2]]}]}\n')
    put("arc", "d4_2x3.json", (TESTS / "grid_d4/d4_2x3.json").read_bytes())
    put("arc", "test_with_output_and_extra_key.json",
        b'{"name": "x", "train": [{"input": [[0]], "output": [[9, 9]]}],\n "test": [{"input": [[1.0]], '
        b'"output": [[2]]}]}\n')
    put("arc", "bad_truncated.json", (TESTS / "grid_d4/truncated.json").read_bytes())
    put("arc", "bad_value.json", (TESTS / "grid_d4/bad_value.json").read_bytes())
    put("arc", "bad_ragged.json", b'{"train": [{"input": [[1, 2], [3]], "output": [[1]]}], "test": [{"input": [[1]]}]}')
    put("arc", "bad_duplicate_key.json",
        b'{"train": [{"input": [[1]], "output": [[1]], "output": [[2]]}], "test": [{"input": [[1]]}]}')
    put("arc", "bad_not_integer.json",
        b'{"train": [{"input": [[1.5]], "output": [[1]]}], "test": [{"input": [[1e999]]}]}')


# ---------------------------------------------------------------- .npy
def npy(header, data, major=1, minor=0, pad=True):
    pre = 10 if major == 1 else 12
    text = header.encode()
    if pad:
        text += b"\n"
        text = text[:-1] + b" " * ((64 - (pre + len(text)) % 64) % 64) + b"\n"
    length = struct.pack("<H", len(text)) if major == 1 else struct.pack("<I", len(text))
    return b"\x93NUMPY" + bytes([major, minor]) + length + text + data


def npy_seeds():
    u2 = struct.pack("<24H", *range(24))
    put("npy", "u2_v1_2x3x4.npy", npy("{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3, 4), }", u2))
    put("npy", "u1_v2_5.npy", npy("{'descr': '|u1', 'fortran_order': False, 'shape': (5,), }", bytes(range(5)), 2))
    put("npy", "f4_v3_1x2x2x2.npy",
        npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 2, 2), }", struct.pack("<8f", *range(8)), 3))
    put("npy", "u2_big_endian.npy",
        npy("{'descr': '>u2', 'fortran_order': False, 'shape': (2, 2, 2), }", struct.pack(">8H", *range(8))))
    put("npy", "u2_python2_style.npy",
        npy('{"shape": (1L, 2L, 3L), "fortran_order": False, "descr": "<u2"}', struct.pack("<6H", *range(6))))
    put("npy", "bad_fortran_order.npy", npy("{'descr': '<u2', 'fortran_order': True, 'shape': (2, 2, 2), }", u2[:16]))
    put("npy", "bad_dtype_f8.npy", npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", bytes(16)))
    put("npy", "bad_structured.npy",
        npy("{'descr': [('a', '<u2')], 'fortran_order': False, 'shape': (2,), }", bytes(4)))
    put("npy", "bad_truncated.npy", npy("{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3, 4), }", u2[:20]))
    put("npy", "bad_zero_dim.npy", npy("{'descr': '<u2', 'fortran_order': False, 'shape': (0, 3, 4), }", b""))


# ---------------------------------------------------------------- TIFF
SHORT, LONG, ASCII, LONG8 = 3, 4, 2, 16


def tiff(pages, big_endian=False, bigtiff=False):
    """pages: list of dicts with width, height, chunks (encoded strips or tiles, in order), and optional
    bits, spp, fmt, photometric, compression, rows_per_strip, tile, predictor, description."""
    e = ">" if big_endian else "<"
    out = bytearray((b"MM" if big_endian else b"II") + struct.pack(e + "H", 43 if bigtiff else 42))
    if bigtiff:
        out += struct.pack(e + "HHQ", 8, 0, 0)
        next_at = 8
    else:
        out += struct.pack(e + "I", 0)
        next_at = 4
    off_fmt, cnt_fmt = ("Q", "Q") if bigtiff else ("I", "I")
    for p in pages:
        offsets = []
        for chunk in p["chunks"]:
            offsets.append(len(out))
            out += chunk
        counts = [len(c) for c in p["chunks"]]
        entries = {
            256: (LONG, [p["width"]]), 257: (LONG, [p["height"]]),
            258: (SHORT, [p.get("bits", 16)] * p.get("spp", 1)), 259: (SHORT, [p.get("compression", 1)]),
            262: (SHORT, [p.get("photometric", 1)]), 277: (SHORT, [p.get("spp", 1)]), 284: (SHORT, [1]),
            339: (SHORT, [p.get("fmt", 1)] * p.get("spp", 1)),
        }
        if len(pages) > 1:
            entries[254] = (LONG, [2])
        if p.get("predictor"):
            entries[317] = (SHORT, [p["predictor"]])
        if p.get("description"):
            entries[270] = (ASCII, p["description"].encode() + b"\0")
        if p.get("tile"):
            entries[322] = (LONG, [p["tile"]])
            entries[323] = (LONG, [p["tile"]])
            entries[324] = (LONG8 if bigtiff else LONG, offsets)
            entries[325] = (LONG8 if bigtiff else LONG, counts)
        else:
            entries[273] = (LONG8 if bigtiff else LONG, offsets)
            entries[278] = (LONG, [p.get("rows_per_strip", p["height"])])
            entries[279] = (LONG8 if bigtiff else LONG, counts)
        inline = 8 if bigtiff else 4
        packed = {}
        for tag, (typ, values) in entries.items():
            if typ == ASCII:
                raw = bytes(values)
                n = len(raw)
            else:
                raw = b"".join(struct.pack(e + {SHORT: "H", LONG: "I", LONG8: "Q"}[typ], v) for v in values)
                n = len(values)
            if len(raw) > inline:  # out of line, before the IFD
                if len(out) % 2:
                    out += b"\0"
                at = len(out)
                out += raw
                raw = struct.pack(e + off_fmt, at)
            packed[tag] = (typ, n, raw.ljust(inline, b"\0"))
        if len(out) % 2:
            out += b"\0"
        ifd = len(out)
        struct.pack_into(e + off_fmt, out, next_at, ifd)
        out += struct.pack(e + ("Q" if bigtiff else "H"), len(packed))
        for tag in sorted(packed):
            typ, n, raw = packed[tag]
            out += struct.pack(e + "HH" + cnt_fmt, tag, typ, n) + raw
        next_at = len(out)
        out += struct.pack(e + off_fmt, 0)
    return bytes(out)


def pixels(width, height, page, e="<", bits=16):
    code = {8: "B", 16: "H", 32: "f"}[bits]
    vals = [((page * 20011 + y * 257 + x * 131) & (0xFF if bits == 8 else 0xFFFF)) for y in range(height)
            for x in range(width)]
    return struct.pack(e + code * len(vals), *vals)


def strips(width, height, page, rows, e="<"):
    data = pixels(width, height, page, e)
    row_bytes = width * 2
    return [data[y * row_bytes:(y + rows) * row_bytes] for y in range(0, height, rows)]


def packbits(data):
    out = bytearray()
    for at in range(0, len(data), 128):  # literal runs only: valid PackBits, easy to check by eye
        chunk = data[at:at + 128]
        out += bytes([len(chunk) - 1]) + chunk
    return bytes(out)


def tiff_seeds():
    def page(w, h, p, rows=None, e="<", **kw):
        rows = rows or h
        return dict(width=w, height=h, rows_per_strip=rows, chunks=strips(w, h, p, rows, e), **kw)

    put("tiff", "one_page_3x5.tif", tiff([page(3, 5, 0)]))
    put("tiff", "three_pages_big_endian_strips.tif", tiff([page(4, 6, p, 2, ">") for p in range(3)], big_endian=True))
    put("tiff", "bigtiff_two_pages.tif", tiff([page(3, 3, p) for p in range(2)], bigtiff=True))
    tile = 16
    tiles = []
    for tx in (0, 16):
        vals = [((y * 257 + (tx + x) * 131) & 0xFFFF) for y in range(tile) for x in range(tile)]
        tiles.append(struct.pack("<%dH" % len(vals), *vals))
    put("tiff", "tiled_17x16.tif", tiff([dict(width=17, height=16, tile=tile, chunks=tiles)]))
    put("tiff", "deflate_8x8.tif",
        tiff([dict(width=8, height=8, compression=8, chunks=[zlib.compress(pixels(8, 8, 0))])]))
    rows = []
    for y in range(6):  # horizontal predictor: each sample minus its left neighbour, mod 2^16
        row = [((y * 257 + x * 131) & 0xFFFF) for x in range(6)]
        rows += [row[0]] + [(row[x] - row[x - 1]) & 0xFFFF for x in range(1, 6)]
    put("tiff", "deflate_predictor_6x6.tif", tiff([dict(width=6, height=6, compression=8, predictor=2,
                                                         chunks=[zlib.compress(struct.pack("<36H", *rows))])]))
    put("tiff", "packbits_4x4.tif", tiff([dict(width=4, height=4, compression=32773,
                                               chunks=[packbits(pixels(4, 4, 0))])]))
    put("tiff", "imagej_stack.tif", tiff([page(3, 2, p, description="ImageJ=1.54f\nimages=2\nslices=2\n")
                                          for p in range(2)]))
    put("tiff", "bad_8_bit.tif", tiff([dict(width=4, height=2, bits=8, chunks=[pixels(4, 2, 0, bits=8)])]))
    put("tiff", "bad_float.tif", tiff([dict(width=2, height=2, bits=32, fmt=3, chunks=[pixels(2, 2, 0, bits=32)])]))
    put("tiff", "bad_rgb.tif", tiff([dict(width=2, height=2, spp=3, photometric=2, chunks=[bytes(24)])]))
    put("tiff", "bad_min_is_white.tif", tiff([page(2, 2, 0, photometric=0)]))
    put("tiff", "bad_page_sizes_differ.tif", tiff([page(3, 3, 0), page(3, 2, 1)]))
    put("tiff", "bad_imagej_contiguous.tif", tiff([page(3, 2, 0, description="ImageJ=1.54f\nimages=4\nslices=4\n")]))
    put("tiff", "bad_imagej_hyperstack.tif", tiff([page(3, 2, p, description="ImageJ=1.54f\nimages=2\nchannels=2\n")
                                                   for p in range(2)]))
    # Two strips, the second cut short. (With one strip libtiff repairs a short StripByteCounts by
    # estimating it from the image size, with only a warning, and the read succeeds.)
    cut = strips(4, 4, 0, 2)
    put("tiff", "bad_short_strip.tif", tiff([dict(width=4, height=4, rows_per_strip=2, chunks=[cut[0], cut[1][:10]])]))


# ---------------------------------------------------------------- grid_d4 (fuzz_grid_d4.c's encoding)
def grid_d4_batch(grids, buf_bytes, batch_op=0, with_ops=True, arena=None, null=0xFF):
    """grids: (offset, height, width, op); arena: 8 byte offsets of in, out, offset, height, width,
    out_height, out_width, ops inside one allocation, or None for separate allocations."""
    control = (1 if with_ops else 0) | (2 if arena else 0)
    out = bytearray([control, null, len(grids), batch_op & 0xFF])
    out += bytes([0]) + struct.pack("<H", buf_bytes) if buf_bytes < 65536 else bytes([0xF0]) + struct.pack(
        "<Q", buf_bytes)
    for offset, height, width, op in grids:
        out += bytes([0]) + struct.pack("<H", offset) if offset < 65536 else bytes([0xF8]) + struct.pack("<Q", offset)
        for dim in (height, width):
            out += bytes([dim]) if dim < 255 else bytes([0xFF]) + struct.pack("<H", dim)
        out.append(op)
    for at in arena or []:
        out += struct.pack("<H", at)
    return bytes(out)


def grid_d4_seeds():
    three = [(0, 2, 3, 6), (6, 5, 5, 3), (40, 1, 1, 7)]
    put("grid_d4", "three_grids.bin", grid_d4_batch(three, 64))
    put("grid_d4", "every_op_batch.bin", grid_d4_batch([(8 * k, 2, 4, k) for k in range(8)], 80))
    put("grid_d4", "batch_op_rot90.bin", grid_d4_batch([(0, 3, 7, 0), (30, 7, 3, 0)], 60, 6, with_ops=False))
    put("grid_d4", "arena_disjoint.bin", grid_d4_batch(three, 64, arena=[0, 64, 128, 160, 168, 176, 184, 192]))
    put("grid_d4", "arena_out_aliases_in.bin", grid_d4_batch(three, 64, arena=[0, 32, 128, 160, 168, 176, 184, 192]))
    put("grid_d4", "bad_overlap.bin", grid_d4_batch([(0, 2, 3, 0), (10, 2, 2, 0), (5, 1, 2, 0)], 64))
    put("grid_d4", "bad_bounds.bin", grid_d4_batch([(0, 2, 3, 0), (60, 2, 3, 0)], 64))
    put("grid_d4", "bad_too_large.bin", grid_d4_batch([(0, 300, 1, 0)], 64))
    put("grid_d4", "bad_batch_op.bin", grid_d4_batch([(0, 1, 1, 0)], 8, 9, with_ops=False))
    put("grid_d4", "bad_huge_offset.bin", grid_d4_batch([(2 ** 64 - 2, 2, 2, 0)], 2 ** 40))
    put("grid_d4", "bad_null_out.bin", grid_d4_batch(three, 64, null=1))


# ---------------------------------------------------------------- focus_stack (fuzz_focus_stack.c's encoding)
def focus_params(n, z, y, x, ksize, measure, border, window, control=0x1B):
    """control: % 8 names the NULL pointer (0 in, 1 idx, 2 ff, 3..7 none); bits 3 and 4 ask for best and focus."""
    out = bytearray([control])
    for v in (n, z, y, x, ksize, measure, border, window):
        out += bytes([v + 8]) if -8 <= v < 0xF0 - 8 else bytes([0xF0]) + struct.pack("<i", v)
    return bytes(out)


def focus_stack_seeds():
    example = struct.pack("<6H", 100, 100, 100, 0, 400, 0)
    put("focus_stack", "header_example.bin", focus_params(1, 2, 1, 3, 3, 0, 0, 0) + example)
    texture = bytes((i * 37 + 11) & 0xFF for i in range(2 * 5 * 4 * 6 * 2))
    put("focus_stack", "lap_reflect_window3.bin", focus_params(2, 5, 4, 6, 5, 1, 2, 3) + texture)
    put("focus_stack", "log7_replicate_window5.bin", focus_params(1, 3, 7, 5, 7, 0, 1, 5) + texture)
    put("focus_stack", "window_larger_than_image.bin", focus_params(1, 2, 3, 3, 3, 0, 2, 101) + texture)
    put("focus_stack", "bad_ksize.bin", focus_params(1, 2, 3, 3, 4, 0, 0, 0))
    put("focus_stack", "bad_even_window.bin", focus_params(1, 2, 3, 3, 3, 0, 0, 4))
    put("focus_stack", "bad_z_256.bin", focus_params(1, 256, 3, 3, 3, 0, 0, 0))
    put("focus_stack", "bad_border.bin", focus_params(1, 2, 3, 3, 3, 0, 3, 0))
    put("focus_stack", "bad_overflow.bin", focus_params(2 ** 31 - 1, 255, 2 ** 31 - 1, 2 ** 31 - 1, 3, 0, 0, 0))
    put("focus_stack", "bad_null_idx.bin", focus_params(1, 2, 1, 3, 3, 0, 0, 0, control=1) + example)


# ---------------------------------------------------------------- ex2d (fuzz_ex2d.c)
EX2D_PARAMS = ("nspec_tab nwave_tab gx gy hsizex hsizey npix_x npix_y nspec_out nwave_out m wavepad max_nspecpad "
               "max_ncore max_box_pixels ndiag regularize psferr jacobi_tol jacobi_max_sweeps").split()
EX2D_PATCH = "spec_first nspecpad core_first ncore wave_first ncore_wave out_spec_first out_wave_first xmin xmax ymin ymax".split()


def ex2d_rel(delta):
    """fuzz_ex2d.c take_rel: a signed byte (-128..-17 or 0..127) added to the frame's value; ("abs", v): the
    marker 0xF0 and v as an int32."""
    if isinstance(delta, tuple):
        return b"\xf0" + struct.pack("<i", delta[1])
    assert -128 <= delta <= 127 and (delta & 0xFF) < 0xF0, delta
    return bytes([delta & 0xFF])


def ex2d_input(control=0, params=None, edge=None, ntab=1, first=0, npatch=0, max_batch=0, patches=None, pokes=()):
    """Deltas from the tier-S frame's valid call (all zero: that call). edge: {param: index into the harness's
    list of edge doubles (1-based)}; pokes: (pixel, what) pairs (what bit 0: image, bits 1-3: the value)."""
    params, edge, patches = params or {}, edge or {}, patches if patches is not None else [{}] * ntab
    out = bytearray([control])
    for name in EX2D_PARAMS:
        out += bytes([edge.get(name, 0)]) if name in ("regularize", "psferr", "jacobi_tol") else ex2d_rel(params.get(name, 0))
    out += bytes([(ntab - 1) % 5]) + ex2d_rel(first) + ex2d_rel(npatch) + ex2d_rel(max_batch)
    for d in patches:
        for name in EX2D_PATCH:
            out += ex2d_rel(d.get(name, 0))
    out += bytes([len(pokes)])
    for pixel, what in pokes:
        out += struct.pack("<HB", pixel, what)
    return bytes(out)


def ex2d_seeds():
    put("ex2d", "valid_tier_s.bin", ex2d_input())
    put("ex2d", "two_patches_second_box_outside.bin", ex2d_input(ntab=2, patches=[{}, {"xmax": 100}]))
    put("ex2d", "four_patches_range_1_2.bin", ex2d_input(ntab=4, first=1, npatch=("abs", 2), max_batch=1))
    put("ex2d", "footprint_outside_box.bin", ex2d_input(patches=[{"xmin": 1}]))
    put("ex2d", "spectra_outside_table.bin", ex2d_input(patches=[{"spec_first": 1}]))
    put("ex2d", "box_above_max_box_pixels.bin", ex2d_input(params={"max_box_pixels": -20}))
    put("ex2d", "ivar_nan_and_image_inf.bin", ex2d_input(pokes=[(300, 0), (301, 3)]))
    put("ex2d", "bad_m_limit.bin", ex2d_input(params={"m": 100}))
    put("ex2d", "bad_jacobi_tol_nan.bin", ex2d_input(edge={"jacobi_tol": 5}))
    put("ex2d", "bad_range.bin", ex2d_input(first=1))
    put("ex2d", "bad_workspace_short.bin", ex2d_input(control=3))
    put("ex2d", "bad_null_psf_xc.bin", ex2d_input(control=(8 << 2)))
    put("ex2d", "bad_npatch_large.bin", ex2d_input(npatch=("abs", 2 ** 31 - 2)))


if __name__ == "__main__":
    arc_seeds()
    npy_seeds()
    tiff_seeds()
    grid_d4_seeds()
    focus_stack_seeds()
    ex2d_seeds()
