#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The JSON and the page of an emulated bench run (cli_emu_bench_report, tests/cli/emu.cmake).

usage: gw_emu_bench_json.py BENCH.json REPORT.py WORKDIR

BENCH.json is what `gpuwitness-emu bench --json` wrote (cli_emu_bench_smoke). It must say, where a reader or a
tool looks, that no figure in it is a GPU's: the top-level "emulated" note, the device named as emulated, every
witness record of arch "emulated"; and every row ran and was validated. report.py's page of it must carry the
EMULATED banner, and the page of the same run without the note must not (the check can fail). Exit 0 when all
hold, 1 naming what does not, 77 when report.py's modules are missing outside CI.
"""
import json
import os
import subprocess
import sys


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.split("\n\n")[1])
    bench_json, report, workdir = sys.argv[1:]
    with open(bench_json, encoding="utf-8") as f:
        run = json.load(f)
    problems = []
    note = run.get("emulated")
    if not isinstance(note, str) or "emulated device" not in note or "none a GPU figure" not in note:
        problems.append(f"top-level 'emulated' is {note!r}: expected the note that no figure is a GPU's")
    gpu = (run.get("environment") or {}).get("gpu") or {}
    if "emulated" not in str(gpu.get("name")):
        problems.append(f"environment.gpu.name is {gpu.get('name')!r}: expected the emulated device")
    rows = run.get("measurements") or []
    if not rows:
        problems.append("no measurements")
    for r in rows:
        where = f"{r.get('kernel')} {r.get('case')} {r.get('implementation')}"
        if r.get("gpu_status") != "ran" or r.get("validated") is not True:
            problems.append(f"{where}: gpu_status {r.get('gpu_status')!r}, validated {r.get('validated')!r}")
        if r.get("role") == "kernel":
            receipt = str(r.get("witness"))
            if receipt.count("witness:") < 1 or receipt.count("witness:") != receipt.count("arch=emulated"):
                problems.append(f"{where}: witness {receipt!r}: every record must say arch=emulated")
    if run.get("result") != "ok":
        problems.append(f"result {run.get('result')!r}, expected 'ok'")

    deps = subprocess.run([sys.executable, report, "--check-deps"], capture_output=True, text=True)
    if deps.returncode != 0:
        print(deps.stderr.strip())
        if not os.environ.get("CI") and os.environ.get("GW_REQUIRE_GPU") != "1":
            print("SKIPPED: report.py cannot run here (its modules are missing)")
            sys.exit(77)
        problems.append("report.py cannot run: " + deps.stderr.strip())
    else:
        os.makedirs(workdir, exist_ok=True)
        plain = dict(run)
        plain.pop("emulated", None)
        plain_json = os.path.join(workdir, "without-note.json")
        with open(plain_json, "w", encoding="utf-8") as f:
            json.dump(plain, f)
        for path, banner in ((bench_json, True), (plain_json, False)):
            page = os.path.join(workdir, os.path.basename(path) + ".html")
            done = subprocess.run([sys.executable, report, "-o", page, path], capture_output=True, text=True)
            if done.returncode != 0:
                problems.append(f"report.py on {path}: exit {done.returncode}: {done.stderr.strip()}")
                continue
            with open(page, encoding="utf-8") as f:
                html = f.read()
            shown = 'data-emulated="yes"' in html and "EMULATED, not a GPU measurement" in html
            if shown != banner:
                problems.append(f"the page of {path} {'lacks' if banner else 'has'} the EMULATED banner")
    for p in problems:
        print("FAILED:", p)
    if problems:
        sys.exit(1)
    print(f"emulated bench JSON: {len(rows)} rows, every one emulated and validated; the page says EMULATED, "
          "and without the note it does not")


if __name__ == "__main__":
    main()
