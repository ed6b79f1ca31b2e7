#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Fails when a file of the repository names a path outside it, or cites a document the repository does not
have (docs/testing.md, "Self-contained repository").

Every file of the checkout that git tracks or would track (git ls-files, ignored files left out; without
git, every file under the root but build folders) is read as text, and each of these is a finding,
reported with file, line and the words found:
  - a relative path that climbs out of the repository: a run of parent steps that leaves the root both
    from the file's own folder and from the root itself (a path that continues a variable or another path,
    such as ${pcfiledir}/.. or $(dirname "$0")/.., is not one);
  - an absolute path into a neighbour of the checkout: an entry that exists, now, in the folder holding
    it (the data or specifications folder beside it), other than the checkout. A checkout directly in a
    system folder (/tmp, /usr, /opt, /home...) has no neighbours (what lies there is the machine's or
    anyone's), and in the root folder the system folders are not neighbours: /tmp, /usr/include or
    /dev/null are never findings, wherever the checkout lives;
  - a path in a home folder (a user's folder in /home or /Users, or what root's holds), wherever the
    checkout lives;
  - a citation of a specifications folder, which the repository does not have (its pages are in docs/).
Only the CI entry point, .ci/run, may name such a path (the data sets CI tests with), and folders given
with --exclude (a canary's fixture) are not read.

usage: check_paths.py [--root DIR] [--no-git] [--exclude FOLDER]... [--sysroot DIR]
  --no-git: walk the folder instead; --sysroot DIR: take DIR for the root folder "/", so that a checkout
  DIR/src is checked as if it lived at /src, its neighbours being DIR's entries (how
  tests/repo/check_paths_depths.py checks a checkout at the top of the file system)
exit status: 0 nothing found; 1 findings (printed); 2 bad usage or nothing to check.
"""
import argparse
import os
import re
import subprocess
import sys

ALLOWED = {".ci/run"}
CLIMB = re.compile(r"(?<![\w./})])((?:\.\./)+)([\w.-]*)")
SPECS = re.compile(r"(?<![\w/.-])spec[s]/[\w.-]+")  # [s]: this line must not match the plain-text search
SKIP_DIRS = {".git", ".gpu-deps", "__pycache__"}
# The machine's folders: never neighbours of a checkout, nor hold any (the homes are HOME's)
SYSTEM = {"/" + d for d in "bin boot dev etc lib lib32 lib64 libx32 nix opt proc run sbin snap sys tmp usr var"
          " home Users root".split()} | {"/var/tmp", "/dev/shm"}
# An absolute path starts where no name, variable or home-relative path goes on, or after a flag (-I/usr/include)
PATH_START = r"(?:(?<![\w.~$})\]-])|(?<=-[A-Za-z]))"
HOME = re.compile(PATH_START + r"/(?:home|Users|root)/[\w.+-]+(?:/[\w.+-]+)*")


def repository_files(root, use_git):
    try:
        if not use_git:
            raise OSError("--no-git")
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             check=True, capture_output=True).stdout
        return sorted(f for f in out.decode().split("\0") if f)
    except (OSError, subprocess.CalledProcessError):
        files = []
        for top, dirs, names in os.walk(root):
            dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith("build")]
            files += [os.path.relpath(os.path.join(top, n), root) for n in names]
        return sorted(files)


def leaves(root, start, climb):
    """True when the relative path `climb` taken from folder `start` ends outside root."""
    target = os.path.normpath(os.path.join(start, climb))
    return os.path.relpath(target, root).startswith("..")


def neighbours(root, sysroot):
    """A pattern of the absolute paths, as a file would write them, into what lies beside the checkout, or None."""
    where = os.path.normpath("/" + os.path.relpath(root, sysroot))  # the checkout, "/" being sysroot
    parent = os.path.dirname(where)
    if parent in SYSTEM:
        return None
    try:
        names = os.listdir(os.path.join(sysroot, parent.lstrip("/")))
    except OSError:
        return None
    paths = [os.path.join(parent, n) for n in names]
    paths = sorted((p for p in paths if p != where and p not in SYSTEM), key=len, reverse=True)
    if not paths:
        return None
    return re.compile(PATH_START + "(?:" + "|".join(map(re.escape, paths)) + r")(?![\w.+-])(?:/[\w.+-]+)*")


def findings_in(root, rel, text, beside):
    own_dir = os.path.join(root, os.path.dirname(rel))
    for line_no, line in enumerate(text.splitlines(), 1):
        for m in CLIMB.finditer(line):
            if leaves(root, own_dir, m.group(1)) and leaves(root, root, m.group(1)):
                yield line_no, "a path outside the repository: " + m.group(0)
        found = {m.start(): "a path in a home folder: " + m.group(0) for m in HOME.finditer(line)}
        for m in beside.finditer(line) if beside else ():
            found.setdefault(m.start(), "an absolute path beside the repository: " + m.group(0))
        for _, what in sorted(found.items()):
            yield line_no, what
        for m in SPECS.finditer(line):
            yield line_no, "a citation of a document the repository does not have: " + m.group(0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--no-git", action="store_true")
    ap.add_argument("--exclude", action="append", default=[])
    ap.add_argument("--sysroot", default="/")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    sysroot = os.path.abspath(args.sysroot)
    if os.path.relpath(root, sysroot).startswith(".."):
        ap.error(f"--root {root} is not under --sysroot {sysroot}")
    beside = neighbours(root, sysroot)
    excluded = [os.path.normpath(e) + "/" for e in args.exclude]
    files = [f for f in repository_files(root, not args.no_git)
             if f not in ALLOWED and not any((f + "/").startswith(e) for e in excluded)]
    if not files:
        print(f"check_paths.py: no file to check under {root}", file=sys.stderr)
        return 2
    count = 0
    for rel in files:
        try:
            with open(os.path.join(root, rel), "rb") as f:
                data = f.read()
        except OSError:
            continue  # a file tracked but absent from this checkout (a large file left out)
        if b"\0" in data:
            continue  # binary: fixtures, corpora
        for line_no, what in findings_in(root, rel, data.decode("utf-8", "replace"), beside):
            print(f"{rel}:{line_no}: {what}")
            count += 1
    if count:
        print(f"{count} finding(s) in {len(files)} files: only .ci/run may name a path outside the repository, and "
              "the code and docs cite docs/, not outside documents")
        return 1
    print(f"ok: {len(files)} files name no path outside the repository")
    return 0


if __name__ == "__main__":
    sys.exit(main())
