#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Turns `gpuwitness bench --json` results into one self-contained HTML page: the environment, per kernel a
table and a bar chart (log scale, the copy roofline drawn), scaling with problem size, every case's witness
receipt, what the NVML monitor saw in every row's window (the rows' "monitor" objects, docs/monitor.md), and
with --baseline a comparison of two runs judged as nvbench's compare script judges them. How to read it: docs/benchmarks.md, "The HTML report".

usage: report.py RUN.json [RUN.json ...] [--baseline OLD.json] [--peer PEER.json ...] [-o OUT.html]
       report.py --check-deps
       report.py --check RUN.json     (the checks below on one bench result, nothing drawn or written)

RUN "-" reads the JSON from stdin (how `gpuwitness bench --html` calls it); -o - (the default) writes the page
to stdout, any other OUT through a temporary file renamed when complete. Figures are inline SVG, the page
loads nothing (no network, fonts or scripts from elsewhere). Needs Python 3, matplotlib and Jinja2 (Debian:
python3-matplotlib, python3-jinja2).

Every input is checked before anything is drawn. A path that is not a regular file (a FIFO, a device, a
directory) is refused at once, never read (the rule of lib/io/include/gw_infile.h); a document must be valid
JSON of the documented shape (docs/benchmarks.md, "The JSON"), every time and figure the page shows a finite
number >= 0 or null, and text from the document is drawn as it is written (no matplotlib mathtext) and
escaped in the HTML. A refusal is one line on stderr, "report.py: '<path>': <where>: <the rule>".

Exit status: 0 page written; 1 an input is missing, unreadable, not a regular file or malformed, a dependency
is missing (named on stderr; --check-deps prints the missing ones on stdout), or the page could not be
written; 2 bad usage (no RUN, RUN - twice, -o naming a directory or anything else that is not a regular file,
or in a directory that does not exist), and then nothing is read or written.
"""
import argparse
import io
import math
import json
import os
import re
import stat
import sys
import tempfile

DEPENDENCIES = (("matplotlib", "python3-matplotlib"), ("jinja2", "python3-jinja2"))

# The figures a comparison judges: key in a measurement, and what the page calls it.
TIMES = (("gpu_kernel_ms", "GPU kernel"), ("gpu_end_to_end_ms", "GPU end to end"),
         ("cpu_1t_ms", "CPU reference, 1 thread"), ("cpu_mt_ms", "CPU reference, all threads"))
NOT_ON_GPU = "not measured on a GPU"
NO_SAMPLES = "no utilisation samples in this run"
NO_ACTIVITY = "activity: none"


def missing_dependencies():
    """[(module, Debian package)] that cannot be imported, with the reason."""
    missing = []
    for module, package in DEPENDENCIES:
        try:
            __import__(module)
        except Exception as e:  # noqa: BLE001 - any failure to import means the page cannot be made
            missing.append((module, package, str(e)))
    return missing


def fail(message):
    sys.stderr.write(f"report.py: {message}\n")
    sys.exit(1)


class Refused(Exception):
    """An input the page cannot use; the message says where in it and the rule it breaks."""


# ---------------------------------------------------------------- reading an input
FILE_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
              (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def not_regular(mode):
    """None for a regular file, else why it is refused, in lib/io's words."""
    if stat.S_ISREG(mode):
        return None
    return "not a regular file (" + next((name for test, name in FILE_KINDS if test(mode)), "not a file") + ")"


def read_input(path):
    """The bytes of path ("-": stdin). lib/io/include/gw_infile.h's rule: what is not a regular file is refused
    before it is opened (opening a device can act on it); the open does not block (a FIFO put in the file's
    place meanwhile would block the open or the read) and the open descriptor's kind decides."""
    if path == "-":
        with open(0, "rb", closefd=False) as f:
            return f.read()
    why = not_regular(os.stat(path).st_mode)
    if why is None:
        with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC), "rb") as f:
            why = not_regular(os.fstat(f.fileno()).st_mode)
            if why is None:
                os.set_blocking(f.fileno(), True)
                return f.read()
    raise Refused(why)


def load(path, schema):
    """The JSON document at path checked against schema (below); any fault exits 1 with one line."""
    try:
        doc = json.loads(read_input(path).decode("utf-8"))
        schema(doc, "")
        return doc
    except OSError as e:
        fail(f"'{path}': cannot read: {e.strerror}")
    except RecursionError:
        fail(f"'{path}': not valid JSON here: nested deeper than Python's JSON reader can follow")
    except ValueError as e:  # also the UTF-8 decoding error
        fail(f"'{path}': not valid JSON: {e}")
    except Refused as e:
        fail(f"'{path}': {e}")


# ---------------------------------------------------------------- the shape of a document
# Each check below takes (value, where) and raises Refused("<where>: <rule>, not <value>"). The schemas
# BENCH and PEER at the end walk everything the page uses, so the code that draws it can trust the shape.
MISSING = object()  # a key the document does not have


def is_number(v):
    # abs(v) <= the largest float also refuses NaN, both infinities and integers too large for a float.
    return isinstance(v, (int, float)) and not isinstance(v, bool) and abs(v) <= sys.float_info.max


def is_text(v):
    # "\ud800" is valid JSON, but a lone surrogate cannot be written in a UTF-8 page.
    return isinstance(v, str) and not re.search("[\ud800-\udfff]", v)


def what(v):
    """A value as a message shows it: null, true, -1, NaN, Infinity, a short string as JSON writes them."""
    if v is MISSING:
        return "missing"
    if v is None or isinstance(v, (bool, float)) or is_number(v) or (isinstance(v, str) and len(v) <= 40):
        return json.dumps(v)
    return {str: "a long string", list: "a list", dict: "an object"}.get(type(v), "a number too large for a float")


def at(where, key):
    return f"{where}.{key}" if where else key


def kind(test, rule):
    def check(v, where):
        if not test(v):
            raise Refused(f"{where}: {rule}, not {what(v)}")
    return check


TEXT = kind(is_text, "must be a string of Unicode text")
FIGURE = kind(lambda v: is_number(v) and v >= 0, "must be a finite number >= 0")
COUNT = kind(lambda v: is_number(v) and v >= 0 and isinstance(v, int), "must be a whole number >= 0")
FLAG = kind(lambda v: isinstance(v, bool), "must be true or false")
SCALAR = kind(lambda v: is_text(v) or is_number(v) or isinstance(v, bool),
              "must be a string, a finite number, true or false")


def exactly(value, meaning):
    return kind(lambda v: v == value, f"must be {json.dumps(value)} ({meaning})")


