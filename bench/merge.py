#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Merges `gpuwitness bench --json` with the peers' timings into one table, and checks every peer's outputs
against our CPU reference's outputs from `gpuwitness bench --dump-inputs`: a fast but wrong peer is marked
in the table and in the JSON, never left out.

usage: merge.py --bench bench.json --inputs DIR [--peer peer.json ...] [--markdown table.md] [--json merged.json]

Needs only Python 3 and NumPy. Exit status: 0 when the table was made (wrong peers included: they are marked),
1 when an input file is missing or malformed, 2 on bad usage.
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers"))
from peer_util import load_npy, read_regular  # noqa: E402 (the one regular-file rule of the Python side)


def load_json(path, what):
    try:
        return json.loads(read_regular(path).decode("utf-8"))
    except (OSError, ValueError) as e:
        sys.exit(f"merge.py: {what} '{path}': {e}")


# Kernels whose peers are held to tolerances rather than bytes: output name -> (kind, bound), and only these
# outputs are required of a peer. ex2d_patch: docs/ex2d_patch.md, "Numerics and tolerances" (flux as a pull
# with our ivar).
TOLERANCES = {
    "ex2d_patch": {"flux": ("pull", 1e-9), "ivar": ("rtol", 1e-10), "rdiags": ("atol", 1e-10)},
}


def compare_tolerance(got, want, kind, bound, ivar):
    """'' when every value is within the bound (NaN never is), else how many are not and the worst."""
    diff = np.abs(got - want)
    if kind == "pull":
        diff = diff * np.sqrt(ivar)
    elif kind == "rtol":
        diff = diff / np.abs(want)
    bad = ~(diff <= bound)
    if not bad.any():
        return ""
    worst = np.unravel_index(int(np.nanargmax(np.where(bad, np.nan_to_num(diff, nan=np.inf), -1))), want.shape)
    return (f"{int(bad.sum())} of {want.size} values outside {kind} {bound:g}; worst at "
            f"{tuple(int(i) for i in worst)}: {float(got[worst])!r} vs reference {float(want[worst])!r} "
            f"({kind} {diff[worst]:.3g})")


def compare(reference_path, output_path, tolerance=None, ivar=None):
    """'' when the arrays are identical (or within tolerance), else what differs."""
    want = load_npy(reference_path)
    try:
        got = load_npy(output_path)
    except OSError as e:
        return f"output missing: {e}"
    if got.shape != want.shape:
        return f"shape {got.shape}, reference {want.shape}"
    if tolerance:
        return compare_tolerance(got.astype(np.float64), want, tolerance[0], tolerance[1], ivar)
    diff = int(np.count_nonzero(got != want))
    if diff:
        first = np.unravel_index(int(np.flatnonzero(got != want)[0]), want.shape)
        return (f"{diff} of {want.size} values differ; first at {tuple(int(i) for i in first)}: "
                f"{got[first]} vs reference {want[first]}")
    return ""


def check_peer_case(manifest_case, inputs_dir, peer_dir, peer_case):
    """Every reference output of the case (or the kernel's TOLERANCES outputs) against the peer's; returns a
    list of problems."""
    if peer_case.get("error"):
        return [f"peer error: {peer_case['error']}"]
    problems = []
    outputs = peer_case.get("outputs", {})
    case_dir = os.path.join(inputs_dir, manifest_case["dir"])
    tolerances = TOLERANCES.get(manifest_case["kernel"], {})
    ivar = load_npy(os.path.join(case_dir, manifest_case["reference"]["ivar"])) if tolerances else None
    for name, ref_file in manifest_case["reference"].items():
        if tolerances and name not in tolerances:
            continue
        if name not in outputs:
            problems.append(f"{name}: not written by the peer")
            continue
        why = compare(os.path.join(case_dir, ref_file), os.path.join(peer_dir, outputs[name]), tolerances.get(name),
                      ivar)
        if why:
            problems.append(f"{name}: {why}")
    return problems


def median(stats):
    return stats["median"] if isinstance(stats, dict) else None


def fmt(value, spec):
    return "-" if value is None else format(value, spec)


