#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the generated seeds of tests/fuzz/corpus/<harness>/ (standard library only, deterministic).

Seeds are small valid inputs of every form each reader accepts, plus one of each kind it must refuse, so the
fuzzer starts deep inside the parsers. Files are (re)written under their own names; other files in the
corpus (crash reproducers) are left alone.
Usage: python3 tests/fuzz/make_seed_corpus.py
"""
import gzip
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
    # (cells are plain integers: 1.0 is refused since the reader is strict, see bad_cell_1_0.json)
    put("arc", "test_with_output_and_extra_key.json",
        b'{"name": "x", "train": [{"input": [[0]], "output": [[9, 9]]}],\n "test": [{"input": [[1]], '
        b'"output": [[2]]}]}\n')
    # members the reader keeps as text and the writer gives back: top level and pairs, nested, escaped
    put("arc", "task_with_kept_members.json",
        b'{"name": "t\\u00e9st \\"q\\" \\\\ \\/ \\n", "train": [{"input": [[1, 2]], "note": {"a": [1, -0, 2.50e3, '
        b'1E-2, true, false, null], "b": {}}, "output": [[3], [4]]}, {"output": [[5]], "input": [[6]]}],\r\n'
        b' "meta": [[], {"k": "\\ud83d\\ude00", "\xc3\xa9": ""}], "test": [{"id": 7, "input": [[8]]}],\t"": 1.0}\n')
    put("arc", "task_keys_escaped.json",
        b'{"t\\u0065st": [{"\\u0069nput": [[1]]}], "tr\\u0061in": [{"output": [[2]], "input": [[3]]}]}')
    put("arc", "ok_nesting_1000.json",  # the task object is level 1: 999 more
        b'{"train": [{"input": [[1]], "output": [[1]]}], "test": [{"input": [[1]]}], "deep": '
        + b'[' * 999 + b']' * 999 + b'}')
    put("arc", "bad_nesting_1001.json",  # valid JSON, one level past the reader's limit
        b'{"train": [{"input": [[1]], "output": [[1]]}], "test": [{"input": [[1]]}], "deep": '
        + b'[' * 1000 + b']' * 1000 + b'}')
    valid = b'{"train": [{"input": [[1]], "output": [[1]]}], "test": [{"input": [[1]]}]'
    put("arc", "bad_cell_1_0.json", b'{"train": [{"input": [[1.0]], "output": [[1]]}], "test": [{"input": [[1]]}]}')
    put("arc", "bad_cell_1e0.json", b'{"train": [{"input": [[1e0]], "output": [[1]]}], "test": [{"input": [[1]]}]}')
    put("arc", "bad_leading_zero.json", b'{"train": [{"input": [[01]], "output": [[1]]}], "test": [{"input": [[1]]}]}')
    put("arc", "bad_control_byte_0x01.json", valid.replace(b'"test":', b'\x01"test":') + b'}')
    put("arc", "bad_control_byte_0x1f.json", valid.replace(b'[[1]]}]', b'[[1]]}\x1f]', 1) + b'}')
    put("arc", "bad_nul_between_tokens.json", valid + b'\x00}')
    put("arc", "bad_control_in_string.json", valid + b', "n": "a\x1fb"}')
    put("arc", "bad_byte_order_mark.json", b'\xef\xbb\xbf' + valid + b'}')
    put("arc", "bad_invalid_utf8.json", valid + b', "n": "\xc0\xaf"}')
    put("arc", "bad_lone_surrogate.json", valid + b', "n": "\\ud800"}')
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
    # cut short: inside the magic, inside a 12-byte v2.0 preamble, the last data byte of a whole file
    put("npy", "bad_cut_in_magic.npy", b"\x93NUM")
    put("npy", "bad_cut_in_v2_preamble.npy",
        npy("{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3, 4), }", u2, 2)[:10])
    put("npy", "bad_cut_last_data_byte.npy",
        npy("{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3, 4), }", u2, 3)[:-1])


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


def next_pointers(data):
    """The offsets of each page's next-page (IFD) pointer in a classic TIFF, in chain order."""
    e = ">" if data[:2] == b"MM" else "<"
    out, at = [], struct.unpack_from(e + "I", data, 4)[0]
    while at:
        n = struct.unpack_from(e + "H", data, at)[0]
        out.append(at + 2 + 12 * n)
        at = struct.unpack_from(e + "I", data, out[-1])[0]
    return out