def obj(fields, required=(), name=None):
    """An object whose fields (key: check) may each be absent or null unless required; name(value), the case
    of a measurement, is added to where once the required fields are text."""
    def check(v, where):
        if not isinstance(v, dict):
            raise Refused(f"{where or 'the document'}: must be an object, not {what(v)}")
        if name and all(is_text(v.get(key)) for key in required):
            where += f" ({name(v)})"
        for key, check_field in fields.items():
            value = v.get(key, MISSING)
            if key in required or (value is not None and value is not MISSING):
                check_field(value, at(where, key))
    return check


def list_of(item):
    def check(v, where):
        if not isinstance(v, list):
            raise Refused(f"{where}: must be a list, not {what(v)}")
        for i, x in enumerate(v):
            item(x, f"{where}[{i}]")
    return check


TIMING_FIELDS = obj(dict.fromkeys(("min", "median", "max"), FIGURE) | {"reps": COUNT},
                    required=("min", "median", "max", "reps"))


def timing(v, where):
    """{min, median, max, reps}, the times in that order."""
    TIMING_FIELDS(v, where)
    if not v["min"] <= v["median"] <= v["max"]:
        raise Refused(f"{where}: must hold min <= median <= max, not {v['min']}, {v['median']}, {v['max']}")


# environment keys the page lists, and what it calls them
ENVIRONMENT = (("cuda_runtime_version", "CUDA runtime"), ("cuda_driver_version", "CUDA driver"),
               ("cpu_model", "CPU"), ("cpu_threads", "CPU threads"),
               ("cpu_reference_threads", "threads of the multithreaded references"),
               ("gpuwitness_version", "gpuwitness"), ("git_commit", "commit"), ("build_type", "build type"),
               ("c_compiler", "C compiler"), ("cuda_compiler", "CUDA compiler"),
               ("cuda_architectures", "CUDA architectures"), ("hostname", "host"), ("timestamp_utc", "time (UTC)"))
# docs/monitor.md, "JSON keys"
MONITOR = obj(dict.fromkeys(("status", "reason", "activity"), TEXT) | dict.fromkeys(
    ("period_ms", "window_ms", "sm_util_mean_pct", "mem_used_start_bytes", "mem_used_peak_bytes", "sm_clock_min_mhz",
     "sm_clock_max_mhz", "power_peak_w", "devmem_high_water_bytes"), FIGURE) | dict.fromkeys(
    ("samples", "sm_util_peak_pct", "mem_util_peak_pct", "temperature_peak_c", "driver_samples",
     "driver_busy_samples", "devmem_allocations"), COUNT) | {"throttle_reasons": list_of(TEXT), "throttled": FLAG})
# docs/benchmarks.md, "The JSON"
MEASUREMENT = obj(
    dict.fromkeys(("kernel", "case", "implementation", "label", "role", "work_unit", "gpu_status", "witness",
                   "error"), TEXT) | dict.fromkeys(
        ("work", "bytes_moved", "cpu_1t_work", "gpu_gbps", "roofline_percent", "speedup_kernel_vs_cpu_mt"), FIGURE) |
    dict.fromkeys(("gpu_kernel_ms", "gpu_end_to_end_ms", "cpu_1t_ms", "cpu_mt_ms"), timing) |
    {"cpu_mt_threads": COUNT, "validated": FLAG, "monitor": MONITOR},
    required=("kernel", "case", "implementation"), name=lambda m: f"{m['kernel']} {m['case']}")
BENCH = obj({
    "schema": exactly("gpuwitness-bench/1", "a gpuwitness bench result"), "synthetic": TEXT, "emulated": TEXT,
    "result": TEXT,
    "environment": obj({"gpu": obj(dict.fromkeys(("name", "compute_capability"), SCALAR) | dict.fromkeys(
        ("sm_count", "memory_bytes", "l2_bytes"), FIGURE)), "gpu_skipped_reason": SCALAR} |
        dict.fromkeys((key for key, _ in ENVIRONMENT), SCALAR)),
    "method": obj(dict.fromkeys(("size", "seed", "reps", "reps_below_method_minimum", "cpu_reps", "statistic",
                                 "l2_flush"), SCALAR) | {"monitor": obj({"reason": SCALAR})}),
    "roofline": obj({"gbps": FIGURE, "implementation": SCALAR}),
    "measurements": list_of(MEASUREMENT)}, required=("schema", "environment", "method", "measurements"))
# bench/peers/peer_util.py, write_result
PEER_CASE = obj({"case": TEXT, "rows": list_of(obj({"variant": TEXT, "time_ms": timing}))}, required=("case",))
PEER = obj({"schema": exactly("gpuwitness-bench-peer/1", "a peer's timings, bench/peers/"), "peer": TEXT,
            "kernel": TEXT, "cases": list_of(PEER_CASE)}, required=("schema", "peer", "kernel", "cases"))


def median(stats):
    return stats.get("median") if isinstance(stats, dict) else None


def spread(stats):
    """The relative spread of one figure: (max - min) / median, or None where it cannot be told."""
    if not isinstance(stats, dict):
        return None
    lo, mid, hi = stats.get("min"), stats.get("median"), stats.get("max")
    if None in (lo, mid, hi) or not mid or mid <= 0:
        return None
    return (hi - lo) / mid


def judge(base, cur):
    """nvbench_compare.py's rule on our statistics (docs/benchmarks.md, "Comparing two runs"): the noise is the
    smaller of the two relative spreads (the one that exists when only one does); no noise at all is unknown;
    a relative change within the noise is the same; beyond it, faster or slower (a regression)."""
    b, c = median(base), median(cur)
    if not b or not c:
        return None
    frac = (c - b) / b
    noises = [n for n in (spread(base), spread(cur)) if n]
    noise = min(noises) if noises else None
    if not noise:
        status = "unknown"
    elif abs(frac) <= noise:
        status = "same"
    elif frac < 0:
        status = "faster"
    else:
        status = "slower"
    return {"base": b, "cur": c, "ratio": c / b, "frac": frac, "noise": noise, "base_noise": spread(base),
            "cur_noise": spread(cur), "status": status}


def fmt_ms(v):
    if v is None:
        return "-"
    if v >= 100:
        return f"{v:.0f} ms"
    if v >= 1:
        return f"{v:.3g} ms"
    if v >= 1e-3:
        return f"{v * 1e3:.3g} µs"
    return f"{v * 1e6:.3g} ns"


def fmt_stats(stats):
    """(median, 'min – max, n reps') of a timing, or ('-', '')."""
    if not isinstance(stats, dict):
        return ("-", "")
    return (fmt_ms(stats.get("median")),
            f"{fmt_ms(stats.get('min'))} – {fmt_ms(stats.get('max'))}, {stats.get('reps')} reps")


