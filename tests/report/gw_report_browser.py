#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The HTML report of `gpuwitness bench` in a real browser (label `browser`, tests/report/CMakeLists.txt).

usage: gw_report_browser.py --report bench/report.py --fixture RUN.json [--baseline OLD.json]
           [--regression KERNEL/CASE:FIGURE ...] --workdir DIR --screenshot OUT.png

Renders the page from a committed bench JSON fixture with report.py, opens it in headless Chromium once
(--dump-dom and --screenshot in one run, console messages on stderr) and checks what the browser built:
the page's own script ran (a marker only it sets) and logged nothing; every section is there (environment,
one per kernel of the fixture, witness, utilisation, comparison with --baseline); every chart has its bars
(or lines) and its labels as text; GPU figures or the "not measured on a GPU" notes as the fixture says; the
witness receipts; the utilisation section from the rows' "monitor" objects (keys as docs/monitor.md's table,
per-case chart, step timeline, table, every "activity: none" flagged) or the "no utilisation samples" note
with NVML's reason; with --baseline exactly the planted regressions marked, nothing else; and nothing on the
page points outside it. Stdlib only.

Exit status: 0 pass, 1 fail, 77 skipped (Chromium, matplotlib or Jinja2 missing) unless CI is set or
GW_REQUIRE_GPU=1, where a skip is a failure (docs/testing.md, "Exit codes").
"""
import argparse
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import time

PYTHON = sys.executable or "/usr/bin/python3"


def must_not_skip():
    ci, require = os.environ.get("CI", ""), os.environ.get("GW_REQUIRE_GPU", "")
    if ci and ci != "false":
        return "CI is set"
    if require == "1":
        return "GW_REQUIRE_GPU=1"
    return None


def skip(reason):
    why = must_not_skip()
    if why:
        print(f"FAIL: {reason}, and {why}: the browser test must run here (ci/setup installs chromium, "
              "python3-matplotlib and python3-jinja2)")
        sys.exit(1)
    print(f"SKIPPED: {reason} (docs/benchmarks.md, \"The HTML report\")")
    sys.exit(77)


failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
    return ok


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.children, self.text = tag, dict(attrs), parent, [], []

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()

    def all_text(self):
        return "".join(n_text for n in self.walk() for n_text in n.text)

    def find_all(self, pred):
        return [n for n in self.walk() if pred(n)]


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Tree(html.parser.HTMLParser):
    """Enough of a DOM: elements with attributes and text, for the serialised DOM Chromium dumps."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {}, None)
        self.cur = self.root

    def handle_starttag(self, tag, attrs):
        node = Node(tag, attrs, self.cur)
        self.cur.children.append(node)
        if tag not in VOID:
            self.cur = node

    def handle_startendtag(self, tag, attrs):
        self.cur.children.append(Node(tag, attrs, self.cur))

    def handle_endtag(self, tag):
        n = self.cur
        while n is not self.root and n.tag != tag:
            n = n.parent
        if n is not self.root:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.text.append(data)


def by_id(root, ident):
    found = root.find_all(lambda n: n.attrs.get("id") == ident)
    return found[0] if found else None


def check_chart(fig, labels_expected):
    """A figure.chart: its bars or lines (ids the report gives them) and its labels as SVG text."""
    ident = fig.attrs.get("id")
    svg = fig.find_all(lambda n: n.tag == "svg")
    if not check(svg, f"{ident}: no inline <svg>"):
        return
    texts = [t.all_text().strip() for t in fig.find_all(lambda n: n.tag == "text")]
    check(len([t for t in texts if t]) >= 3, f"{ident}: fewer than 3 text labels in the chart ({texts})")
    if "data-bars" in fig.attrs:
        bars = fig.find_all(lambda n: n.attrs.get("id", "").startswith("bar-"))
        want = int(fig.attrs["data-bars"])
        check(want > 0 and len(bars) == want, f"{ident}: {len(bars)} bars drawn, the page says {want}")
        for b in bars:
            check(b.find_all(lambda n: n.tag == "path"), f"{ident}: bar {b.attrs['id']} has no shape")
    elif "data-points" in fig.attrs or "data-lines" in fig.attrs:
        lines = fig.find_all(lambda n: n.attrs.get("id", "").startswith("line-"))
        check(lines, f"{ident}: no line drawn")
    for label in labels_expected:
        check(label in texts, f"{ident}: label '{label}' missing from the chart's text")


