#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The declared layer graph (src/layers/graph.txt) is sound and the tree follows it
(docs/design/architecture.md, "Layers"):

  - every layer uses only layers listed above it: the graph has no cycle;
  - every directory of src/ is a declared layer, and every declared layer a directory;
  - src/layers/LAYER/ holds exactly one relative symlink per layer LAYER sees (itself and every
    layer it uses, directly or through another), each to ../../NAME;
  - every #include "x/..." in src/LAYER/ names a layer LAYER sees, never a path with '..' or an
    absolute one, and a *-internal.h header only from its own directory.

The compiler enforces the views (check-includes.py); this also catches what it cannot see: an
include of a project header named like a kernel header ("linux/seccomp.h" falls back to
<linux/seccomp.h>) and an include relative to the including file ("../linux/x.h").

Usage: check-layers.py SOURCE_ROOT"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
PUBLIC = "cordon"  # include/cordon/, the public header, seen by every layer


def read_graph(path, errors):
    order, sees = [], {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, sep, used = line.partition(":")
            name = name.strip()
            if not sep or not re.fullmatch(r"[a-z][a-z0-9-]*", name) or name in sees:
                errors.append("%s:%d: expected 'layer: used layers', once per layer" % (path, n))
                continue
            seen = {name}
            for u in used.split():
                if u not in sees:
                    errors.append("%s:%d: %s uses %s, which is not listed above it (a cycle, or "
                                  "the wrong order)" % (path, n, name, u))
                    continue
                seen |= sees[u]
            order.append(name)
            sees[name] = seen
    return order, sees


def check_views(root, order, sees, errors):
    layers_dir = os.path.join(root, "src", "layers")
    dirs = {d for d in os.listdir(os.path.join(root, "src"))
            if os.path.isdir(os.path.join(root, "src", d)) and d != "layers"}
    for d in sorted(dirs - set(order)):
        errors.append("src/%s/ is not a layer of src/layers/graph.txt" % d)
    for name in sorted(set(order) - dirs):
        errors.append("src/layers/graph.txt: %s has no directory src/%s/" % (name, name))
    views = {d for d in os.listdir(layers_dir) if os.path.isdir(os.path.join(layers_dir, d))}
    for d in sorted(views - set(order)):
        errors.append("src/layers/%s/ is not a layer of src/layers/graph.txt" % d)
    for name in order:
        view = os.path.join(layers_dir, name)
        entries = set(os.listdir(view)) if os.path.isdir(view) else set()
        for e in sorted(entries ^ sees[name]):
            what = "missing" if e in sees[name] else "not allowed"
            errors.append("src/layers/%s/%s: %s (%s sees %s)" %
                          (name, e, what, name, " ".join(sorted(sees[name]))))
        for e in sorted(entries & sees[name]):
            p = os.path.join(view, e)
            if not os.path.islink(p) or os.readlink(p) != "../../" + e:
                errors.append("src/layers/%s/%s: must be a symlink to ../../%s" % (name, e, e))


def check_includes(root, order, sees, errors):
    for name in order:
        top = os.path.join(root, "src", name)
        for dirpath, _, files in os.walk(top):
            for fn in sorted(files):
                if not fn.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, fn)
                rel = os.path.relpath(path, root)
                with open(path, errors="replace") as f:
                    for n, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if m:
                            check_one(rel, n, name, m.group(1), sees[name], errors)


def check_one(rel, n, layer, inc, seen, errors):
    where = "%s:%d: #include \"%s\"" % (rel, n, inc)
    if inc.startswith("/") or ".." in inc.split("/"):
        errors.append(where + ": only paths from a layer's view (no '..', not absolute)")
        return
    if "/" not in inc:
        return  # the including file's directory, or the layer's generated headers
    first = inc.split("/")[0]
    if first != PUBLIC and first not in seen:
        errors.append("%s: %s may not use %s (src/layers/graph.txt)" % (where, layer, first))
    if inc.endswith("-internal.h") and os.path.dirname(inc) != os.path.dirname(rel)[len("src/"):]:
        errors.append(where + ": a *-internal.h header is private to its directory")


def main():
    root = sys.argv[1]
    errors = []
    order, sees = read_graph(os.path.join(root, "src", "layers", "graph.txt"), errors)
    check_views(root, order, sees, errors)
    check_includes(root, order, sees, errors)
    for e in errors:
        print(e)
    print("%d layers, %d problems" % (len(order), len(errors)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