def with_u32(data, at, value, e="<"):
    out = bytearray(data)
    struct.pack_into(e + "I", out, at, value)
    return bytes(out)


def strip_before_ifd(chunk, byte_count=None, compression=1, width=2, height=2):
    """One page whose strip lies just before its directory (as libtiff writes it): bytes follow the strip.
    byte_count: what StripByteCounts says (None: the tag is left out)."""
    out = bytearray(b"II*\0" + struct.pack("<I", 0)) + chunk
    if len(out) % 2:
        out += b"\0"
    entries = [(256, LONG, width), (257, LONG, height), (258, SHORT, 16), (259, SHORT, compression),
               (262, SHORT, 1), (273, LONG, 8), (277, SHORT, 1), (278, LONG, height)]
    if byte_count is not None:
        entries.append((279, LONG, byte_count))
    struct.pack_into("<I", out, 4, len(out))
    out += struct.pack("<H", len(entries))
    for tag, typ, value in entries:
        out += struct.pack("<HHI", tag, typ, 1) + (struct.pack("<HH", value, 0) if typ == SHORT else
                                                   struct.pack("<I", value))
    return bytes(out + struct.pack("<I", 0))


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
    # A stack cut inside a next-page pointer: libtiff reads the cut pointer as 0 ("last page") without a word,
    # and the reader once returned the pages before it as the whole stack. Then a pointer past the end, a
    # chain that loops, and strips libtiff would guess or cut with only a warning.
    three = tiff([page(3, 2, p) for p in range(3)])
    ptrs = next_pointers(three)
    put("tiff", "bad_cut_in_next_pointer_page_1.tif", three[:ptrs[1] + 2])
    put("tiff", "bad_cut_in_last_next_pointer.tif", three[:ptrs[2] + 3])
    put("tiff", "bad_cut_after_next_pointer_page_0.tif", three[:ptrs[0] + 4])
    put("tiff", "bad_next_pointer_past_end.tif", with_u32(three, ptrs[0], 1 << 30))
    put("tiff", "bad_ifd_loop.tif", with_u32(three, ptrs[2], struct.unpack_from("<I", three, 4)[0]))
    put("tiff", "bad_ifd_self_loop.tif", with_u32(three, ptrs[1], struct.unpack_from("<I", three, ptrs[0])[0]))
    big = tiff([page(3, 2, p, 2, ">") for p in range(2)], big_endian=True)
    put("tiff", "bad_cut_in_next_pointer_big_endian.tif", big[:next_pointers(big)[0] + 1])
    two = pixels(2, 2, 0)
    put("tiff", "bad_strip_count_short_ifd_after.tif", strip_before_ifd(two[:6], byte_count=6))
    put("tiff", "bad_strip_count_missing.tif", strip_before_ifd(two))
    put("tiff", "bad_packbits_run_past_page.tif",
        strip_before_ifd(bytes([127]) + bytes(range(128)), byte_count=129, compression=32773))
    put("tiff", "strip_before_ifd_2x2.tif", strip_before_ifd(two, byte_count=8))  # the same layout, valid


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


# ---------------------------------------------------------------- run_grid_d4 (fuzz_run_grid_d4.c: the file itself)
def hash_bytes(data):
    """fuzz_run_grid_d4.c's hash_bytes: FNV-1a, then MurmurHash3's finaliser."""
    m = 0xFFFFFFFFFFFFFFFF
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & m
    h ^= h >> 33
    h = (h * 0xff51afd7ed558ccd) & m
    return h ^ (h >> 33)