def monitor_doc_keys(report):
    """The keys of docs/monitor.md's "JSON keys" table, in order (None where the doc is not beside the report)."""
    doc = os.path.join(os.path.dirname(os.path.abspath(report)), "..", "docs", "monitor.md")
    if not os.path.exists(doc):
        return None
    text = open(doc, encoding="utf-8").read()
    section = text[text.index("## JSON keys"):]
    section = section[:section.index("\n## ", 3)]
    return re.findall(r"^\| `([a-z_]+)` \|", section, re.M)


def check_utilisation(root, fixture, report):
    """The utilisation section against the rows' "monitor" objects (docs/monitor.md): with readings, the per-case
    chart (SM mean and peak bars, case labels), the step timeline (its lines, the kernels named), a table row per
    row with the fixture's activity, every "activity: none" flagged; without, the note and its reason."""
    rows = fixture["measurements"]
    keys = monitor_doc_keys(report)
    for m in rows:
        mon = m.get("monitor")
        if isinstance(mon, dict) and keys:
            check(list(mon) == keys, f"fixture row {m['kernel']} {m['case']}: monitor keys {list(mon)} are not "
                  f"docs/monitor.md's {keys}")
    read = [m for m in rows if isinstance(m.get("monitor"), dict) and m["monitor"].get("status") in ("ok", "lost")]
    section = by_id(root, "utilisation")
    if section is None:
        return
    if not read:
        note = by_id(root, "no-utilisation")
        if check(note is not None and "no utilisation samples in this run" in note.all_text(),
                 "the 'no utilisation samples in this run' note is missing"):
            for m in rows:
                mon = m.get("monitor")
                if isinstance(mon, dict) and mon.get("status") == "unavailable":
                    want = f"NVML unavailable: {mon.get('reason')}"
                    check(want in section.all_text(), f"the utilisation note does not say '{want}'")
                elif isinstance(mon, dict) and mon.get("status") == "off":
                    check("--no-monitor" in section.all_text(), "the utilisation note does not say the monitor was off")
        for ident in ("chart-utilisation-cases", "chart-utilisation-timeline"):
            check(by_id(root, ident) is None, f"{ident} drawn though no row has utilisation readings")
        return
    labels = [f"{m['kernel']} {m['case']}" for m in read]
    cases = by_id(root, "chart-utilisation-cases")
    if check(cases is not None, "the per-case utilisation chart is missing though the rows have monitor readings"):
        check_chart(cases, labels + ["SM busy, mean %", "SM busy, peak %"])
        want = sum(m["monitor"].get(k) is not None for m in read for k in ("sm_util_mean_pct", "sm_util_peak_pct"))
        check(cases.attrs.get("data-bars") == str(want), f"per-case utilisation chart: {cases.attrs.get('data-bars')} "
              f"bars declared, the fixture has {want} SM mean/peak figures")
    steps = by_id(root, "chart-utilisation-timeline")
    if check(steps is not None, "the utilisation timeline is missing though the rows have monitor readings"):
        check_chart(steps, ["SM busy, mean %", "SM busy, peak %", "memory busy, peak %"])
        texts = " ".join(t.all_text() for t in steps.find_all(lambda n: n.tag == "text"))
        for k in dict.fromkeys(m["kernel"] for m in read):
            check(k in texts, f"utilisation timeline: kernel {k} not named")
        for key in ("sm_mean", "sm_peak", "mem_peak"):
            check(by_id(steps, f"line-utilisation-timeline-{key}") is not None, f"utilisation timeline: no {key} line")
    table = {r.attrs["data-case"]: r for r in
             section.find_all(lambda n: n.tag == "tr" and "data-case" in n.attrs)}
    for m in read:
        r = table.get(f"{m['kernel']}/{m['case']}")
        if not check(r is not None, f"utilisation table: no row for {m['kernel']} {m['case']}"):
            continue
        check(r.attrs.get("data-activity") == (m["monitor"].get("activity") or "-"),
              f"utilisation table, {m['kernel']} {m['case']}: activity {r.attrs.get('data-activity')}, "
              f"the fixture says {m['monitor'].get('activity')}")
    idle = [m for m in read if m["monitor"].get("activity") == "none"]
    note = by_id(root, "no-activity")
    if idle:
        if check(note is not None, "rows with activity none, but no 'No GPU activity' alarm"):
            for m in idle:
                check(f"{m['kernel']} {m['case']}" in note.all_text(), f"the alarm does not name {m['case']}")
        for m in idle:
            r = table.get(f"{m['kernel']}/{m['case']}")
            check(r is not None and "no-activity" in r.attrs.get("class", "").split() and "NONE" in r.all_text(),
                  f"utilisation table: {m['case']}'s activity none is not flagged")
        if cases is not None:
            check("activity: none" in [t.all_text() for t in cases.find_all(lambda n: n.tag == "text")],
                  "the per-case utilisation chart does not mark 'activity: none'")
        if steps is not None:
            check(steps.find_all(lambda n: n.attrs.get("id", "").startswith("noact-")),
                  "the utilisation timeline has no band for 'activity: none'")
    else:
        check(note is None, "a 'No GPU activity' alarm though no row says activity none")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--report", required=True)
    ap.add_argument("--fixture", required=True)
    ap.add_argument("--baseline")
    ap.add_argument("--regression", action="append", default=[], help="KERNEL/CASE:FIGURE_KEY expected marked")
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--screenshot", required=True)
    args = ap.parse_args()
    t0 = time.monotonic()

    chromium = os.environ.get("GW_CHROMIUM") or next(
        (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
    if not chromium:
        skip("Chromium not found (Debian package chromium; or set GW_CHROMIUM)")
    deps = subprocess.run([PYTHON, args.report, "--check-deps"], capture_output=True, text=True)
    if deps.returncode != 0:
        skip(f"report.py cannot run: missing {deps.stdout.strip() or deps.stderr.strip()}")

    os.makedirs(args.workdir, exist_ok=True)
    page = os.path.join(args.workdir, "report.html")
    cmd = [PYTHON, args.report, args.fixture, "-o", page] + (["--baseline", args.baseline] if args.baseline else [])
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print(f"FAIL: {' '.join(cmd)} exited {r.returncode}:\n{r.stderr}")
        return 1
    with open(page, encoding="utf-8") as f:
        source = f.read()
    # Self-contained: nothing to fetch (no scripts, styles, fonts or images from elsewhere).
    for pattern in (r"<(script|img|iframe|link|source)\b[^>]*\b(src|href)\s*=", r"@import", r"url\(\s*['\"]?(https?:|//)",
                    r"@font-face", r"\bxlink:href\s*=\s*['\"](https?:|//)"):
        m = re.search(pattern, source, re.I)
        check(not m, f"the page refers to something outside it: {m.group(0) if m else ''}")

    shot = os.path.abspath(args.screenshot)
    if os.path.exists(shot):
        os.unlink(shot)
    browser = [chromium, "--headless", "--disable-gpu", "--no-first-run", "--disable-extensions",
               "--hide-scrollbars", f"--user-data-dir={os.path.join(args.workdir, 'profile')}",
               "--enable-logging=stderr", "--v=0", "--window-size=1200,1800", "--dump-dom", f"--screenshot={shot}",
               "file://" + os.path.abspath(page)]
    if os.geteuid() == 0:
        browser.insert(1, "--no-sandbox")  # Chromium refuses to run as root with its sandbox
    b = subprocess.run(browser, capture_output=True, text=True, timeout=120)
    dom = b.stdout
    with open(os.path.join(args.workdir, "dom.html"), "w", encoding="utf-8") as f:
        f.write(dom)
    with open(os.path.join(args.workdir, "chromium.log"), "w", encoding="utf-8") as f:
        f.write(b.stderr)
    if not check(b.returncode == 0 and "<body" in dom, f"chromium exited {b.returncode} without a DOM; its log: "
                 f"{os.path.join(args.workdir, 'chromium.log')}"):
        return report(t0)
    console = [line for line in b.stderr.splitlines() if ":CONSOLE" in line]
    check(not console, "the page logged on the console (a script error?):\n  " + "\n  ".join(console))
    with open(shot, "rb") if os.path.exists(shot) else open(os.devnull, "rb") as f:
        check(f.read(8) == b"\x89PNG\r\n\x1a\n", f"no PNG screenshot at {shot}")

    fixture = json.load(open(args.fixture, encoding="utf-8"))
    tree = Tree()
    tree.feed(dom)
    root = tree.root
    body = root.find_all(lambda n: n.tag == "body")
    check(body and body[0].attrs.get("data-gw-script") == "ran",
          "the page's script did not run (body data-gw-script is not 'ran')")

    kernels = list(dict.fromkeys(m["kernel"] for m in fixture["measurements"]))
    sections = ["summary", "environment", "witness", "utilisation"] + [f"kernel-{k}" for k in kernels]
    if args.baseline:
        sections.append("comparison")
    for s in sections:
        check(by_id(root, s) is not None, f"section #{s} missing")

    gpu = bool(fixture["environment"].get("gpu"))
    text = root.all_text()
    if gpu:
        check("not measured on a GPU" not in text, "a GPU run's page says 'not measured on a GPU'")
    else:
        check(by_id(root, "no-gpu") is not None and "not measured on a GPU" in by_id(root, "no-gpu").all_text(),
              "a CPU-only run's page lacks the 'not measured on a GPU' note")
    if fixture.get("synthetic"):
        marks = root.find_all(lambda n: n.attrs.get("data-synthetic") == "yes")
        check(marks and "SYNTHETIC" in marks[0].all_text(), "a synthetic fixture's page is not marked SYNTHETIC")

    for k in kernels:
        ours = [m for m in fixture["measurements"] if m["kernel"] == k and m["role"] == "kernel"]
        bars = by_id(root, f"chart-{k}-times")
        if check(bars is not None, f"{k}: bar chart missing"):
            check_chart(bars, [m["case"] for m in ours])
            ticks = bars.find_all(lambda n: n.attrs.get("id", "").startswith("roofline-"))
            if gpu:
                check(len(ticks) == len(ours), f"{k}: {len(ticks)} copy-roofline ticks for {len(ours)} cases")
            else:
                check(not ticks, f"{k}: a roofline drawn without a GPU")
            legend = [t.all_text() for t in bars.find_all(lambda n: n.tag == "text")]
            for want in ["CPU reference, 1 thread", "CPU reference, all threads"] + \
                    (["GPU kernel", "GPU end to end", "copy roofline (least possible time)"] if gpu else []):
                check(want in legend, f"{k}: legend entry '{want}' missing")
        scaling = by_id(root, f"chart-{k}-scaling")
        if check(scaling is not None, f"{k}: scaling chart missing"):
            check_chart(scaling, [])
        rows = by_id(root, f"kernel-{k}").find_all(lambda n: n.tag == "tr" and "data-case" in n.attrs)
        check(len(rows) == len([m for m in fixture["measurements"] if m["kernel"] == k]),
              f"{k}: {len(rows)} table rows for the fixture's rows")

    receipts = {r.attrs["data-case"]: r.all_text() for r in
                by_id(root, "witness").find_all(lambda n: n.tag == "tr" and "data-case" in n.attrs)}
    for m in fixture["measurements"]:
        if m["role"] != "kernel":
            continue
        got = receipts.get(f"{m['kernel']}/{m['case']}")
        if check(got is not None, f"witness receipt row of {m['kernel']} {m['case']} missing"):
            want = m["witness"] if m.get("witness") else "not measured on a GPU"
            check(want in got, f"witness receipt of {m['kernel']} {m['case']}: '{want}' not in '{got.strip()}'")

    check_utilisation(root, fixture, args.report)

    if args.baseline:
        marked = sorted(f"{r.attrs['data-case']}:{r.attrs['data-figure']}" for r in
                        root.find_all(lambda n: n.tag == "tr" and "regression" in n.attrs.get("class", "").split()))
        check(marked == sorted(args.regression),
              f"regressions marked: {marked or 'none'}; planted: {sorted(args.regression) or 'none'}")
        check(body and body[0].attrs.get("data-gw-regressions") == str(len(args.regression)),
              "the page's script counted a different number of regressions")
        count = by_id(root, "regression-count")
        check(count is not None and count.all_text().strip() == str(len(args.regression)),
              "the summary's regression count disagrees")
        chart = by_id(root, "chart-comparison")
        if check(chart is not None, "comparison chart missing"):
            check_chart(chart, [])
        for r in root.find_all(lambda n: n.tag == "tr" and "regression" in n.attrs.get("class", "").split()):
            check("REGRESSION" in r.all_text(), f"regression row {r.attrs.get('data-case')} not labelled")
    return report(t0)


def report(t0):
    elapsed = time.monotonic() - t0
    if failures:
        print(f"FAIL ({len(failures)} problem(s), {elapsed:.1f} s):")
        for f in failures:
            print("  - " + f)
        return 1
    print(f"PASS ({elapsed:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
