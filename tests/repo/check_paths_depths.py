#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_paths_any_depth: ci/check_paths.py gives the same verdict wherever the checkout lives
(docs/testing.md, "Self-contained repository").

The files the check reads in ROOT (its own list: what git tracks or would track) are copied into
fresh checkouts at four places: directly in /tmp (the checkout's parent is a system folder), in a folder of
its own (TMP/x), six folders further down (TMP/a/b/c/d/e/f/x), and at the top of the file system, simulated
with --sysroot (SYSROOT/src is checked as /src; SYSROOT holds the names of this machine's top-level
entries, as empty folders). In each, the clean copy must pass with as many files read as in ROOT. Then a
file is planted that names a path into a folder made beside the copy, a path in a home folder and a
relative path that climbs out: the last two must be found everywhere, the first everywhere but directly in
/tmp, where nothing beside the checkout is its own.

usage: check_paths_depths.py [ROOT]   (default: the repository holding this script)
exit status: 0 the same verdicts everywhere; 1 a difference (printed).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
CHECK = os.path.join(ROOT, "ci", "check_paths.py")
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(CHECK))
from check_paths import repository_files  # noqa: E402  (the files the check reads)
HOME_PATH = "/" + "home/gw-developer/data.fits"  # both assembled: this file must not name them
CLIMB_PATH = "../" * 3 + "outside"


def check(root, *extra):
    out = subprocess.run([sys.executable, CHECK, "--root", root, *extra], capture_output=True, text=True)
    return out.returncode, out.stdout + out.stderr


def copy_checkout(dest):
    for rel in repository_files(ROOT, True):
        src = os.path.join(ROOT, rel)
        if os.path.lexists(src):
            os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
            shutil.copy2(src, os.path.join(dest, rel), follow_symlinks=False)


def main():
    rc, out = check(ROOT)
    count = re.search(r"ok: (\d+) files", out)
    if rc != 0 or not count:
        print(f"the check fails on {ROOT} itself:\n{out}")
        return 1
    failures = 0
    made = []
    try:
        tmp = tempfile.mkdtemp(prefix="gw-depths-")
        made.append(tmp)
        in_tmp = tempfile.mkdtemp(prefix="gw-depth-", dir="/tmp")  # the checkout's parent is /tmp itself
        made.append(in_tmp)
        sysroot = os.path.join(tmp, "sysroot")
        for name in os.listdir("/"):
            os.makedirs(os.path.join(sysroot, name))
        # (name, checkout, its parent as the files name it, extra arguments, a sibling path must be found)
        places = [("directly in /tmp", in_tmp, "/tmp", [], False),
                  ("in a folder of its own", os.path.join(tmp, "x"), tmp, [], True),
                  ("six folders down", os.path.join(tmp, "a/b/c/d/e/f/x"), os.path.join(tmp, "a/b/c/d/e/f"), [],
                   True),
                  ("at the top (/src)", os.path.join(sysroot, "src"), "/", ["--sysroot", sysroot], True)]
        for name, checkout, parent, extra, sibling_found in places:
            copy_checkout(checkout)
            rc, out = check(checkout, "--no-git", *extra)
            if rc != 0 or f"ok: {count.group(1)} files" not in out:
                print(f"FAIL {name} ({checkout}): the clean copy does not pass as {ROOT} does "
                      f"({count.group(0)}):\n{out}")
                failures += 1
                continue
            sibling = tempfile.mkdtemp(prefix="gw-sibling-", dir=os.path.dirname(checkout))
            made.append(sibling)
            named = os.path.join(parent, os.path.basename(sibling), "data.fits")
            os.makedirs(os.path.join(checkout, "planted/sub"))
            with open(os.path.join(checkout, "planted/sub/names_outside.sh"), "w") as f:
                f.write(f"data={named}\nhome={HOME_PATH}\nclimb={CLIMB_PATH}\n")
            rc, out = check(checkout, "--no-git", *extra)
            expected = {"an absolute path beside the repository: " + named: sibling_found,
                        "a path in a home folder: " + HOME_PATH: True,
                        "a path outside the repository: " + CLIMB_PATH: True}
            wrong = [f"{'missing' if want else 'unexpected'}: {what}" for what, want in expected.items()
                     if (what in out) != want]
            if rc != 1 or wrong:
                print(f"FAIL {name} ({checkout}), planted file: exit {rc}, " + "; ".join(wrong) + f"\n{out}")
                failures += 1
            else:
                print(f"ok   {name} ({checkout}): clean copy passes ({count.group(0)}); planted: "
                      f"{sum(expected.values())} finding(s) as expected"
                      + ("" if sibling_found else f", {named} not one (beside a checkout in a system folder)"))
    finally:
        for path in made:
            shutil.rmtree(path, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
