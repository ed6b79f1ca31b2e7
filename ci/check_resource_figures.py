#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Fails when a kernel's resource figures in the docs drift from the build: registers, stack frame, spill
stores and loads, static shared memory and blocks per SM, per kernel, as ptxas -v reports them.

Each kernel page holds its figures in a table right after a marker line naming the architecture:

  <!-- resource-figures: sm_90 (ptxas -v of the build; test doc_resource_figures) -->
  | kernel | threads | dynamic shared (B) | registers | stack (B) | spill stores (B) | spill loads (B) |
      static shared (B) | blocks per SM |                              (one line in the doc)
  |---|---|---|---|---|---|---|---|---|
  | `grid_objects_label_kernel` | 128 | 0 | 64 | 48 | 0 | 0 | 20,144 | 8 |

The kernel is the function's name in backticks (a note may follow it). threads and dynamic shared are the
launch's (the launcher's block size, and the dynamic shared memory the blocks-per-SM figure assumes); the other
columns are measured. Numbers may have thousands commas.

What is measured comes from the build target gw_resource_reports (cmake/gw_resource_reports.cmake), which
compiles each kernel's .cu for one architecture with the kernel libraries' flags and -Xptxas -v, keeping:
  <kernel>.<arch>.ptxas.txt  ptxas's report: per entry (C++-mangled, _Z<length><name>...: the name is taken)
                             "N bytes stack frame, N bytes spill stores, N bytes spill loads" and
                             "Used N registers, used N barriers, N bytes smem" (no barriers or smem: 0).
                             ptxas's smem is the static shared memory alone, without the 1 KiB the system
                             reserves per block on sm_90; the occupancy rules below add it.
  <kernel>.<arch>.ptx        beside it: each entry's .maxntid (or .reqntid), the block size of its
                             __launch_bounds__. The doc's threads must equal it, and blocks per SM is computed
                             with it; a kernel without one takes the doc's threads.

Blocks per SM follow the CUDA occupancy calculator (the toolkit's cuda_occupancy.h, which
cudaOccupancyMaxActiveBlocksPerMultiprocessor implements) for the default shared-memory carveout; the
minimum of
  registers  each warp gets registers * 32 rounded up to 256; each of the 4 SM sub-partitions holds 65536 / 4
             of them: floor(16384 / per-warp) warps per sub-partition, times 4, divided by the block's warps
  warps      2048 threads per SM: 64 warps divided by the block's warps (rounded up to whole warps)
  blocks     32 per SM
  shared     static + dynamic + 1 KiB reserved per block, rounded up to 128 B; 228 KiB (233,472 B) per SM
  barriers   64 per SM (2 per block slot) divided by the barriers the kernel uses
(sm_90's figures: the values of cuda_occupancy.h for compute capability 9.0 and the H100/H200's device
properties). Every kernel of the logs must have a row in some doc, and every row a kernel of the logs.