def run_grid_d4_choice(data):
    """The op and the commit mode fuzz_run_grid_d4.c takes from the hash of the file."""
    h = hash_bytes(data)
    return h & 7, min((h >> 3) & 7, 4)


def arc_grid(rows):
    return "[" + ", ".join("[" + ", ".join(str(c) for c in row) + "]" for row in rows) + "]"


def arc_cells(h, w, seed):
    return [[(seed + y * 7 + x * 3) % 10 for x in range(w)] for y in range(h)]


def run_grid_d4_seeds():
    # every ARC seed (and any regress_ file kept there): the hostile cases, now through the whole command
    for f in sorted((CORPUS / "arc").iterdir()):
        put("run_grid_d4", "arc_" + f.name, f.read_bytes())
    g = arc_cells
    # shapes that the transposing ops swap, the limits, one row and one column
    put("run_grid_d4", "shapes_1x255_255x1.json",
        ('{"train": [{"input": %s, "output": %s}], "test": [{"input": %s}]}' %
         (arc_grid(g(1, 255, 1)), arc_grid(g(255, 1, 2)), arc_grid(g(2, 5, 3)))).encode())
    put("run_grid_d4", "shapes_30x30_and_1x1.json",
        ('{"train": [{"input": %s, "output": %s}, {"input": %s, "output": %s}], "test": [{"input": %s, '
         '"output": %s}]}' % (arc_grid(g(30, 30, 4)), arc_grid(g(1, 1, 5)), arc_grid(g(3, 7, 6)),
                              arc_grid(g(7, 3, 7)), arc_grid(g(1, 1, 8)), arc_grid(g(30, 29, 9)))).encode())
    put("run_grid_d4", "many_pairs.json",
        ('{"train": [%s], "test": [%s]}' % (
            ", ".join('{"input": %s, "output": %s}' % (arc_grid(g(1 + k % 4, 1 + k % 5, k)), arc_grid(g(2, 2, k)))
                      for k in range(24)),
            ", ".join('{"input": %s%s}' % (arc_grid(g(2, 3, k)), ', "output": [[1]]' if k % 2 else "")
                      for k in range(5)))).encode())
    # kept members everywhere, in odd places and spellings, which the output must carry through unchanged
    put("run_grid_d4", "kept_everywhere.json",
        b'{"v": 1, "train": [{"id": "p0", "input": [[1, 2, 3], [4, 5, 6]], "mid": [-0, 1E+2, 0.5e-3, null], '
        b'"output": [[7]], "z": {}}, {"output": [[1, 2]], "input": [[3], [4]]}], "name": "na\\u00efve \\ud83d\\ude00",'
        b' "test": [{"input": [[9, 8], [7, 6]], "x": [true, false]}], "dup": 1, "dup": 2, "": ""}')
    put("run_grid_d4", "kept_deep_990.json",
        b'{"train": [{"input": [[1, 2]], "output": [[3, 4]]}], "test": [{"input": [[5]]}], "deep": '
        + b'[' * 990 + b'{"k": "v"}' + b']' * 990 + b'}')
    put("run_grid_d4", "whitespace_crlf_tabs.json",
        b'{\r\n\t"train"\t:\r\n [ {"input" :[[1,2],\n[3,4]] , "output":[[0]]} ] ,\r\n"test":[{"input":[[5,6,7]]}]\r\n}'
        b'\r\n \t')
    put("run_grid_d4", "minified.json", b'{"train":[{"input":[[1,2,3]],"output":[[3,2,1]]}],"test":[{"input":[[1]]}]}')
    put("run_grid_d4", "keys_escaped_output_first.json",
        b'{"t\\u0065st": [{"\\u006futput": [[2, 2]], "\\u0069nput": [[1, 1, 1]]}], '
        b'"tr\\u0061in": [{"output": [[2]], "input": [[3]]}]}')
    # the hostile suite's lossless case: --op identity on a task with a top-level "name", an unknown pair key
    # and a null member (trailing spaces choose the op: identity is op 0)
    lossless = (b'{"name": "lossless", "train": [{"input": [[1, 2], [3, 4]], "note": "kept", "output": [[5]]}], '
                b'"test": [{"input": [[6, 7]]}], "extra": null}')
    pad = next(k for k in range(1000) if run_grid_d4_choice(lossless + b" " * k)[0] == 0)
    put("run_grid_d4", "lossless_identity.json", lossless + b" " * pad)
    # refused: each must leave the output directory empty
    valid = b'{"train": [{"input": [[1, 2]], "output": [[3]]}], "test": [{"input": [[4]]}]}'
    put("run_grid_d4", "bad_leading_zero_in_kept.json", valid[:-1] + b', "n": 007}')
    put("run_grid_d4", "bad_control_byte_in_kept.json", valid[:-1] + b', "n": "\x01"}')
    put("run_grid_d4", "bad_control_byte_between_pairs.json", valid.replace(b'}], "test"', b'}\x1f], "test"'))
    put("run_grid_d4", "bad_cell_10.json", valid.replace(b'[[4]]', b'[[10]]'))
    put("run_grid_d4", "bad_cell_negative.json", valid.replace(b'[[4]]', b'[[-1]]'))
    put("run_grid_d4", "bad_256_wide.json", valid.replace(b'[[4]]', arc_grid(g(1, 256, 0)).encode()))
    put("run_grid_d4", "bad_empty_row.json", valid.replace(b'[[4]]', b'[[]]'))
    put("run_grid_d4", "bad_empty_train.json", b'{"train": [], "test": [{"input": [[4]]}]}')
    put("run_grid_d4", "bad_train_without_output.json", b'{"train": [{"input": [[1]]}], "test": [{"input": [[4]]}]}')
    put("run_grid_d4", "bad_trailing_text.json", valid + b' {}')
    put("run_grid_d4", "bad_cut_in_grid.json", valid[:30])
    put("run_grid_d4", "bad_nesting_1001_in_kept.json",
        valid[:-1] + b', "deep": ' + b'[' * 1000 + b']' * 1000 + b'}')
    put("run_grid_d4", "bad_empty_file.json", b"")
    # one task under every op and every way of committing: the op and the mode come from the file's hash,
    # so trailing spaces (which change nothing else) pick them
    base = (b'{"name": "ops", "train": [{"input": [[1, 2, 3], [4, 5, 6]], "note": [1, {"a": "b"}], '
            b'"output": [[7, 8], [9, 0], [1, 2]]}], "test": [{"input": [[3, 1], [4, 1], [5, 9], [2, 6]]}]}')
    want = {(op, None) for op in range(8)} | {(None, mode) for mode in range(5)}
    for pad in range(2000):
        data = base + b" " * pad
        op, mode = run_grid_d4_choice(data)
        hit = {(op, None), (None, mode)} & want
        if hit:
            want -= hit
            put("run_grid_d4", "ops_op%d_mode%d.json" % (op, mode), data)
        if not want:
            break
    assert not want, want