def fmt_num(v, spec=".3g", unit=""):
    return "-" if v is None else format(v, spec) + unit


def slug(text):
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", str(text)).strip("-")


class Charts:
    """matplotlib figures as inline SVG with text kept as text (labels the browser test can read)."""

    def __init__(self):
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        self.plt = plt
        # text.parse_math off: a case named "$x^2$" is drawn as those five characters, never as mathtext.
        matplotlib.rcParams.update({"svg.fonttype": "none", "font.family": "sans-serif", "font.size": 9,
                                    "axes.spines.top": False, "axes.spines.right": False, "text.parse_math": False})
        self.matplotlib = matplotlib

    def svg(self, fig, name):
        # A salt per figure keeps the ids of clip paths unique across the page's inline SVGs.
        self.matplotlib.rcParams["svg.hashsalt"] = name
        buf = io.StringIO()
        fig.savefig(buf, format="svg", bbox_inches="tight")
        self.plt.close(fig)
        text = buf.getvalue()
        return text[text.index("<svg"):]

    def bars(self, name, groups, series, roofline, title):
        """Horizontal bars on a log time axis: groups are the cases, series (label, colour, [value per group])
        the implementations; roofline a minimum time per group (or None) drawn as a black tick."""
        plt = self.plt
        n_series = max(1, len(series))
        height = 0.8 / n_series
        fig, ax = plt.subplots(figsize=(8.5, 0.9 + 0.28 * n_series * len(groups) + 0.25 * len(groups)))
        count = 0
        for s, (label, colour, values) in enumerate(series):
            first = True
            for g, v in enumerate(values):
                if v is None or v <= 0:
                    continue
                y = g + (s - (n_series - 1) / 2) * height
                bar = ax.barh(y, v, height=height * 0.92, color=colour, label=label if first else None)
                bar.patches[0].set_gid(f"bar-{name}-{g}-{s}")
                ax.text(v, y, " " + fmt_ms(v), va="center", fontsize=7)
                first = False
                count += 1
        if roofline and any(r for r in roofline):
            first = True
            for g, r in enumerate(roofline):
                if r:
                    ax.plot([r, r], [g - 0.45, g + 0.45], color="black", linewidth=2,
                            label="copy roofline (least possible time)" if first else None,
                            gid=f"roofline-{name}-{g}")
                    first = False
        ax.set_xscale("log")
        ax.set_yticks(range(len(groups)))
        ax.set_yticklabels(groups)
        ax.invert_yaxis()
        ax.set_xlabel("median time per call (log scale; shorter is faster)")
        ax.xaxis.set_major_formatter(self.matplotlib.ticker.FuncFormatter(lambda v, _: fmt_ms(v)))
        ax.xaxis.set_minor_formatter(self.matplotlib.ticker.NullFormatter())
        ax.legend(loc="lower left", bbox_to_anchor=(0, 1.0), ncol=3, frameon=False, fontsize=8)
        ax.set_title(title, loc="left", pad=12 + 12 * math.ceil((len(series) + 1) / 3))
        return self.svg(fig, name), count

    def scaling(self, name, lines, title):
        """Throughput (work units/s) against the work of the case, log-log: lines (label, colour, marker,
        [(work, rate)])."""
        plt = self.plt
        fig, ax = plt.subplots(figsize=(6.5, 3.2))
        count = 0
        for i, (label, colour, marker, points) in enumerate(lines):
            pts = sorted(p for p in points if p[0] and p[1])
            if not pts:
                continue
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker, color=colour, label=label,
                    gid=f"line-{name}-{i}")
            count += len(pts)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("problem size (work units of the case)")
        ax.set_ylabel("work units per second")
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_formatter(self.matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:.3g}"))
            axis.set_minor_formatter(self.matplotlib.ticker.NullFormatter())
        ax.set_title(title, loc="left")
        ax.legend(frameon=False, fontsize=8)
        return self.svg(fig, name), count

    def utilisation_bars(self, name, rows, title):
        """Per row with readings: SM utilisation mean and peak (horizontal bars, 0-100 %), the rows whose
        activity is "none" labelled in red."""
        plt = self.plt
        fig, ax = plt.subplots(figsize=(8.5, 0.9 + 0.42 * len(rows)))
        count = 0
        for s, (key, label, colour) in enumerate((("sm_mean", "SM busy, mean %", "#1f77b4"),
                                                  ("sm_peak", "SM busy, peak %", "#aec7e8"))):
            first = True
            for g, r in enumerate(rows):
                v = r[key]
                if v is None:
                    continue
                y = g + (s - 0.5) * 0.4
                bar = ax.barh(y, max(v, 0.4), height=0.37, color=colour, label=label if first else None)
                bar.patches[0].set_gid(f"bar-{name}-{g}-{s}")
                ax.text(max(v, 0.4), y, f" {v:.3g}%", va="center", fontsize=7)
                first = False
                count += 1
        for g, r in enumerate(rows):
            if r["activity"] == "none":
                ax.text(101, g, NO_ACTIVITY, va="center", fontsize=7, color="#c00", fontweight="bold",
                        gid=f"noact-{name}-{g}")
        ax.set_xlim(0, 100)
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels([r["label"] for r in rows], fontsize=7)
        for tick, r in zip(ax.get_yticklabels(), rows):
            if r["activity"] == "none":
                tick.set_color("#c00")
        ax.invert_yaxis()
        ax.set_xlabel("SM utilisation in the row's window, % (NVML: share of time some kernel ran)")
        ax.legend(loc="lower left", bbox_to_anchor=(0, 1.0), ncol=2, frameon=False, fontsize=8)
        ax.set_title(title, loc="left", pad=24)
        return self.svg(fig, name), count

    def utilisation_steps(self, name, rows, title):
        """A step timeline across the run: each row's window laid after the previous one's (window_ms), at
        its SM mean, SM peak and memory peak; a red band over windows whose activity is "none"."""
        plt = self.plt
        fig, ax = plt.subplots(figsize=(8.5, 2.8))
        edges = [0.0]
        for r in rows:
            edges.append(edges[-1] + (r["window_ms"] or 0) / 1e3)
        count = 0
        for key, label, colour in (("sm_mean", "SM busy, mean %", "#1f77b4"), ("sm_peak", "SM busy, peak %", "#aec7e8"),
                                   ("mem_peak", "memory busy, peak %", "#ff7f0e")):
            ys = [r[key] for r in rows]
            if all(y is None for y in ys):
                continue
            ys = [y if y is not None else float("nan") for y in ys]
            ax.step(edges, ys + ys[-1:], where="post", color=colour, label=label, gid=f"line-{name}-{key}")
            count += 1
        first = True
        for i, r in enumerate(rows):
            if r["activity"] == "none":
                ax.axvspan(edges[i], edges[i + 1], color="#d62728", alpha=0.25, linewidth=0,
                           label=f"{NO_ACTIVITY} (witness: ran)" if first else None, gid=f"noact-{name}-{i}")
                first = False
        # Where each kernel's rows begin, named.
        last = None
        for i, r in enumerate(rows):
            if r["kernel"] != last:
                ax.axvline(edges[i], color="#999", linewidth=0.8, linestyle=":")
                ax.text(edges[i], 104, " " + r["kernel"], fontsize=7, color="#555", va="bottom")
                last = r["kernel"]
        ax.set_ylim(0, 100)
        ax.set_xlim(0, edges[-1] or 1)
        ax.set_xlabel("seconds since the start of the run (each row's window after the previous one)")
        ax.set_ylabel("%")
        ax.set_title(title, loc="left", pad=16)
        ax.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        return self.svg(fig, name), count

    def ratios(self, name, rows, title):
        """One bar per compared figure: current / baseline, coloured by the verdict."""
        plt = self.plt
        colours = {"slower": "#d62728", "faster": "#2ca02c", "same": "#7f7f7f", "unknown": "#bcbd22"}
        fig, ax = plt.subplots(figsize=(8.5, 0.9 + 0.22 * len(rows)))
        for i, r in enumerate(rows):
            bar = ax.barh(i, r["ratio"] - 1, left=1, color=colours[r["status"]], height=0.7)
            bar.patches[0].set_gid(f"bar-{name}-{i}")
            ax.text(max(r["ratio"], 1), i, f" {r['ratio']:.2f}x {r['status']}", va="center", fontsize=7)
        ax.axvline(1, color="black", linewidth=1)
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels([f"{r['kernel']} {r['case']}: {r['figure']}" for r in rows], fontsize=7)
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(self.matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:.3g}x"))
        ax.xaxis.set_minor_formatter(self.matplotlib.ticker.NullFormatter())
        ax.set_xlabel("current / baseline median time (log scale; right of 1 is slower)")
        ax.set_title(title, loc="left")
        return self.svg(fig, name), len(rows)