def build_rows(bench, manifest, inputs_dir, peers):
    roofline = (bench.get("roofline") or {}).get("gbps")
    cases = {(c["kernel"], c["case"]): c for c in manifest["cases"]}
    by_case = {}
    for peer_path, peer in peers:
        for pc in peer["cases"]:
            by_case.setdefault((peer["kernel"], pc["case"]), []).append((peer_path, peer, pc))
    rows = []
    for m in bench["measurements"]:
        key = (m["kernel"], m["case"])
        valid = "yes" if m["validated"] is True else "NO" if m["validated"] is False else "-"
        if m["gpu_status"] == "skipped":
            valid = "GPU skipped"
        if m.get("error"):
            valid = f"error: {m['error']}"
        rows.append({"kernel": m["kernel"], "case": m["case"], "implementation": m["implementation"],
                     "source": "gpuwitness bench", "time_ms": median(m["gpu_kernel_ms"]), "gbps": m["gpu_gbps"],
                     "roofline_percent": m["roofline_percent"], "ours_faster_x": None, "valid": valid})
        if m["role"] != "kernel":
            continue
        for peer_path, peer, pc in by_case.pop(key, []):
            problems = check_peer_case(cases[key], inputs_dir, os.path.dirname(peer_path), pc) if key in cases \
                else ["no reference outputs for this case in the --inputs manifest"]
            verdict = "yes" if not problems else "NO: " + "; ".join(problems)
            for r in pc.get("rows", []) or [{"variant": "not run", "time_ms": None}]:
                t = median(r.get("time_ms"))
                ours = median(m.get(r.get("compare_with", "gpu_kernel_ms")))
                gbps = m["bytes_moved"] / (t * 1e-3) / 1e9 if t else None
                rows.append({
                    "kernel": m["kernel"], "case": m["case"], "implementation": f"{peer['peer']}: {r['variant']}",
                    "source": peer_path, "time_ms": t, "gbps": gbps,
                    "roofline_percent": 100 * gbps / roofline if gbps and roofline else None,
                    "ours_faster_x": t / ours if t and ours else None, "valid": verdict,
                })
    for (kernel, case), entries in by_case.items():
        for peer_path, peer, _ in entries:
            rows.append({"kernel": kernel, "case": case, "implementation": peer["peer"], "source": peer_path,
                         "time_ms": None, "gbps": None, "roofline_percent": None, "ours_faster_x": None,
                         "valid": "NO: this case is not in the bench JSON"})
    return rows


def markdown(rows, bench):
    env = bench["environment"]
    gpu = (env.get("gpu") or {}).get("name", "no GPU (GPU part skipped)")
    roofline = (bench.get("roofline") or {}).get("gbps")
    lines = [f"GPU: {gpu}; copy roofline: {fmt(roofline, '.1f')} GB/s; gpuwitness {env['gpuwitness_version']} "
             f"({env['git_commit']}); size {bench['method']['size']}, {bench['method']['reps']} repetitions.",
             "GB/s of every row use our kernel's bytes moved for the case (docs/benchmarks.md, 'What every run "
             "reports'), so padding and extra passes show as lower GB/s. 'ours faster' = peer time / our time (kernel-only, or end to end "
             "for end-to-end rows).", "",
             "| kernel | case | implementation | time ms (median) | GB/s | % of copy roofline | ours faster | "
             "output matches our reference |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        valid = r["valid"] if r["valid"] in ("yes", "-", "GPU skipped") else f"**{r['valid']}**"
        lines.append(f"| {r['kernel']} | {r['case']} | {r['implementation']} | {fmt(r['time_ms'], '.4f')} | "
                     f"{fmt(r['gbps'], '.1f')} | {fmt(r['roofline_percent'], '.1f')} | "
                     f"{fmt(r['ours_faster_x'], '.1f') + ('x' if r['ours_faster_x'] else '')} | {valid} |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description="Merge gpuwitness bench and its peers into one table.")
    parser.add_argument("--bench", required=True, help="the JSON of gpuwitness bench --json")
    parser.add_argument("--inputs", required=True, help="the directory of gpuwitness bench --dump-inputs")
    parser.add_argument("--peer", action="append", default=[], help="a peer's timings JSON (repeatable)")
    parser.add_argument("--markdown", help="write the table here (it is printed either way)")
    parser.add_argument("--json", help="write the merged rows here")
    args = parser.parse_args()

    bench = load_json(args.bench, "--bench")
    if bench.get("schema") != "gpuwitness-bench/1":
        sys.exit(f"merge.py: --bench '{args.bench}': not a gpuwitness bench JSON (schema gpuwitness-bench/1)")
    manifest = load_json(os.path.join(args.inputs, "manifest.json"), "--inputs manifest")
    peers = []
    for path in args.peer:
        peer = load_json(path, "--peer")
        if peer.get("schema") != "gpuwitness-bench-peer/1":
            sys.exit(f"merge.py: --peer '{path}': not a peer timings JSON (schema gpuwitness-bench-peer/1)")
        peers.append((path, peer))

    rows = build_rows(bench, manifest, args.inputs, peers)
    table = markdown(rows, bench)
    print(table, end="")
    wrong = [r for r in rows if r["source"] != "gpuwitness bench" and r["valid"] != "yes"]
    for r in wrong:
        print(f"merge.py: WRONG PEER OUTPUT: {r['kernel']} {r['case']} {r['implementation']}: {r['valid']}",
              file=sys.stderr)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write(table)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"schema": "gpuwitness-bench-merged/1", "bench": args.bench, "peers": args.peer,
                       "rows": rows, "wrong_peer_rows": len(wrong)}, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