# ---------------------------------------------------------------- run_focus_stack (fuzz_run_focus_stack.c)
def focus_prefix(ksize=3, measure=0, border=0, ff_tiff=0, idx_tiff=0, float_tiff=0, window=0, mode=2, best=0,
                 focus=0):
    """The three control bytes of fuzz_run_focus_stack.c. mode 0: the last target is a directory (the set
    fails); 1: every target exists already; 2..7: new files."""
    k = {3: 0, 5: 1, 7: 2}[ksize]
    w = {0: 0, 1: 1, 7567: 255}.get(window, window)
    assert w in (0, 1, 255) or (w % 2 == 1 and w < 255), window
    return bytes([k | measure << 2 | border << 3 | ff_tiff << 5 | idx_tiff << 6 | float_tiff << 7, w,
                  mode | best << 3 | focus << 4])


PREFIXES = [
    focus_prefix(),  # morphseq's defaults, .npy outputs
    focus_prefix(5, 1, 1, 1, 1, 1, 3, 3, 1, 1),  # every output, all TIFF
    focus_prefix(7, 0, 2, 0, 1, 0, 7567, 1, 1, 0),  # outputs existing already: replaced
    focus_prefix(3, 1, 2, 1, 0, 1, 5, 0, 0, 1),  # the commit fails: nothing may be left
]