COLOURS = {"gpu_kernel_ms": "#1f77b4", "gpu_end_to_end_ms": "#aec7e8", "cpu_1t_ms": "#ff7f0e",
           "cpu_mt_ms": "#ffbb78"}
BASELINE_COLOURS = ["#7f7f7f", "#c7c7c7"]
PEER_COLOURS = ["#2ca02c", "#98df8a", "#9467bd", "#c5b0d5", "#8c564b", "#e377c2"]


def kernel_section(charts, kernel, rows, roofline_gbps, peers, gpu):
    """The table, the bar chart and the scaling chart of one kernel."""
    ours = [m for m in rows if m.get("role") == "kernel"]
    baselines = [m for m in rows if m.get("role") != "kernel"]
    cases = [m["case"] for m in ours]
    series = [(label, COLOURS[key], [median(m.get(key)) for m in ours]) for key, label in TIMES]
    # Baselines (a memcpy of the payload, cub's batched copy) are recorded right after the case they belong to.
    owner, last = {}, None
    for m in rows:
        if m.get("role") == "kernel":
            last = m["case"]
        elif last is not None:
            owner[(m["implementation"], last)] = m
    for b_name in sorted({b["implementation"] for b in baselines}):
        values = [median((owner.get((b_name, c)) or {}).get("gpu_kernel_ms")) for c in cases]
        series.append((f"baseline: {b_name}", BASELINE_COLOURS[len(series) % 2], values))
    peer_rows = {}
    for peer in peers:
        if peer.get("kernel") != kernel:
            continue
        for pc in peer.get("cases", []):
            for r in pc.get("rows", []) or []:
                peer_rows.setdefault(f"peer: {peer.get('peer')}: {r.get('variant')}", {})[pc.get("case")] = \
                    median(r.get("time_ms"))
    for i, (label, by_case) in enumerate(sorted(peer_rows.items())):
        series.append((label, PEER_COLOURS[i % len(PEER_COLOURS)], [by_case.get(c) for c in cases]))
    series = [s for s in series if any(v is not None and v > 0 for v in s[2])]
    roofline = [m["bytes_moved"] / (roofline_gbps * 1e9) * 1e3 if roofline_gbps and m.get("bytes_moved") else None
                for m in ours]
    title = f"{kernel}: median time per case" + ("" if gpu else f" (GPU {NOT_ON_GPU})")
    bars_svg, n_bars = charts.bars(f"{kernel}-times", cases, series, roofline, title)
    lines = []
    for key, label, colour, marker in (("gpu_kernel_ms", "GPU kernel", "#1f77b4", "o"),
                                       ("cpu_1t_ms", "CPU reference, 1 thread", "#ff7f0e", "s"),
                                       ("cpu_mt_ms", "CPU reference, all threads", "#ffbb78", "^")):
        points = []
        for m in ours:
            t, work = median(m.get(key)), m.get("work")
            if key == "cpu_1t_ms" and m.get("cpu_1t_work"):
                work = m["cpu_1t_work"]
            if t and work:
                points.append((m.get("work"), work / t * 1e3))  # t * 1e-3 can round to 0 for a tiny t
        lines.append((label, colour, marker, points))
    unit = ours[0].get("work_unit", "work units") if ours else "work units"
    scaling_svg, n_points = charts.scaling(f"{kernel}-scaling", lines,
                                           f"{kernel}: {unit} per second against problem size")
    n_sizes = len({m.get("work") for m in ours})
    table = []
    for m in rows:
        table.append({
            "case": m["case"], "label": m.get("label", ""), "implementation": m.get("implementation", ""),
            "role": m.get("role", ""), "work": fmt_num(m.get("work"), ".4g", " " + str(m.get("work_unit", ""))),
            "bytes": fmt_num(m.get("bytes_moved"), ".4g", " B"),
            "gpu_kernel": fmt_stats(m.get("gpu_kernel_ms")) if m.get("gpu_kernel_ms") else
            (NOT_ON_GPU if m.get("gpu_status") == "skipped" else "-", ""),
            "gpu_e2e": fmt_stats(m.get("gpu_end_to_end_ms")),
            "gbps": fmt_num(m.get("gpu_gbps"), ".4g"), "roofline": fmt_num(m.get("roofline_percent"), ".3g", "%"),
            "cpu_1t": fmt_stats(m.get("cpu_1t_ms")), "cpu_mt": fmt_stats(m.get("cpu_mt_ms")),
            "threads": fmt_num(m.get("cpu_mt_threads"), "d"),
            "speedup": fmt_num(m.get("speedup_kernel_vs_cpu_mt"), ",.0f" if (m.get("speedup_kernel_vs_cpu_mt") or 0)
                               >= 100 else ".3g", "x"),
            "validated": {True: "yes", False: "NO", None: "-"}.get(m.get("validated"), "-"),
            "error": m.get("error"), "status": m.get("gpu_status", "-"),
        })
    return {"kernel": kernel, "id": "kernel-" + slug(kernel), "table": table,
            "bars": {"svg": bars_svg, "count": n_bars, "labels": cases, "id": f"chart-{slug(kernel)}-times"},
            "scaling": {"svg": scaling_svg, "count": n_points, "labels": [], "id": f"chart-{slug(kernel)}-scaling",
                        "note": "" if n_sizes > 1 else
                        "one problem size per case in this run: run --size small or larger for a curve"}}


