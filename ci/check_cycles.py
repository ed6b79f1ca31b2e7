#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Fails when the project's sources form an include cycle or a call cycle (docs/architecture.md).

Include graph: every C, C++ and CUDA file under the folders given, an edge for each `#include "name"` that
names a file of the project (system and toolkit headers are left out). Basenames must be unique among the
files checked (the check fails otherwise): an include and an object file name one file.

Call graph: every object file that CMake built from those sources (nm on <build>/**/CMakeFiles/*.dir/**.o),
an edge from a source to the source that defines a function or variable it uses. A symbol defined by more
than one source (main, the test framework's hooks, a canary's wrapper) joins nothing: it has no one owner.

A cycle is a strongly connected component of more than one file: A includes or calls B and B, through any
chain, includes or calls A. Each is printed with the edges that close it.

usage: check_cycles.py --source DIR --build DIR [--scan FOLDER]... [--exclude FOLDER]...
exit status: 0 no cycle; 1 a cycle (printed); 2 bad usage or nothing to check.
"""
import argparse
import os
import re
import subprocess
import sys

SOURCE_EXT = (".c", ".h", ".cu", ".cuh", ".cpp")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def project_files(source, scan, exclude):
    files = []
    for folder in scan:
        for root, dirs, names in os.walk(os.path.join(source, folder)):
            rel_root = os.path.relpath(root, source)
            dirs[:] = [d for d in dirs if not any(
                os.path.normpath(os.path.join(rel_root, d)).startswith(os.path.normpath(e)) for e in exclude)]
            files += [os.path.normpath(os.path.join(rel_root, n)) for n in names if n.endswith(SOURCE_EXT)]
    return sorted(set(files))


def include_graph(source, files):
    by_name = {os.path.basename(f): f for f in files}
    graph = {f: set() for f in files}
    for f in files:
        with open(os.path.join(source, f), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for name in INCLUDE.findall(text):
            target = by_name.get(os.path.basename(name))
            if target and target != f:
                graph[f].add(target)
    return graph


def object_sources(build, files):
    """(object path, source file) for every object CMake built from one of files: CMake names an object after
    its source (<target>.dir/<path>/<name>.c.o), and basenames are unique in the project."""
    by_name = {os.path.basename(f): f for f in files}
    pairs = []
    for root, _, names in os.walk(build):
        if "CMakeFiles" not in root:
            continue
        for n in names:
            if n.endswith(".o") and n[:-2] in by_name:
                pairs.append((os.path.join(root, n), by_name[n[:-2]]))
    return pairs


def nm_symbols(obj):
    out = subprocess.run(["nm", "-g", obj], capture_output=True, text=True, check=False).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            used.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBRVWGSCi":
            defined.add(parts[2])
    return defined, used


def call_graph(build, files):
    pairs = object_sources(build, files)
    owners, uses = {}, {}
    for obj, src in pairs:
        defined, used = nm_symbols(obj)
        for s in defined:
            owners.setdefault(s, set()).add(src)
        uses.setdefault(src, set()).update(used)
    graph = {src: set() for _, src in pairs}
    for src, used in uses.items():
        for s in used:
            owner = owners.get(s)
            if owner and len(owner) == 1:
                (target,) = owner
                if target != src:
                    graph[src].add(target)
    return graph, len(pairs)


def cycles(graph):
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], [0]
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        n = stack.pop()
                        on_stack.discard(n)
                        component.append(n)
                        if n == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def report(kind, graph, components):
    for component in components:
        members = set(component)
        print(f"{kind} cycle among {len(component)} files:")
        for f in component:
            for t in sorted(graph[f] & members):
                print(f"  {f} -> {t}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--scan", action="append", help="folder of --source to check (default: the project's own)")
    ap.add_argument("--exclude", action="append", default=[], help="folder of --source to leave out")
    args = ap.parse_args()
    scan = args.scan or ["kernels", "reference", "lib", "tools", "tests", "bench"]
    files = project_files(args.source, scan, args.exclude)
    if not files:
        print("check_cycles: no source files under " + ", ".join(scan), file=sys.stderr)
        return 2
    seen = {}
    for f in files:
        seen.setdefault(os.path.basename(f), []).append(f)
    twins = {n: fs for n, fs in seen.items() if len(fs) > 1}
    for n, fs in sorted(twins.items()):
        print(f"check_cycles: {n} names {len(fs)} files ({', '.join(fs)}): basenames must be unique")
    if twins:
        return 1
    includes = include_graph(args.source, files)
    calls, n_objects = call_graph(args.build, files)
    if n_objects == 0:
        print(f"check_cycles: no object files of these sources under {args.build}: build first", file=sys.stderr)
        return 2
    include_cycles, call_cycles = cycles(includes), cycles(calls)
    report("include", includes, include_cycles)
    report("call", calls, call_cycles)
    edges = sum(len(v) for v in includes.values()), sum(len(v) for v in calls.values())
    print(f"check_cycles: {len(files)} files ({edges[0]} include edges), {n_objects} objects of {len(calls)} "
          f"files ({edges[1]} call edges): {len(include_cycles)} include cycle(s), {len(call_cycles)} call cycle(s)")
    return 1 if include_cycles or call_cycles else 0


if __name__ == "__main__":
    sys.exit(main())
