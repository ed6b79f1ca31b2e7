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
  - an absolute path into the folder that holds the checkout (its siblings are not part of it);
  - a citation of a specifications folder, which the repository does not have (its pages are in docs/).
Only the CI entry point, .ci/run, may name such a path (the data sets CI tests with), and folders given
with --exclude (a canary's fixture) are not read.

usage: check_paths.py [--root DIR] [--no-git] [--exclude FOLDER]...   (--no-git: walk the folder instead)
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


def findings_in(root, rel, text):
    parent = os.path.dirname(os.path.abspath(root))
    own_dir = os.path.join(root, os.path.dirname(rel))
    for line_no, line in enumerate(text.splitlines(), 1):
        for m in CLIMB.finditer(line):
            if leaves(root, own_dir, m.group(1)) and leaves(root, root, m.group(1)):
                yield line_no, "a path outside the repository: " + m.group(0)
        for m in re.finditer(re.escape(parent) + r"/[\w.-]+", line):
            if os.path.commonpath([os.path.abspath(m.group(0)), root]) != root:
                yield line_no, "an absolute path outside the repository: " + m.group(0)
        for m in SPECS.finditer(line):
            yield line_no, "a citation of a document the repository does not have: " + m.group(0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--no-git", action="store_true")
    ap.add_argument("--exclude", action="append", default=[])
    args = ap.parse_args()
    root = os.path.abspath(args.root)
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
        for line_no, what in findings_in(root, rel, data.decode("utf-8", "replace")):
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
