# SPDX-License-Identifier: MIT
"""Shared by the peers in bench/peers/: the command line, reading `gpuwitness bench --dump-inputs DIR`,
timing with CUDA events the way gpuwitness bench does, and writing the peer's outputs and timings.

Every peer takes --inputs DIR (the dump), --out DIR (its outputs and timings JSON), --reps N and --warmup N.
It times with CUDA events after the warm-up calls, flushes L2 between repetitions (a write of twice its size,
outside the events), writes each case's outputs as .npy in OUT/<case dir>/ and one JSON file
OUT/<peer>.json; bench/merge.py compares the outputs with our reference and builds the table.
"""
import argparse
import io
import json
import os
import stat
import statistics
import sys

import numpy as np

SCHEMA = "gpuwitness-bench-peer/1"


def parse_args(description):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--inputs", required=True, help="the --dump-inputs directory of gpuwitness bench")
    parser.add_argument("--out", required=True, help="directory for this peer's outputs and timings JSON")
    parser.add_argument("--reps", type=int, default=20, help="timed repetitions per measurement (default 20)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed calls before timing (default 3)")
    args = parser.parse_args()
    if args.reps < 1 or args.warmup < 0:
        parser.error("--reps must be at least 1 and --warmup at least 0")
    os.makedirs(args.out, exist_ok=True)
    return args


def read_regular(path):
    """The bytes of the regular file at path, by lib/io/include/gw_infile.h's rule (every file the project reads,
    in C and in Python): a path that is not a regular file is refused before it is opened, the open does not
    block (a FIFO that took its place would block it), and the open descriptor's kind decides. OSError with
    "<path>: not a regular file (a FIFO)" and the like."""
    kinds = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
             (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))

    def check(mode):
        if not stat.S_ISREG(mode):
            raise OSError(f"{path}: not a regular file ({next((n for t, n in kinds if t(mode)), 'not a file')})")

    check(os.stat(path).st_mode)
    with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC), "rb") as f:
        check(os.fstat(f.fileno()).st_mode)
        os.set_blocking(f.fileno(), True)
        return f.read()


def load_npy(path):
    """A .npy array read through read_regular (no pickles)."""
    return np.load(io.BytesIO(read_regular(path)), allow_pickle=False)


def load_cases(inputs_dir, kernel):
    """The manifest's cases of one kernel, each with its directory made absolute."""
    path = os.path.join(inputs_dir, "manifest.json")
    try:
        manifest = json.loads(read_regular(path).decode("utf-8"))
    except (OSError, ValueError) as e:
        sys.exit(f"{path}: cannot read the manifest: {e}")
    if manifest.get("schema") != "gpuwitness-bench-inputs/1":
        sys.exit(f"{path}: not a gpuwitness bench --dump-inputs manifest")
    cases = [c for c in manifest["cases"] if c["kernel"] == kernel]
    for c in cases:
        c["path"] = os.path.join(inputs_dir, c["dir"])
    return cases


def load_input(case, key):
    return load_npy(os.path.join(case["path"], case["inputs"][key]))


def stats(times_ms):
    times = sorted(times_ms)
    return {"min": times[0], "median": statistics.median(times), "max": times[-1], "reps": len(times)}


class CudaTimer:
    """CUDA events around fn() only; warm-up calls first; L2 flushed before every timed repetition."""

    def __init__(self, torch, reps, warmup):
        self.torch, self.reps, self.warmup = torch, reps, warmup
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        l2 = getattr(props, "L2_cache_size", 0)
        # Without the L2 size from torch, 256 MiB is more than twice any current L2.
        self.flush_bytes = 2 * l2 if l2 else 256 << 20
        self.flush = torch.empty(self.flush_bytes, dtype=torch.uint8, device="cuda")

    def time(self, fn):
        torch = self.torch
        for _ in range(self.warmup):
            fn()
        torch.cuda.synchronize()
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                  for _ in range(self.reps)]
        result = None
        for start, stop in events:
            self.flush.zero_()
            start.record()
            result = fn()
            stop.record()
        torch.cuda.synchronize()
        return stats([start.elapsed_time(stop) for start, stop in events]), result


def environment(torch):
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return {
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "gpu": props.name,
        "cudnn_allow_tf32": bool(torch.backends.cudnn.allow_tf32),
        "matmul_allow_tf32": bool(torch.backends.cuda.matmul.allow_tf32),
    }


def save_outputs(out_dir, case, arrays):
    """Writes each array as OUT/<case dir>/<name>.npy; returns {name: path relative to out_dir}."""
    case_dir = os.path.join(out_dir, case["dir"])
    os.makedirs(case_dir, exist_ok=True)
    files = {}
    for name, array in arrays.items():
        np.save(os.path.join(case_dir, name + ".npy"), array)
        files[name] = os.path.join(case["dir"], name + ".npy")
    return files


def write_result(out_dir, peer, kernel, description, env, args, cases):
    doc = {
        "schema": SCHEMA,
        "peer": peer,
        "kernel": kernel,
        "description": description,
        "environment": env,
        "method": {"reps": args.reps, "warmup": args.warmup, "timer": "torch.cuda.Event around the timed calls",
                   "l2_flush": "zero_() of twice the L2 size before every timed repetition, outside the events"},
        "cases": cases,
    }
    path = os.path.join(out_dir, peer + ".json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    print(f"{peer}: wrote {path}")