usage: check_resource_figures.py --logs LOG... --docs DOC...
exit status: 0 every figure matches; 1 a figure drifted, or a kernel has no row or a row no kernel (each
named, with doc, line and both values); 2 bad usage, an unreadable doc or a log ptxas did not write;
77 nothing to check: a log or its PTX is missing (the target gw_resource_reports was not built).
"""
import argparse
import os
import re
import sys

# Occupancy limits per architecture (cuda_occupancy.h; device properties of the sm_90 parts).
LIMITS = {
    "sm_90": dict(regs_per_sm=65536, regs_per_block=65536, reg_granularity=256, sub_partitions=4,
                  threads_per_sm=2048, threads_per_block=1024, blocks_per_sm=32, shared_per_sm=233472,
                  shared_granularity=128, reserved_shared=1024, barriers_per_block_slot=2),
}
MARKER = re.compile(r"<!--\s*resource-figures:\s*(sm_\d+)")
COLUMNS = ("kernel", "threads", "dynamic shared (B)", "registers", "stack (B)", "spill stores (B)",
           "spill loads (B)", "static shared (B)", "blocks per SM")
MEASURED = COLUMNS[1:2] + COLUMNS[3:]
LOG_SUFFIX = ".ptxas.txt"


def fail_usage(msg):
    print(f"check_resource_figures: {msg}", file=sys.stderr)
    sys.exit(2)


def kernel_name(symbol):
    """The function name of an Itanium-mangled symbol (_Z25grid_objects_label_kernelmm... -> the name);
    an unmangled (extern "C") symbol as it is."""
    m = re.match(r"_Z(\d+)", symbol)
    return symbol[m.end():m.end() + int(m.group(1))] if m else symbol


def read_text(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        fail_usage(f"cannot read {path}: {e.strerror}")


def read_log(path):
    """{(arch, kernel): figures} from one ptxas -v report; only entry functions (kernels) are kept."""
    kernels, entry, props = {}, None, None
    for line in read_text(path).splitlines():
        m = re.search(r"Compiling entry function '([^']+)' for '(sm_\w+)'", line)
        if m:
            entry = (m.group(2), kernel_name(m.group(1)))
            kernels[entry] = dict(stack=None, spill_stores=None, spill_loads=None, registers=None, shared=0,
                                  barriers=0, max_threads=None, log=path)
            continue
        m = re.search(r"Function properties for (\S+)", line)
        if m:  # also printed for device functions that were not inlined: their stack is the caller's business
            props = entry if entry and kernel_name(m.group(1)) == entry[1] else None
            continue
        m = re.match(r"\s*(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and props:
            kernels[props].update(stack=int(m.group(1)), spill_stores=int(m.group(2)), spill_loads=int(m.group(3)))
            continue
        m = re.search(r"Used (\d+) registers", line)
        if m and entry:
            k = kernels[entry]
            k["registers"] = int(m.group(1))
            b = re.search(r"used (\d+) barriers", line)
            s = re.search(r"(\d+) bytes smem", line)
            k.update(barriers=int(b.group(1)) if b else 0, shared=int(s.group(1)) if s else 0)
            entry = props = None
    for (arch, name), k in kernels.items():
        missing = [f for f in ("registers", "stack") if k[f] is None]
        if missing:
            fail_usage(f"{path}: ptxas reported no {' or '.join(missing)} for {name} ({arch})")
    return kernels


def read_ptx_block_sizes(path):
    """{kernel: threads} from the .maxntid / .reqntid directive of each .entry of a PTX file."""
    sizes, entry = {}, None
    for line in read_text(path).splitlines():
        m = re.match(r"\s*(?:\.visible\s+|\.weak\s+)?\.entry\s+([\w$]+)", line)
        if m:
            entry = kernel_name(m.group(1))
            continue
        m = re.match(r"\s*\.(?:maxntid|reqntid)\s+([\d,\s]+)", line)
        if m and entry:
            threads = 1
            for v in m.group(1).split(","):
                threads *= int(v) if v.strip() else 1
            sizes[entry] = threads
        elif line.strip().startswith("{"):
            entry = None
    return sizes


def blocks_per_sm(arch, threads, registers, shared, dynamic, barriers):
    """(blocks, what limits them) by the occupancy calculator's rules (module docstring)."""
    L = LIMITS[arch]
    warps = -(-threads // 32)
    per_warp = -(-registers * 32 // L["reg_granularity"]) * L["reg_granularity"]
    footprint = -(-(shared + dynamic + L["reserved_shared"]) // L["shared_granularity"]) * L["shared_granularity"]
    # a block's registers are checked as if its warps filled every sub-partition evenly (cuda_occupancy.h)
    fits = per_warp * -(-warps // L["sub_partitions"]) * L["sub_partitions"] <= L["regs_per_block"]
    limits = {
        "registers": (L["regs_per_sm"] // L["sub_partitions"] // per_warp) * L["sub_partitions"] // warps
        if per_warp and fits else (L["blocks_per_sm"] if fits else 0),
        "warps": L["threads_per_sm"] // 32 // warps if threads <= L["threads_per_block"] else 0,
        "blocks": L["blocks_per_sm"],
        "shared memory": L["shared_per_sm"] // footprint,
        "barriers": L["barriers_per_block_slot"] * L["blocks_per_sm"] // barriers if barriers else L["blocks_per_sm"],
    }
    blocks = min(limits.values())
    return blocks, " and ".join(k for k, v in limits.items() if v == blocks)


def number(cell):
    text = cell.strip().strip("`").replace(",", "")
    if not re.fullmatch(r"\d+", text):
        raise ValueError(cell.strip())
    return int(text)


def read_doc(path):
    """[(arch, kernel, {column: value}, line number)] from every marked table of the doc."""
    lines = read_text(path).splitlines()
    rows, i = [], 0
    while i < len(lines):
        m = MARKER.search(lines[i])
        i += 1
        if not m:
            continue
        arch = m.group(1)
        table = []
        while i < len(lines) and lines[i].lstrip().startswith("|"):
            table.append((i + 1, [c.strip() for c in lines[i].strip().strip("|").split("|")]))
            i += 1
        if len(table) < 3 or tuple(table[0][1]) != COLUMNS:
            fail_usage(f"{path}:{i}: the table after the resource-figures marker must have the columns "
                       f"{' | '.join(COLUMNS)}")
        for line_no, cells in table[2:]:
            if len(cells) != len(COLUMNS):
                fail_usage(f"{path}:{line_no}: {len(cells)} cells, want {len(COLUMNS)}")
            try:
                values = {c: number(v) for c, v in zip(COLUMNS[1:], cells[1:])}
            except ValueError as e:
                fail_usage(f"{path}:{line_no}: '{e}' is not a whole number")
            name = re.match(r"`([^`]+)`", cells[0])  # the kernel in backticks; anything after it is a note
            rows.append((arch, name.group(1) if name else cells[0], values, line_no))
    if not rows:
        fail_usage(f"{path}: no resource-figures table")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--logs", nargs="+", required=True,
                    help=f"ptxas -v reports, <kernel>.<arch>{LOG_SUFFIX}, each with <kernel>.<arch>.ptx beside it")
    ap.add_argument("--docs", nargs="+", required=True, help="the kernel pages with resource-figures tables")
    args = ap.parse_args()

    for log in args.logs:
        if not log.endswith(LOG_SUFFIX):
            fail_usage(f"{log}: a log's name must end in {LOG_SUFFIX}")
    missing = [p for log in args.logs for p in (log, log[:-len(LOG_SUFFIX)] + ".ptx") if not os.path.isfile(p)]
    if missing:
        print(f"check_resource_figures: skipped: no {', '.join(missing)}: build the target gw_resource_reports "
              "(part of the default build when nvcc is found) to write ptxas's reports")
        return 77
    rows = [row + (doc,) for doc in args.docs for row in read_doc(doc)]
    for arch in {row[0] for row in rows}:
        if arch not in LIMITS:
            fail_usage(f"no occupancy limits for {arch} here (known: {', '.join(sorted(LIMITS))})")

    built = {}  # (arch, kernel) -> figures
    for log in args.logs:
        sizes = read_ptx_block_sizes(log[:-len(LOG_SUFFIX)] + ".ptx")
        for key, figures in read_log(log).items():
            built[key] = dict(figures, max_threads=sizes.get(key[1]))
    if not built:
        fail_usage(f"no kernel in {', '.join(args.logs)}: was it written by nvcc -Xptxas -v?")

    problems, seen = [], set()
    for arch, kernel, doc_values, line_no, doc in rows:
        where = f"{doc}:{line_no}: {kernel} ({arch})"
        b = built.get((arch, kernel))
        if b is None:
            have = ", ".join(sorted(k for a, k in built if a == arch)) or "none"
            problems.append(f"{where}: no such kernel in ptxas's reports for {arch} (built: {have})")
            continue
        if (arch, kernel) in seen:
            problems.append(f"{where}: a second row for this kernel")
            continue
        seen.add((arch, kernel))
        # the block size of __launch_bounds__ where the kernel has one, else the doc's
        threads = b["max_threads"] if b["max_threads"] is not None else doc_values["threads"]
        dynamic = doc_values["dynamic shared (B)"]
        blocks, limit = blocks_per_sm(arch, threads, b["registers"], b["shared"], dynamic, b["barriers"])
        measured = {"threads": threads, "registers": b["registers"], "stack (B)": b["stack"],
                    "spill stores (B)": b["spill_stores"], "spill loads (B)": b["spill_loads"],
                    "static shared (B)": b["shared"], "blocks per SM": blocks}
        drifted = [c for c in MEASURED if doc_values[c] != measured[c]]
        for c in drifted:
            what = "__launch_bounds__ block size" if c == "threads" else c
            problems.append(f"{where}: {what}: the doc says {doc_values[c]:,}, the build has {measured[c]:,} "
                            f"({b['log']})")
        if not drifted:
            print(f"ok {where}: {threads} threads, {b['registers']} registers, {b['stack']} B stack, "
                  f"{b['spill_stores']}/{b['spill_loads']} B spill stores/loads, {b['shared']:,} B static + "
                  f"{dynamic:,} B dynamic shared, {b['barriers']} barrier(s) -> blocks per SM {blocks} "
                  f"(limited by {limit})")
    for arch, kernel in sorted(set(built) - seen):
        problems.append(f"{kernel} ({arch}, {built[(arch, kernel)]['log']}): no row in any resource-figures "
                        f"table of {', '.join(args.docs)}")
    for p in problems:
        print(f"FAIL {p}")
    print(f"check_resource_figures: {len(rows)} row(s), {len(built)} kernel(s) built, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
