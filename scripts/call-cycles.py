#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Cycles of calls between source files, from the built objects' symbols.

Usage: scripts/call-cycles.py [BUILD_DIR]   (default: build; run `make` first)

A file A uses a file B when A's object names (nm: undefined) a symbol that
B's object defines: a call, or the address of a function or a global. Each
strongly connected component of more than one file is a cycle; its edges
and files are printed. A cycle among listener/ files fails (exit 1); those
in freezer/ and bench/ are only reported, until they are broken too.
Exit 2: no objects to read.
"""
import collections
import os
import subprocess
import sys

DIRS = ("common", "freezer", "listener", "bench")
FAIL_ON = ("listener",)


def symbols(obj):
    """(defined, undefined) external symbols of one object."""
    out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            undefined.add(name)
        elif kind.isupper():  # lower case: local to the object
            defined.add(name)
    return defined, undefined


def strongly_connected(graph):
    """Tarjan's algorithm, iteratively: the components, each a sorted list."""
    index, low, stack, on_stack, comps = {}, {}, [], set(), []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    x = stack.pop()
                    on_stack.discard(x)
                    comp.append(x)
                    if x == v:
                        break
                comps.append(sorted(comp))
    return comps


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    objects = {}
    for d in DIRS:
        path = os.path.join(build, d)
        if not os.path.isdir(path):
            continue
        for name in sorted(os.listdir(path)):
            if name.endswith(".o"):
                objects[f"{d}/{name[:-2]}.c"] = os.path.join(path, name)
    if not objects:
        print(f"call-cycles: no objects under {build}/ (build first)", file=sys.stderr)
        return 2

    owner, uses = {}, {}
    for src, obj in objects.items():
        defined, undefined = symbols(obj)
        uses[src] = undefined
        for s in defined:
            owner.setdefault(s, src)

    edges = collections.defaultdict(set)
    graph = collections.defaultdict(set)
    for src, undefined in uses.items():
        graph[src]
        for s in undefined:
            dst = owner.get(s)
            if dst and dst != src:
                edges[(src, dst)].add(s)
                graph[src].add(dst)

    failed = 0
    for comp in strongly_connected(graph):
        if len(comp) < 2:
            continue
        members = set(comp)
        for (a, b), names in sorted(edges.items()):
            if a in members and b in members:
                print(f"{a} -> {b}: {', '.join(sorted(names))}")
        fatal = any(f.split("/")[0] in FAIL_ON for f in comp)
        failed += fatal
        print(f"CYCLE of {len(comp)}{'' if fatal else ' (reported only)'}: {' '.join(comp)}")
    if failed:
        print(f"call-cycles: {failed} cycle(s) among {', '.join(d + '/' for d in FAIL_ON)} files", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