def compare(runs, baseline):
    """Every figure of TIMES present in both runs, judged; rows in the order of the current run."""
    base = {(m["kernel"], m["case"], m.get("implementation")): m for m in baseline["measurements"]}
    rows = []
    for m in runs:
        old = base.get((m["kernel"], m["case"], m.get("implementation")))
        if not old:
            continue
        for key, label in TIMES:
            verdict = judge(old.get(key), m.get(key))
            if verdict:
                verdict.update({"kernel": m["kernel"], "case": m["case"], "implementation": m.get("implementation"),
                                "figure": label, "key": key, "id": slug(f"{m['kernel']}-{m['case']}-{key}")})
                rows.append(verdict)
    return rows


TEMPLATE = r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>gpuwitness bench report</title>
<style>
body { font-family: sans-serif; margin: 1.5em auto; max-width: 72em; padding: 0 1em; color: #222; line-height: 1.35; }
h1 { font-size: 1.5em; margin-bottom: .2em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .15em; margin-top: 1.6em; }
table { border-collapse: collapse; font-size: .82em; margin: .5em 0; }
th, td { border: 1px solid #ddd; padding: .2em .45em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
.note { background: #fff8e1; border-left: 4px solid #f0b400; padding: .4em .7em; margin: .6em 0; }
.synthetic { background: #fde0e0; border-left: 6px solid #c00; padding: .5em .8em; font-weight: bold; }
.alarm { background: #fde0e0; border-left: 6px solid #c00; padding: .5em .8em; }
.no-activity td { background: #fdd; color: #a00; }
.throttled td { background: #fff3d6; }
.regression td { background: #fdd; color: #a00; font-weight: bold; }
.faster td { background: #e6f6e6; }
.unknown td { color: #776; }
figure { margin: .8em 0; } figure svg { max-width: 100%; height: auto; }
figcaption { font-size: .85em; color: #555; }
.small { font-size: .85em; color: #555; }
.alarm-text { color: #c00; }
code { background: #f4f4f4; padding: 0 .2em; }
</style>
</head>
<body data-gw-script="not-run">
<header id="summary">
<h1>gpuwitness bench report</h1>
<p>{{ runs|length }} run(s): {% for r in runs %}<code>{{ r.name }}</code> (size {{ r.size }}, result <b>{{ r.result }}</b>){% if not loop.last %}, {% endif %}{% endfor %}.
{% if baseline %}Compared with the baseline <code>{{ baseline.name }}</code>:
<b><span id="regression-count">{{ regressions }}</span> regression(s)</b> beyond the measured spread.{% endif %}</p>
{% for r in runs %}{% if r.synthetic %}<p class="synthetic" data-synthetic="yes">SYNTHETIC DATA, not a measurement: {{ r.synthetic }}</p>{% endif %}{% endfor %}
{% if baseline and baseline.synthetic %}<p class="synthetic" data-synthetic="yes">The baseline is SYNTHETIC, not a measurement: {{ baseline.synthetic }}</p>{% endif %}
{% for r in runs %}{% if r.emulated %}<p class="synthetic" data-emulated="yes">EMULATED, not a GPU measurement: {{ r.emulated }}</p>{% endif %}{% endfor %}
{% if baseline and baseline.emulated %}<p class="synthetic" data-emulated="yes">The baseline is EMULATED, not a GPU measurement: {{ baseline.emulated }}</p>{% endif %}
{% if not any_gpu %}<p class="note" id="no-gpu">GPU figures: {{ not_on_gpu }} (every GPU time, the roofline and the witness receipts are missing; the CPU reference was timed).</p>{% endif %}
</header>

<section id="environment">
<h2>Environment</h2>
{% for r in runs %}
<table class="environment">
<caption><code>{{ r.name }}</code></caption>
{% for k, v in r.environment %}<tr><th>{{ k }}</th><td>{{ v }}</td></tr>
{% endfor %}</table>
{% endfor %}
</section>

{% for k in kernels %}
<section id="{{ k.id }}" class="kernel" data-kernel="{{ k.kernel }}">
<h2>{{ k.kernel }}</h2>
<figure class="chart" id="{{ k.bars.id }}" data-bars="{{ k.bars.count }}" data-labels="{{ k.bars.labels|join('|') }}">
{{ k.bars.svg|safe }}
<figcaption>Median time of every case (the bar's label), log scale: the GPU kernel alone, end to end (upload, launch, download), the CPU reference on one thread and on all threads, the baselines and peers. The black tick is the copy roofline: the least time moving the case's bytes can take on this GPU.{% if not any_gpu %} GPU: {{ not_on_gpu }}.{% endif %}</figcaption>
</figure>
<table class="cases">
<tr><th>case</th><th>implementation</th><th>work</th><th>bytes moved</th><th>GPU kernel</th><th>GPU end to end</th><th>GB/s</th><th>% roofline</th><th>CPU 1 thread</th><th>CPU all threads</th><th>threads</th><th>speedup vs CPU all threads</th><th>validated</th></tr>
{% for t in k.table %}<tr data-case="{{ t.case }}"><td><code>{{ t.case }}</code><br><span class="small">{{ t.label }}</span></td><td>{{ t.implementation }} <span class="small">({{ t.role }})</span></td><td>{{ t.work }}</td><td>{{ t.bytes }}</td><td>{{ t.gpu_kernel[0] }}<br><span class="small">{{ t.gpu_kernel[1] }}</span></td><td>{{ t.gpu_e2e[0] }}<br><span class="small">{{ t.gpu_e2e[1] }}</span></td><td>{{ t.gbps }}</td><td>{{ t.roofline }}</td><td>{{ t.cpu_1t[0] }}<br><span class="small">{{ t.cpu_1t[1] }}</span></td><td>{{ t.cpu_mt[0] }}<br><span class="small">{{ t.cpu_mt[1] }}</span></td><td>{{ t.threads }}</td><td>{{ t.speedup }}</td><td>{{ t.validated }}{% if t.error %}: {{ t.error }}{% endif %}</td></tr>
{% endfor %}</table>
<figure class="chart scaling" id="{{ k.scaling.id }}" data-points="{{ k.scaling.count }}">
{{ k.scaling.svg|safe }}
<figcaption>Scaling: work units per second against the case's problem size, log-log; a line that rises keeps the device busier as the batch grows.{% if k.scaling.note %} <b>{{ k.scaling.note }}</b>.{% endif %}</figcaption>
</figure>
</section>
{% endfor %}

<section id="witness">
<h2>Witness receipts</h2>
<p class="small">What only device code can write: launches, finished blocks, items, the architecture of the code that ran (docs/witness.md). One per case of the last witnessed loop.</p>
<table class="witness">
<tr><th>kernel</th><th>case</th><th>GPU status</th><th>receipt</th><th>GPU activity (monitor)</th></tr>
{% for w in witness %}<tr data-case="{{ w.kernel }}/{{ w.case }}"><td>{{ w.kernel }}</td><td><code>{{ w.case }}</code></td><td>{{ w.status }}</td><td>{% if w.receipt %}<code>{{ w.receipt }}</code>{% else %}{{ not_on_gpu }}{% endif %}</td><td>{% if w.activity == 'none' %}<b class="alarm-text">none</b>{% else %}{{ w.activity }}{% endif %}</td></tr>
{% endfor %}</table>
</section>

<section id="utilisation">
<h2>Utilisation (NVML monitor)</h2>
<p class="small">What NVML saw in each row's window (from the previous row's record to this one; docs/monitor.md): SM busy % is the share of time some kernel ran, not how busy the SMs were; card memory is all processes'; device memory (ours) is what our host path held through <code>cudaMalloc</code>.</p>
{% for n in utilisation.notes %}<p class="note no-utilisation"{% if loop.first %} id="no-utilisation"{% endif %}>{{ no_samples if not utilisation.rows else 'Some rows have no utilisation samples' }}: {{ n }}.</p>
{% endfor %}{% if utilisation.no_activity %}<p class="alarm" id="no-activity" data-count="{{ utilisation.no_activity|length }}"><b>No GPU activity</b> in {{ utilisation.no_activity|length }} row(s) (those whose witness says the kernel ran are marked so in the table; {{ no_activity }}: the driver's samples covered the window and every one, and each of our readings, said 0 %): {% for r in utilisation.no_activity %}<code>{{ r.label }}</code>{% if not loop.last %}, {% endif %}{% endfor %}. A note, not a failure: a kernel of a few milliseconds can fall between samples; a long one with no activity is a CPU fallback.</p>
{% endif %}{% if utilisation.throttled %}<p class="note" id="throttled">Clocks held down (power cap, slowdown, thermal...) in {{ utilisation.throttled|length }} row(s): their times may be slow for that reason.</p>
{% endif %}{% if utilisation.rows %}<figure class="chart" id="chart-utilisation-cases" data-bars="{{ utilisation.cases.count }}" data-labels="{{ utilisation.cases.labels|join('|') }}">
{{ utilisation.cases.svg|safe }}
<figcaption>SM utilisation per row's window: mean (dark) and peak (light) of the monitor's readings, 0-100 %. A case marked in red had no activity in its window.</figcaption>
</figure>
<figure class="chart timeline" id="chart-utilisation-timeline" data-lines="{{ utilisation.steps.count }}">
{{ utilisation.steps.svg|safe }}
<figcaption>The run as a step timeline: each row's window (<code>window_ms</code>) after the previous one, at its SM mean, SM peak and memory peak; dotted lines where a kernel's rows begin, red bands where activity was none.</figcaption>
</figure>
<table class="utilisation">
<tr><th>kernel</th><th>case</th><th>window</th><th>readings</th><th>SM busy mean / peak</th><th>memory busy peak</th><th>device memory (ours), high-water</th><th>card memory used, start → peak</th><th>SM clock</th><th>power peak</th><th>temperature peak</th><th>throttling</th><th>driver samples</th><th>activity</th></tr>
{% for r in utilisation.rows %}<tr data-case="{{ r.kernel }}/{{ r.case }}" data-activity="{{ r.activity }}" data-status="{{ r.status }}"{% if r.activity == 'none' %} class="no-activity"{% elif r.throttled %} class="throttled"{% endif %}><td>{{ r.kernel }}</td><td><code>{{ r.case }}</code><br><span class="small">{{ r.implementation }} ({{ r.role }})</span></td><td>{{ r.window }}</td><td>{{ r.samples }}</td><td>{{ r.sm }}</td><td>{{ r.mem }}</td><td>{{ r.devmem }}</td><td>{{ r.card }}</td><td>{{ r.clocks }}</td><td>{{ r.power }}</td><td>{{ r.temp }}</td><td>{{ r.throttle }}</td><td>{{ r.driver }}</td><td>{% if r.activity == 'none' %}<b>NONE</b>{% if r.witness_ran %} (witness: ran){% endif %}{% else %}{{ r.activity }}{% endif %}{% if r.status == 'lost' %}; device lost{% endif %}</td></tr>
{% endfor %}</table>{% endif %}
</section>

{% if baseline %}
<section id="comparison">
<h2>Comparison with the baseline</h2>
<p>Baseline <code>{{ baseline.name }}</code> ({{ baseline.size }}) against this run. A figure is a <b>regression</b> (red) when its median grew by more than the measured noise, the smaller of the two runs' relative spreads (max &minus; min) / median: nvbench's compare rule (docs/benchmarks.md, "Comparing two runs"). Same GPU? {{ same_gpu }}.</p>
{% if comparison %}<figure class="chart" id="chart-comparison" data-bars="{{ ratio_chart.count }}">
{{ ratio_chart.svg|safe }}
<figcaption>Current / baseline median per figure; red slower beyond the noise, green faster, grey within it, olive unknown (no spread).</figcaption>
</figure>{% endif %}
<table class="comparison">
<tr><th>kernel</th><th>case</th><th>figure</th><th>baseline</th><th>noise</th><th>current</th><th>noise</th><th>ratio</th><th>change</th><th>verdict</th></tr>
{% for c in comparison %}<tr class="{{ 'regression' if c.status == 'slower' else c.status }}" data-case="{{ c.kernel }}/{{ c.case }}" data-figure="{{ c.key }}" data-status="{{ c.status }}"><td>{{ c.kernel }}</td><td><code>{{ c.case }}</code></td><td>{{ c.figure }}</td><td>{{ fmt_ms(c.base) }}</td><td>{{ pct(c.base_noise) }}</td><td>{{ fmt_ms(c.cur) }}</td><td>{{ pct(c.cur_noise) }}</td><td>{{ '%.3f'|format(c.ratio) }}x</td><td>{{ '%+.1f'|format(100 * c.frac) }}%</td><td>{{ {'slower': 'REGRESSION (slower)', 'faster': 'faster', 'same': 'same', 'unknown': 'unknown (no spread)'}[c.status] }}</td></tr>
{% endfor %}</table>
{% if not comparison %}<p class="note">No figure is in both runs.</p>{% endif %}
</section>
{% endif %}

<footer class="small"><p>Made by bench/report.py from gpuwitness bench JSON; every figure is inline SVG and the page loads nothing from elsewhere. Reading guide: docs/benchmarks.md, "The HTML report".</p></footer>
<script>
// The one script: it proves the page's scripts ran (the browser test reads the marker) and counts what the
// comparison marked, so the summary and the table cannot disagree.
(function () {
  var marked = document.querySelectorAll("table.comparison tr.regression").length;
  var count = document.getElementById("regression-count");
  if (count && String(marked) !== count.textContent) count.textContent = marked + " (page said " + count.textContent + ")";
  document.body.setAttribute("data-gw-script", "ran");
  document.body.setAttribute("data-gw-regressions", String(marked));
})();
</script>
</body>
</html>
"""


def environment_rows(doc):
    env = doc.get("environment") or {}
    method = doc.get("method") or {}
    gpu = env.get("gpu")
    rows = []
    if gpu:
        rows.append(("GPU", f"{gpu.get('name')} (compute capability {gpu.get('compute_capability')}, "
                            f"{gpu.get('sm_count')} SMs, {fmt_num((gpu.get('memory_bytes') or 0) / 2**30, '.1f')} "
                            f"GiB, L2 {fmt_num((gpu.get('l2_bytes') or 0) / 2**20, '.0f')} MiB)"))
    else:
        rows.append(("GPU", f"{NOT_ON_GPU}: {env.get('gpu_skipped_reason') or 'no GPU part'}"))
    roofline = doc.get("roofline")
    rows.append(("copy roofline", f"{roofline.get('gbps'):.1f} GB/s ({roofline.get('implementation')})"
                 if roofline and roofline.get("gbps") else NOT_ON_GPU))
    for key, label in ENVIRONMENT:
        if key in env:
            rows.append((label, "-" if env[key] is None else str(env[key])))
    rows.append(("size, seed", f"{method.get('size')}, {method.get('seed')}"))
    rows.append(("repetitions", f"GPU {method.get('reps')}"
                 f"{' (below the method minimum: a smoke run)' if method.get('reps_below_method_minimum') else ''}, "
                 f"CPU {method.get('cpu_reps')}"))
    rows.append(("statistic", str(method.get("statistic"))))
    rows.append(("L2 flush", str(method.get("l2_flush"))))
    return rows


def fmt_bytes(v):
    if v is None:
        return "-"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if v >= scale:
            return f"{v / scale:.3g} {unit}"
    return f"{v:.0f} B"


def utilisation_view(docs):
    """The utilisation section from every row's "monitor" object (docs/monitor.md, "JSON keys"): the rows with
    readings (status ok or lost) for the table and the charts, and a note for what has none (no monitor
    object at all, NVML unavailable with its reason, the monitor off)."""
    rows, quiet, runs_without = [], {}, []
    for path, doc in docs:
        method_mon = (doc.get("method") or {}).get("monitor")
        carried = False
        for m in doc["measurements"]:
            mon = m.get("monitor")
            if not isinstance(mon, dict):
                continue
            carried = True
            status = mon.get("status")
            if status not in ("ok", "lost"):
                why = ("NVML unavailable: " + str(mon.get("reason") or (method_mon or {}).get("reason") or
                                                  "no reason given")) if status == "unavailable" else \
                    "the monitor was off (--no-monitor)" if status == "off" else f"monitor status {status!r}"
                quiet[why] = quiet.get(why, 0) + 1
                continue
            get = mon.get
            throttle = [t for t in (get("throttle_reasons") or []) if t != "gpu_idle"]
            clocks = "-" if get("sm_clock_min_mhz") is None else \
                f"{get('sm_clock_min_mhz')}..{get('sm_clock_max_mhz')} MHz"
            rows.append({
                "kernel": m.get("kernel"), "case": m.get("case"), "role": m.get("role", ""),
                "implementation": m.get("implementation", ""), "gpu_status": m.get("gpu_status"),
                "label": f"{m.get('kernel')} {m.get('case')}", "status": status,
                "window_ms": get("window_ms"), "window": fmt_num(get("window_ms"), ".4g", " ms"),
                "samples": fmt_num(get("samples"), "d") + (f" @ {get('period_ms')} ms" if get("period_ms") else ""),
                "sm_mean": get("sm_util_mean_pct"), "sm_peak": get("sm_util_peak_pct"),
                "mem_peak": get("mem_util_peak_pct"),
                "sm": f"{fmt_num(get('sm_util_mean_pct'), '.3g', '%')} / {fmt_num(get('sm_util_peak_pct'), 'd', '%')}",
                "mem": fmt_num(get("mem_util_peak_pct"), "d", "%"),
                "devmem": f"{fmt_bytes(get('devmem_high_water_bytes'))} in {fmt_num(get('devmem_allocations'), 'd')}"
                          f" cudaMalloc",
                "card": f"{fmt_bytes(get('mem_used_start_bytes'))} → {fmt_bytes(get('mem_used_peak_bytes'))}",
                "clocks": clocks, "power": fmt_num(get("power_peak_w"), ".4g", " W"),
                "temp": fmt_num(get("temperature_peak_c"), "d", " C"),
                "throttle": ("THROTTLED: " if get("throttled") else "") + (", ".join(throttle) or "none")
                            if get("throttle_reasons") is not None else "-",
                "throttled": bool(get("throttled")),
                "driver": f"{fmt_num(get('driver_samples'), 'd')} ({fmt_num(get('driver_busy_samples'), 'd')} busy)",
                "activity": get("activity") or "-",
                "witness_ran": m.get("gpu_status") == "ran" or bool(m.get("witness")),
            })
        if not carried:
            runs_without.append(path)
    notes = [f"{why} ({n} row(s))" for why, n in quiet.items()]
    if runs_without:
        notes.insert(0, "the rows carry no monitor object (a result from before the monitor)")
    return rows, notes


def render(run_paths, baseline_path, peer_paths):
    from jinja2 import Environment
    docs = [(p, load(p, BENCH)) for p in run_paths]
    baseline = load(baseline_path, BENCH) if baseline_path else None
    peers = [load(p, PEER) for p in peer_paths]
    charts = Charts()
    measurements, seen = [], {}
    for path, doc in docs:
        for m in doc["measurements"]:
            key = (m.get("kernel"), m.get("case"), m.get("implementation"))
            if key in seen:
                fail(f"'{path}': {key[0]} {key[1]} ({key[2]}) is also in '{seen[key]}': give each case once")
            seen[key] = path
            m = dict(m)
            m["_roofline"] = ((doc.get("roofline") or {}).get("gbps"))
            measurements.append(m)
    any_gpu = any((doc.get("environment") or {}).get("gpu") for _, doc in docs)
    kernels = []
    for kernel in dict.fromkeys(m["kernel"] for m in measurements):
        rows = [m for m in measurements if m["kernel"] == kernel]
        roofline = next((m["_roofline"] for m in rows if m["_roofline"]), None)
        kernels.append(kernel_section(charts, kernel, rows, roofline, peers,
                                      any(m.get("gpu_status") == "ran" for m in rows)))
    witness = [{"kernel": m["kernel"], "case": m["case"], "status": m.get("gpu_status", "-"),
                "receipt": m.get("witness")} for m in measurements if m.get("role") == "kernel"]
    util_rows, util_notes = utilisation_view(docs)
    utilisation = {"rows": util_rows, "notes": util_notes, "cases": None, "steps": None,
                   "no_activity": [r for r in util_rows if r["activity"] == "none"],
                   "throttled": [r for r in util_rows if r["throttled"]]}
    if util_rows:
        svg, count = charts.utilisation_bars("utilisation-cases", util_rows, "SM utilisation per case")
        utilisation["cases"] = {"svg": svg, "count": count, "labels": [r["label"] for r in util_rows]}
        svg, count = charts.utilisation_steps("utilisation-timeline", util_rows,
                                              "utilisation across the run, one step per row's window")
        utilisation["steps"] = {"svg": svg, "count": count}
    activity = {(r["kernel"], r["case"]): r["activity"] for r in util_rows}
    for w in witness:
        w["activity"] = activity.get((w["kernel"], w["case"]), "-")
    comparison, ratio_chart, same_gpu = [], None, None
    if baseline:
        comparison = compare(measurements, baseline)
        if comparison:
            svg, count = charts.ratios("comparison", comparison, "current / baseline")
            ratio_chart = {"svg": svg, "count": count}
        gpu_names = {str(((d.get("environment") or {}).get("gpu") or {}).get("name")) for _, d in docs}
        old_gpu = str(((baseline.get("environment") or {}).get("gpu") or {}).get("name"))
        same_gpu = "yes" if gpu_names == {old_gpu} else \
            f"no: {old_gpu} against {', '.join(sorted(gpu_names))} (absolute times differ between machines)"

    def name(path):
        return "this run (gpuwitness bench --html)" if path == "-" else os.path.basename(path)

    def pct(v):
        return "-" if v is None else f"{100 * v:.1f}%"

    env = Environment(autoescape=True)
    page = env.from_string(TEMPLATE).render(
        runs=[{"name": name(p), "size": d["method"].get("size"), "result": d.get("result"),
               "synthetic": d.get("synthetic"), "emulated": d.get("emulated"), "environment": environment_rows(d)}
              for p, d in docs],
        baseline={"name": name(baseline_path), "size": baseline["method"].get("size"),
                  "synthetic": baseline.get("synthetic"), "emulated": baseline.get("emulated")} if baseline else None,
        kernels=kernels, witness=witness, utilisation=utilisation, comparison=comparison, ratio_chart=ratio_chart,
        regressions=sum(1 for c in comparison if c["status"] == "slower"), same_gpu=same_gpu, any_gpu=any_gpu,
        not_on_gpu=NOT_ON_GPU, no_samples=NO_SAMPLES, no_activity=NO_ACTIVITY, fmt_ms=fmt_ms, pct=pct)
    return page


def output_problem(path):
    """Why -o path cannot be the page (bad usage), or None: it must be a regular file or absent, in a directory
    that exists (the project's staged outputs refuse any other target too, lib/io/include/gw_outfile.h)."""
    try:
        return not_regular(os.stat(path).st_mode)
    except FileNotFoundError:
        directory = os.path.dirname(path) or "."  # "new/" names the directory "new"
        return None if os.path.isdir(directory) else f"no directory '{directory}' to write it in"
    except OSError as e:
        return e.strerror


def write(path, text):
    data = text.encode("utf-8")  # the page says charset utf-8, whatever the locale
    if path == "-":
        try:
            sys.stdout.buffer.write(data)
            sys.stdout.flush()
        except OSError as e:
            # A reader that left (| head): say it once; stdout goes to /dev/null so Python's flush at exit is quiet.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            fail(f"standard output: cannot write the page: {e.strerror}")
        return
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=".gw-report-", suffix=".tmp", dir=os.path.dirname(path) or ".")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError as e:
        fail(f"'{path}': cannot write: {e.strerror}")
    finally:
        # Nothing staged is left behind, whatever stopped the write (an error, Ctrl-C).
        if tmp and os.path.exists(tmp):
            os.unlink(tmp)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="*", metavar="RUN.json", help="gpuwitness bench --json files; - for stdin")
    parser.add_argument("--baseline", metavar="OLD.json", help="an earlier run to compare with")
    parser.add_argument("--peer", action="append", default=[], metavar="PEER.json",
                        help="a peer's timings (bench/peers/*.py); their outputs are checked by merge.py")
    parser.add_argument("-o", "--output", default="-", metavar="OUT.html", help="the page; - for stdout")
    parser.add_argument("--check-deps", action="store_true",
                        help="print the missing dependencies (module and Debian package), exit 1 if any")
    parser.add_argument("--check", metavar="RUN.json",
                        help="only check that RUN.json is a bench result a page can be made from (exit 0 or 1); "
                        "gpuwitness bench checks its --baseline so before any work")
    args = parser.parse_args()
    if args.check:
        load(args.check, BENCH)
        return 0
    missing = missing_dependencies()
    if args.check_deps:
        for module, package, why in missing:
            print(f"{module} (Debian package {package}: {why})")
        return 1 if missing else 0
    if not args.runs:
        parser.error("give at least one RUN.json")
    if args.runs.count("-") > 1:
        parser.error("RUN - (stdin) given more than once")
    problem = output_problem(args.output) if args.output != "-" else None
    if problem:
        parser.error(f"-o '{args.output}': {problem}")
    if missing:
        fail("missing: " + ", ".join(f"{m} (Debian package {p}: {w})" for m, p, w in missing))
    write(args.output, render(args.runs, args.baseline, args.peer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