def u2_npy(shape, e="<", seed=0, major=1):
    n = 1
    for d in shape:
        n *= d
    vals = [((seed * 40503 + i * 2654435761) >> 7) & 0xFFFF for i in range(n)]
    return npy("{'descr': '%su2', 'fortran_order': False, 'shape': (%s), }" %
               (e, ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")),
               struct.pack(e + "%dH" % n, *vals), major)


def run_focus_stack_seeds():
    # every .npy and TIFF seed (and any regress_ file kept there), each under one of the prefixes
    files = sorted((CORPUS / "npy").iterdir()) + sorted((CORPUS / "tiff").iterdir())
    for i, f in enumerate(files):
        put("run_focus_stack", f.name, PREFIXES[i % len(PREFIXES)] + f.read_bytes())
    # small odd stacks: Z = 1, one pixel, rank 4, the largest Z, one past it (refused by focus_stack_check)
    stacks = {
        "npy_1x1x1.npy": u2_npy((1, 1, 1)),
        "npy_3x5x7.npy": u2_npy((3, 5, 7), seed=1),
        "npy_2x3x5x7.npy": u2_npy((2, 3, 5, 7), seed=2, major=2),
        "npy_big_endian_5x3x9.npy": u2_npy((5, 3, 9), ">", seed=3),
        "npy_z255_1x255x1x1.npy": u2_npy((1, 255, 1, 1), seed=4),
        "npy_z255_3x255x1x3.npy": u2_npy((3, 255, 1, 3), seed=5),
        "npy_bad_z256_256x1x1.npy": u2_npy((256, 1, 1), seed=6),
        "npy_bad_rank2_5x7.npy": u2_npy((5, 7), seed=7),
        "npy_bad_rank5.npy": u2_npy((1, 1, 2, 1, 1), seed=8),
        "tif_3_pages_5x7.tif": tiff([dict(width=7, height=5, chunks=strips(7, 5, p, 5)) for p in range(3)]),
        "tif_1_page_1x1.tif": tiff([dict(width=1, height=1, chunks=strips(1, 1, 0, 1))]),
        "tif_deflate_2_pages_9x4.tif": tiff([dict(width=4, height=9, compression=8,
                                                  chunks=[zlib.compress(pixels(4, 9, p))]) for p in range(2)]),
        # 300 x 300 of one page: compressed small, above the harness's 64 Ki voxels
        "tif_over_cap_deflate_300x300.tif": tiff([dict(width=300, height=300, compression=8,
                                                       chunks=[zlib.compress(bytes(180000), 9)])]),
    }
    for name, data in stacks.items():
        for i, prefix in enumerate(PREFIXES):
            put("run_focus_stack", "p%d_%s" % (i, name), prefix + data)


# ---------------------------------------------------------------- FITS (gw_desi: DESI PSFs and images)
def fits_card(key, value=None):
    if value is None:
        return key.ljust(80).encode()
    return ("%-8s= %20s" % (key, value)).ljust(80).encode()


def fits_hdu(cards, data=b""):
    """One HDU: the header cards, END, blank-padded to 2880 bytes; the data zero-padded to 2880."""
    head = b"".join(fits_card(*c) for c in cards) + fits_card("END")
    head += b" " * (-len(head) % 2880)
    return head + data + bytes(-len(data) % 2880)


def fits_str(s):
    return "'%-8s'" % s


PSF_NAMES = ["X", "Y", "GHSIGX", "GHSIGY"]
PSF_TAILS = ["TAILAMP", "TAILCORE", "TAILXSCA", "TAILYSCA", "TAILINDE", "CONT"]


def psf_params(deg, with_xy=True):
    gh = ["GH-%d-%d" % (i, j) for i in range(deg + 1) for j in range(deg + 1)]
    return (PSF_NAMES if with_xy else PSF_NAMES[2:]) + gh + PSF_TAILS


def psf_keys(ver, deg, nfibre):
    return [("PSFTYPE", fits_str("GAUSS-HERMITE")), ("PSFVER", fits_str(str(ver))), ("FIBERMIN", "0"),
            ("FIBERMAX", str(nfibre - 1)), ("NPIX_X", "64"), ("NPIX_Y", "128"), ("HSIZEX", "3"), ("HSIZEY", "4"),
            ("GHDEGX", str(deg)), ("GHDEGY", str(deg)), ("LEGDEG", "1")]


def fits_primary(extra=()):
    return fits_hdu([("SIMPLE", "T"), ("BITPIX", "8"), ("NAXIS", "0"), ("EXTEND", "T")] + list(extra))


def psf_table(ver, deg, nfibre=2, ncoef=2, nul_pad=False, version=None, extra=()):
    names = psf_params(deg, with_xy=(ver == 2))
    rows = b""
    for r, name in enumerate(names):
        pad = b"\0" if nul_pad else b" "
        rows += name.encode().ljust(8, pad)
        if ver == 2:
            rows += struct.pack(">dd", 5000.0, 6000.0)
        rows += struct.pack(">%dd" % (nfibre * ncoef), *[r + 0.5 * f + 0.125 * k if name != "GH-0-0" else 1.0
                                                          for f in range(nfibre) for k in range(ncoef)])
    cols = [("PARAM", "8A")] + ([("WAVEMIN", "D"), ("WAVEMAX", "D")] if ver == 2 else []) + \
        [("COEFF", "%dD" % (nfibre * ncoef))]
    rowlen = 8 + (16 if ver == 2 else 0) + 8 * nfibre * ncoef
    cards = [("XTENSION", fits_str("BINTABLE")), ("BITPIX", "8"), ("NAXIS", "2"), ("NAXIS1", str(rowlen)),
             ("NAXIS2", str(len(names))), ("PCOUNT", "0"), ("GCOUNT", "1"), ("TFIELDS", str(len(cols)))]
    for i, (name, form) in enumerate(cols, 1):
        cards += [("TTYPE%d" % i, fits_str(name)), ("TFORM%d" % i, fits_str(form))]
    cards.append(("TDIM%d" % len(cols), fits_str("(%d,%d)" % (ncoef, nfibre))))
    if ver == 3:
        cards += [("EXTNAME", fits_str("PSF")), ("WAVEMIN", "5000.0"), ("WAVEMAX", "6000.0")]
    override = dict(extra)  # extra replaces a keyword of psf_keys in place (a second card would be ignored)
    keys = [(k, override.pop(k, v)) for k, v in psf_keys(version or ver, deg, nfibre)]
    return fits_hdu(cards + keys + list(override.items()), rows)


def fits_image(name, bitpix, shape, values, primary=False, extra=()):
    fmt = {8: "B", 16: "h", 32: "i", -32: "f", -64: "d"}[bitpix]
    first = [("SIMPLE", "T")] if primary else [("XTENSION", fits_str("IMAGE"))]
    cards = first + [("BITPIX", str(bitpix)), ("NAXIS", str(len(shape)))]
    cards += [("NAXIS%d" % (i + 1), str(n)) for i, n in enumerate(reversed(shape))]
    if not primary:
        cards += [("PCOUNT", "0"), ("GCOUNT", "1")]
    cards += [("EXTNAME", fits_str(name))] + list(extra)
    return fits_hdu(cards, struct.pack(">%d%s" % (len(values), fmt), *values))


def fits_gzip_image(name, bitpix, ny, nx, values):
    """A tile-compressed image (one GZIP_1 tile per row, no quantization), as cfitsio writes them."""
    fmt = {16: "h", 32: "i", -32: "f"}[bitpix]
    heap, descriptors = b"", b""
    for y in range(ny):
        tile = gzip.compress(struct.pack(">%d%s" % (nx, fmt), *values[y * nx:(y + 1) * nx]), mtime=0)
        descriptors += struct.pack(">ii", len(tile), len(heap))
        heap += tile
    maxlen = max(struct.unpack(">%di" % (2 * ny), descriptors)[0::2])
    cards = [("XTENSION", fits_str("BINTABLE")), ("BITPIX", "8"), ("NAXIS", "2"), ("NAXIS1", "8"),
             ("NAXIS2", str(ny)), ("PCOUNT", str(len(heap))), ("GCOUNT", "1"), ("TFIELDS", "1"),
             ("TTYPE1", fits_str("COMPRESSED_DATA")), ("TFORM1", fits_str("1PB(%d)" % maxlen)), ("ZIMAGE", "T"),
             ("ZBITPIX", str(bitpix)), ("ZNAXIS", "2"), ("ZNAXIS1", str(nx)), ("ZNAXIS2", str(ny)),
             ("ZTILE1", str(nx)), ("ZTILE2", "1"), ("ZCMPTYPE", fits_str("GZIP_1")), ("EXTNAME", fits_str(name))]
    if bitpix < 0:
        cards.append(("ZQUANTIZ", fits_str("NONE")))
    return fits_hdu(cards, descriptors + heap)


def fits_seeds():
    # small files made here (never from the DESI data): PSFVER 2 and 3, images plain and compressed, and a PSF
    # the reader refuses (the other refusals are rows of tests/desi/test_bad_input_desi.c; libFuzzer's
    # mutations reach them from these seeds)
    trace = [0.5 * i for i in range(4)]
    traces = (fits_image("XTRACE", -64, (2, 2), trace, extra=[("WAVEMIN", "4000.0"), ("WAVEMAX", "7000.0")]) +
              fits_image("YTRACE", -64, (2, 2), trace, extra=[("WAVEMIN", "4000.0"), ("WAVEMAX", "7000.0")]))
    ver = [("PSFTYPE", fits_str("GAUSS-HERMITE")), ("PSFVER", fits_str("2"))]
    ver3 = [("PSFTYPE", fits_str("GAUSS-HERMITE")), ("PSFVER", "3")]
    put("fits", "psf_v2_deg1.fits", fits_primary(ver) + psf_table(2, 1))
    put("fits", "psf_v2_deg0_nul_padded.fits", fits_primary(ver) + psf_table(2, 0, nul_pad=True))
    put("fits", "psf_v3_deg0.fits", fits_primary(ver3) + psf_table(3, 0) + traces)
    put("fits", "bad_psf_v2_hsizex_16.fits", fits_primary(ver) + psf_table(2, 0, extra=[("HSIZEX", "16")]))
    img = [10.0 * (i // 4) + i % 4 for i in range(12)]
    ivar = [1.0 + i for i in range(12)]
    mask = [4 if i == 5 else 0 for i in range(12)]
    put("fits", "image_primary_4x3.fits", fits_image("IMAGE", -32, (3, 4), img, primary=True) +
        fits_image("IVAR", -64, (3, 4), ivar) + fits_image("MASK", 16, (3, 4), mask))
    put("fits", "image_gzip_4x3.fits", fits_primary() + fits_gzip_image("IMAGE", -32, 3, 4, img) +
        fits_gzip_image("IVAR", -32, 3, 4, ivar) + fits_gzip_image("MASK", 32, 3, 4, mask))


if __name__ == "__main__":
    arc_seeds()
    npy_seeds()
    tiff_seeds()
    fits_seeds()
    grid_d4_seeds()
    focus_stack_seeds()
    ex2d_seeds()
    run_grid_d4_seeds()  # after arc_seeds, npy_seeds, tiff_seeds: they copy those corpora
    run_focus_stack_seeds()
