#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The hostile-input suite of bench/report.py, the HTML report of `gpuwitness bench` (test hostile_report,
labels hostile and host; docs/benchmarks.md, "The HTML report").

usage: gw_hostile_report.py REPORT_PY PYTHON WORKDIR

Runs PYTHON REPORT_PY against generated inputs of every class a hostile tester tried, each case in a folder
of its own under WORKDIR: FIFOs, /dev/zero and a directory as inputs; documents derived from the committed
fixture tests/report/bench-cpu-smoke.json with one thing broken (a missing key, a wrong type, NaN, Infinity,
a negative time, nesting 100,000 deep); text that matplotlib would draw as mathtext or that is HTML; -o naming
a directory, a FIFO or a path in a missing directory; stdout a closed pipe. A case passes when the script
finishes within LIMIT_S with its exit status, prints its words on stderr and no Python traceback, and leaves
its folder holding exactly what it held plus the outputs it is meant to write (non-empty). A few controls
render valid inputs. Stdlib only.

Exit status: 0 every case passed; 1 a case failed; 77 skipped (PYTHON cannot run REPORT_PY: matplotlib or
Jinja2 missing) unless CI is set or GW_REQUIRE_GPU=1, where a skip is a failure (docs/testing.md, "Exit
codes").
"""
import json
import os
import re
import resource
import shutil
import subprocess
import sys

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "report", "bench-cpu-smoke.json")
LIMIT_S = 20
# A reader that never stops (/dev/zero read to the end) must die of this, not take the machine's memory.
MEMORY_LIMIT = 4 << 30
FIFO, DIRECTORY, DELETE = object(), object(), object()
ROW0 = "measurements[0] (grid_d4 arc-n1000-rot90)"


def fixture():
    """The committed CPU smoke run cut to its first three rows (a kernel row and its two baselines)."""
    with open(FIXTURE, encoding="utf-8") as f:
        doc = json.load(f)
    doc["measurements"] = doc["measurements"][:3]
    return doc


def peer():
    """A valid peer timings file (bench/peers/peer_util.py) for the fixture's first case."""
    return {"schema": "gpuwitness-bench-peer/1", "peer": "torch", "kernel": "grid_d4",
            "cases": [{"case": "arc-n1000-rot90", "rows": [
                {"variant": "padded", "time_ms": {"min": 0.1, "median": 0.2, "max": 0.3, "reps": 3}}]}]}


def put(*path_value):
    """A change to a document: the value at path (keys and indices) set, or deleted with DELETE."""
    *path, value = path_value

    def change(doc):
        for key in path[:-1]:
            doc = doc[key]
        if value is DELETE:
            del doc[path[-1]]
        else:
            doc[path[-1]] = value
    return change


def changed(*changes, make=fixture):
    """The JSON text of make() after the changes (a change may return a new document); NaN and Infinity
    written as the literals Python's json reads back."""
    doc = make()
    for change in changes:
        doc = change(doc) or doc
    return json.dumps(doc).encode()


def case(cls, name, rc, words, args, files=None, outputs=(), stdin=None, closed_stdout=False, check=None):
    return {"cls": cls, "name": name, "rc": rc, "words": words, "args": args, "files": files or {},
            "outputs": outputs, "stdin": stdin, "closed_stdout": closed_stdout, "check": check}


def bad_run(name, words, *changes, cls="malformed"):
    """The fixture with changes as RUN: exit 1 and the words, nothing written."""
    return case(cls, name, 1, ["report.py: 'in.json': " + words], ["in.json", "-o", "out.html"],
                {"in.json": changed(*changes)})


def bad_peer(name, words, *changes, cls="malformed"):
    return case(cls, name, 1, ["report.py: 'peer.json': " + words],
                ["run.json", "--peer", "peer.json", "-o", "out.html"],
                {"run.json": changed(), "peer.json": changed(*changes, make=peer)})


def drawn_literally(text):
    """The page draws text in an SVG <text> element as it is written (no mathtext: matplotlib's mathtext
    comes out as <tspan> runs with svg.fonttype none, or as glyph outlines otherwise) and shows it in the table."""
    def check(page):
        problems = []
        if text not in re.findall(r"<text\b[^>]*>([^<]*)</text>", page):
            problems.append(f"no SVG <text> holds {text!r} as it is written")
        if "<tspan" in page:
            problems.append("the SVG has <tspan> runs: text from the document was drawn as mathtext")
        if re.search(r"<path id=\"(DejaVu|STIX|Cm)", page):
            problems.append("the SVG has glyph outlines: text was drawn as paths")
        if f"<code>{text}</code>" not in page:
            problems.append(f"the table lacks <code>{text}</code>")
        return problems
    return check


def escaped(page):
    """The page's own script is the only one; the case named as a script is there, escaped."""
    problems = []
    if page.count("<script") != 1:
        problems.append(f"{page.count('<script')} <script> tags, want only the page's own")
    if "&lt;script&gt;alert" not in page:
        problems.append("the case name is not on the page, escaped")
    return problems


def contains(*words):
    return lambda page: [f"the page lacks {w!r}" for w in words if w not in page]


def cases():
    run = {"run.json": changed()}
    out = ["-o", "out.html"]
    yield case("control", "the fixture renders", 0, [], ["run.json"] + out, run, ["out.html"],
               check=contains("gpuwitness bench report", "arc-n1000-rot90"))
    yield case("control", "RUN - reads stdin", 0, [], ["-"] + out, stdin=changed(), outputs=["out.html"])
    yield case("control", "with --baseline and --peer", 0, [],
               ["run.json", "--baseline", "old.json", "--peer", "peer.json"] + out,
               {**run, "old.json": changed(), "peer.json": changed(make=peer)}, ["out.html"],
               check=contains("peer: torch: padded", 'id="comparison"'))

    # Special files: refused at once, never read (they would block, or never end).
    for role, args in (("RUN", ["in.json"]), ("--baseline", ["run.json", "--baseline", "in.json"]),
                       ("--peer", ["run.json", "--peer", "in.json"])):
        yield case("special files", f"a FIFO as {role}", 1, ["report.py: 'in.json': not a regular file (a FIFO)"],
                   args + out, {**run, "in.json": FIFO})
    yield case("special files", "/dev/zero as RUN", 1,
               ["report.py: '/dev/zero': not a regular file (a character device)"], ["/dev/zero"] + out)
    yield case("special files", "/dev/zero as --baseline", 1,
               ["report.py: '/dev/zero': not a regular file (a character device)"],
               ["run.json", "--baseline", "/dev/zero"] + out, run)
    yield case("special files", "a directory as RUN", 1, ["report.py: 'in.json': not a regular file (a directory)"],
               ["in.json"] + out, {"in.json": DIRECTORY})

    # Malformed documents: one line naming where and the rule.
    m0, row = ("measurements", 0), ROW0
    yield case("malformed", "an empty file", 1, ["report.py: 'in.json': not valid JSON"], ["in.json"] + out,
               {"in.json": b""})
    yield case("malformed", "JSON cut short", 1, ["report.py: 'in.json': not valid JSON"], ["in.json"] + out,
               {"in.json": changed()[:-40]})
    yield case("malformed", "bytes that are not UTF-8", 1, ["report.py: 'in.json': not valid JSON", "utf-8"],
               ["in.json"] + out, {"in.json": b'{"schema": "\xff"}'})
    yield bad_run("the document a list", "the document: must be an object, not a list", lambda d: [d])
    yield bad_run("schema missing", 'schema: must be "gpuwitness-bench/1"', put("schema", DELETE))
    yield bad_run("environment missing", "environment: must be an object, not missing", put("environment", DELETE))
    yield bad_run("environment a list", "environment: must be an object, not a list", put("environment", []))
    yield bad_run("method a string", 'method: must be an object, not "smoke"', put("method", "smoke"))
    yield bad_run("method.monitor a list", "method.monitor: must be an object, not a list",
                  put("method", "monitor", []))
    yield bad_run("measurements an object", "measurements: must be a list, not an object", put("measurements", {}))
    yield bad_run("a measurement a number", "measurements[1]: must be an object, not 42", put("measurements", 1, 42))
    yield bad_run("a measurement without kernel", "measurements[0].kernel: must be a string of Unicode text, "
                  "not missing", put(*m0, "kernel", DELETE))
    yield bad_run("kernel a number", "measurements[0].kernel: must be a string of Unicode text, not 7",
                  put(*m0, "kernel", 7))
    yield bad_run("case a list", "measurements[0].case: must be a string of Unicode text, not a list",
                  put(*m0, "case", ["a"]))
    yield bad_run("a baseline row without implementation", "measurements[1].implementation: must be a string",
                  put("measurements", 1, "implementation", DELETE))
    yield bad_run("a time a string", f'{row}.cpu_1t_ms.median: must be a finite number >= 0, not "fast"',
                  put(*m0, "cpu_1t_ms", "median", "fast"))
    yield bad_run("a timing a list", f"{row}.cpu_mt_ms: must be an object, not a list",
                  put(*m0, "cpu_mt_ms", [1, 2, 3]))
    yield bad_run("a timing without max", f"{row}.cpu_1t_ms.max: must be a finite number >= 0, not missing",
                  put(*m0, "cpu_1t_ms", "max", DELETE))
    yield bad_run("environment.gpu a string", 'environment.gpu: must be an object, not "H100"',
                  put("environment", "gpu", "H100"))
    yield bad_run("GPU memory a string", 'environment.gpu.memory_bytes: must be a finite number >= 0, not "80GB"',
                  put("environment", "gpu", {"name": "X", "memory_bytes": "80GB"}))
    yield bad_run("roofline a list", "roofline: must be an object, not a list", put("roofline", [1]))
    yield bad_run("work a string", f'{row}.work: must be a finite number >= 0, not "1000"', put(*m0, "work", "1000"))
    yield bad_run("threads a fraction", f"{row}.cpu_mt_threads: must be a whole number >= 0, not 2.5",
                  put(*m0, "cpu_mt_threads", 2.5))
    yield bad_run("validated a list", f"{row}.validated: must be true or false, not a list",
                  put(*m0, "validated", [True]))
    yield bad_run("monitor a string", f'{row}.monitor: must be an object, not "ok"', put(*m0, "monitor", "ok"))
    yield bad_run("SM peak a fraction", f"{row}.monitor.sm_util_peak_pct: must be a whole number >= 0, not 12.5",
                  put(*m0, "monitor", "status", "ok"), put(*m0, "monitor", "sm_util_peak_pct", 12.5))
    yield bad_run("throttle reasons numbers", f"{row}.monitor.throttle_reasons[0]: must be a string",
                  put(*m0, "monitor", "status", "ok"), put(*m0, "monitor", "throttle_reasons", [1, 2]))
    yield bad_run("synthetic a list", "synthetic: must be a string of Unicode text, not a list",
                  put("synthetic", ["x"]))
    yield bad_run("a lone surrogate in a case name",
                  'measurements[0].case: must be a string of Unicode text, not "\\ud800"', put(*m0, "case", "\ud800"))
    yield bad_run("an integer no float can hold",
                  "environment.gpu.memory_bytes: must be a finite number >= 0, not a number too large for a float",
                  put("environment", "gpu", {"name": "X", "memory_bytes": 10 ** 400}))
    yield case("malformed", "a malformed --baseline", 1,
               ["report.py: 'old.json': measurements: must be a list, not an object"],
               ["run.json", "--baseline", "old.json"] + out, {**run, "old.json": changed(put("measurements", {}))})
    yield bad_peer("a bench result as --peer", 'schema: must be "gpuwitness-bench-peer/1"', lambda p: fixture())
    yield bad_peer("peer cases not a list", "cases: must be a list, not an object", put("cases", {}))
    yield bad_peer("a peer time a string", 'cases[0].rows[0].time_ms: must be an object, not "slow"',
                   put("cases", 0, "rows", 0, "time_ms", "slow"))
    yield case("malformed", "nested 100,000 deep", 1,
               ["report.py: 'in.json': not valid JSON here: nested deeper"], ["in.json"] + out,
               {"in.json": b"[" * 100000 + b"]" * 100000})

    # Figures the page shows: finite and >= 0, or null.
    for name, key, value, shown in (("NaN", "median", float("nan"), "NaN"),
                                    ("Infinity", "max", float("inf"), "Infinity"),
                                    ("-1", "min", -1, "-1")):
        yield bad_run(f"a time of {name}", f"{row}.cpu_1t_ms.{key}: must be a finite number >= 0, not {shown}",
                      put(*m0, "cpu_1t_ms", key, value), cls="figures")
    yield bad_run("a time of -Infinity", f"{row}.gpu_kernel_ms.min: must be a finite number >= 0, not -Infinity",
                  put(*m0, "gpu_kernel_ms", {"min": float("-inf"), "median": 1, "max": 2, "reps": 3}), cls="figures")
    yield bad_run("min above the median", f"{row}.cpu_mt_ms: must hold min <= median <= max",
                  put(*m0, "cpu_mt_ms", "min", 5.0), cls="figures")
    yield bad_run("a roofline of NaN GB/s", "roofline.gbps: must be a finite number >= 0, not NaN",
                  put("roofline", {"gbps": float("nan"), "implementation": "copy"}), cls="figures")
    yield bad_run("a monitor window of -1 ms", f"{row}.monitor.window_ms: must be a finite number >= 0, not -1",
                  put(*m0, "monitor", "window_ms", -1), cls="figures")
    yield bad_run("bytes moved Infinity", f"{row}.bytes_moved: must be a finite number >= 0, not Infinity",
                  put(*m0, "bytes_moved", float("inf")), cls="figures")
    yield bad_peer("a peer time of NaN", "cases[0].rows[0].time_ms.median: must be a finite number >= 0, not NaN",
                   put("cases", 0, "rows", 0, "time_ms", "median", float("nan")), cls="figures")

    # Text from the document: drawn as written, escaped in the HTML.
    yield case("text", "a case named $x^2$", 0, [], ["in.json"] + out,
               {"in.json": changed(put(*m0, "case", "$x^2$"))}, ["out.html"], check=drawn_literally("$x^2$"))
    yield case("text", "a case named <script>", 0, [], ["in.json"] + out,
               {"in.json": changed(put(*m0, "case", "<script>alert(1)</script>"))}, ["out.html"], check=escaped)

    # Usage: exit 2 naming the option, before anything is read or written.
    yield case("usage", "-o a directory", 2, ["-o 'out': not a regular file (a directory)"], ["run.json", "-o", "out"],
               {**run, "out": DIRECTORY})
    yield case("usage", "-o a FIFO", 2, ["-o 'out.html': not a regular file (a FIFO)"], ["run.json"] + out,
               {**run, "out.html": FIFO})
    yield case("usage", "-o in a missing directory", 2, ["-o 'missing/out.html': no directory 'missing'"],
               ["run.json", "-o", "missing/out.html"], run)
    yield case("usage", "RUN - twice", 2, ["RUN - (stdin) given more than once"], ["-", "-"] + out, stdin=changed())

    yield case("output", "stdout a closed pipe", 1, ["report.py: standard output: cannot write the page"],
               ["run.json"], run, closed_stdout=True)


def listing(folder):
    return sorted(os.path.relpath(os.path.join(top, name), folder)
                  for top, dirs, files in os.walk(folder) for name in dirs + files)


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_case(c, folder, python, report, env):
    """The problems of one case (an empty list: it passed) and its stderr."""
    os.mkdir(folder)
    for name, content in c["files"].items():
        path = os.path.join(folder, name)
        if content is FIFO:
            os.mkfifo(path)
        elif content is DIRECTORY:
            os.mkdir(path)
        else:
            with open(path, "wb") as f:
                f.write(content)
    before = listing(folder)
    streams = {"input": c["stdin"]} if c["stdin"] is not None else {"stdin": subprocess.DEVNULL}
    read_end, write_end = os.pipe()
    if c["closed_stdout"]:
        os.close(read_end)  # the reader left before the page came
    problems, stderr = [], ""
    try:
        r = subprocess.run([python, report] + c["args"], cwd=folder, env=env, timeout=LIMIT_S,
                           stdout=write_end if c["closed_stdout"] else subprocess.DEVNULL, stderr=subprocess.PIPE,
                           preexec_fn=limit_memory, **streams)
        stderr = r.stderr.decode(errors="replace")
        if r.returncode != c["rc"]:
            problems.append(f"exit {r.returncode}, want {c['rc']}")
    except subprocess.TimeoutExpired as e:
        stderr = (e.stderr or b"").decode(errors="replace")
        problems.append(f"did not finish within {LIMIT_S} s")
    finally:
        os.close(write_end)
        if not c["closed_stdout"]:
            os.close(read_end)
    problems += [f"stderr lacks {w!r}" for w in c["words"] if w not in stderr]
    if "Traceback" in stderr:
        problems.append("a Python traceback on stderr")
    want = sorted(set(before) | set(c["outputs"]))
    if listing(folder) != want:
        problems.append(f"the folder holds {listing(folder)}, want {want}")
    for name in c["outputs"]:
        path = os.path.join(folder, name)
        if not os.path.isfile(path) or os.path.getsize(path) == 0:
            problems.append(f"{name} is missing or empty")
        elif c["check"]:
            with open(path, encoding="utf-8", errors="replace") as f:
                problems += c["check"](f.read())
    return problems, stderr


def skip(reason):
    ci, require = os.environ.get("CI", ""), os.environ.get("GW_REQUIRE_GPU", "")
    if (ci and ci != "false") or require == "1":
        print(f"FAIL: {reason}, and {'CI is set' if ci and ci != 'false' else 'GW_REQUIRE_GPU=1'}: the suite must run "
              "here (ci/setup installs python3-matplotlib and python3-jinja2)")
        sys.exit(1)
    print(f"SKIPPED: {reason} (docs/benchmarks.md, \"The HTML report\")")
    sys.exit(77)


def main():
    if len(sys.argv) != 4:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    report, python, work = os.path.abspath(sys.argv[1]), sys.argv[2], os.path.abspath(sys.argv[3])
    try:
        deps = subprocess.run([python, report, "--check-deps"], capture_output=True, text=True, timeout=60)
    except OSError as e:
        skip(f"cannot run {python}: {e.strerror}")
    if deps.returncode != 0:
        skip(f"{report} cannot run: missing {deps.stdout.strip() or deps.stderr.strip()}")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    # One matplotlib cache for every case, outside the case folders; one BLAS thread keeps numpy's start-up
    # inside MEMORY_LIMIT on machines with many cores.
    env = dict(os.environ, MPLCONFIGDIR=os.path.join(work, "mplconfig"), OPENBLAS_NUM_THREADS="1",
               OMP_NUM_THREADS="1")
    failed = 0
    all_cases = list(cases())
    for n, c in enumerate(all_cases, 1):
        problems, stderr = run_case(c, os.path.join(work, f"case{n}"), python, report, env)
        if problems:
            failed += 1
            print(f"FAIL {c['cls']}: {c['name']}: {'; '.join(problems)}")
            for line in stderr.strip().splitlines()[-3:]:
                print(f"    stderr: {line}")
        else:
            print(f"ok   {c['cls']}: {c['name']}")
    print(f"gw_hostile_report: {len(all_cases)} cases, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
