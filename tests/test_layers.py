#!/usr/bin/env python3
"""ctest layers: no include and no call goes up a layer.

The layers, bottom first, are written here once (LAYERS); the README's source map and
the design card's layout name the same folders. A file may include, and its object may call, only
what lies in its own layer or below:
  - includes: every #include "..." of every C, C++ and CUDA source and header under kernels/
    and src/ (src/dist/ excepted: a library of its own on the public API, checked apart),
    resolved as the build resolves it (the file's own folder, then the include paths);
  - calls: every symbol an object of libakx's build leaves undefined (nm) against the layer of
    the object that defines it (the kernels' instance files, gen/*, belong to src/launch/,
    whose ladders they compile; the embedded headers' table to src/jit/).
libakx_dist (src/dist/) includes only the public headers (include/) and its own files.

Usage: python3 tests/test_layers.py REPO_ROOT BUILD_DIR [--plant FILE:INCLUDE]...
  --plant adds an #include to a file of the tree as if it were written there: the test of the
  test (ctest layers_planted) plants an upward include and expects exit 1.
Exit 0: no upward edge; 1: the upward edges, listed; 2: usage.
"""
import collections
import glob
import os
import re
import subprocess
import sys

# Bottom first. A folder's layer is the first entry whose prefix matches it; "src/*" is every
# other folder of src/ (each family's planner: src/reduce, src/scan, a new family's own).
LAYERS = [
    ("kernels", ["kernels/akx"]),
    ("core", ["src/core"]),
    ("jit", ["src/jit"]),
    ("backends", ["src/sim", "src/cuda", "src/nocuda"]),
    ("launch", ["src/launch"]),
    ("planners", ["src/*"]),
]
# The include paths of libakx's objects (CMakeLists.txt, akx_objs), after the file's folder.
INCLUDE_PATHS = ["include", "kernels", ".", "src", "src/core", "src/jit", "src/reduce", "src/scan"]
SOURCE_EXT = (".c", ".cpp", ".cu", ".h", ".hpp", ".cuh", ".inc", ".inl")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(rel):
    """(index, name) of the layer holding repository path rel; None outside every layer."""
    if rel.startswith("src/dist/") or rel == "src/dist":
        return None
    for i, (name, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if p.endswith("/*"):
                if rel.startswith(p[:-1]) and "/" in rel[len(p) - 1:]:
                    return i, name
            elif rel == p or rel.startswith(p + "/"):
                return i, name
    return None


def resolve(root, rel_file, inc):
    """The repository path an #include "inc" of rel_file names, or None (a generated file)."""
    for base in [os.path.dirname(rel_file)] + INCLUDE_PATHS:
        cand = os.path.normpath(os.path.join(base, inc))
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    return None


def sources(root, top):
    for dirpath, _, files in os.walk(os.path.join(root, top)):
        for f in files:
            if f.endswith(SOURCE_EXT):
                yield os.path.relpath(os.path.join(dirpath, f), root)


def include_edges(root, planted):
    """(file, included file, line text) for every resolved #include under kernels/ and src/."""
    edges = []
    files = [f for top in ("kernels", "src") for f in sources(root, top)]
    for rel in files:
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        incs = INCLUDE_RE.findall(text) + planted.get(rel, [])
        for inc in incs:
            target = resolve(root, rel, inc)
            if target:
                edges.append((rel, target, inc))
    return edges, len(files)


def check_includes(root, planted):
    bad = []
    edges, n = include_edges(root, planted)
    for rel, target, inc in edges:
        if rel.startswith("src/dist/"):
            if not (target.startswith("include/") or target.startswith("src/dist/")):
                bad.append(f"{rel}: #include \"{inc}\" ({target}): libakx_dist uses the public headers only")
            continue
        a, b = layer_of(rel), layer_of(target)
        if a and b and b[0] > a[0]:
            bad.append(f"{rel} ({a[1]}): #include \"{inc}\" reaches up into {target} ({b[1]})")
    return bad, n, len(edges)


def object_layer(build, obj):
    rel = os.path.relpath(obj, os.path.join(build, "CMakeFiles", "akx_objs.dir"))
    if rel.startswith("gen/"):
        return (layer_of("src/launch"), "src/launch/(instances) " + os.path.basename(rel)) \
            if "embedded" not in rel else (layer_of("src/jit"), "src/jit/(embedded) " + rel)
    src = rel[:-2] if rel.endswith(".o") else rel
    return layer_of(os.path.dirname(src)), src


def check_calls(root, build):
    objs = []
    for o in glob.glob(os.path.join(build, "CMakeFiles", "akx_objs.dir", "**", "*.o"), recursive=True):
        layer, name = object_layer(build, o)
        # An object whose source left the tree (a file moved or removed) is not part of the build;
        # generated sources (the instances, the embedded headers) are named "dir/(kind) file".
        if layer is not None and ("/(" in name or os.path.isfile(os.path.join(root, name))):
            objs.append((o, layer, name))
    if not objs:
        return [f"no objects under {build}/CMakeFiles/akx_objs.dir: build libakx first"], 0, 0
    defined, undefined = {}, collections.defaultdict(set)
    for o, layer, name in objs:
        out = subprocess.run(["nm", "-P", o], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) < 2:
                continue
            sym, kind = parts[0], parts[1]
            if kind in "TDBRVWtdbr" and kind.isupper():
                defined.setdefault(sym, (layer, name))
            elif kind == "U":
                undefined[(layer, name)].add(sym)
    bad, calls = [], 0
    for (layer, name), syms in undefined.items():
        for sym in syms:
            if sym not in defined:
                continue
            calls += 1
            tl, tname = defined[sym]
            if tl[0] > layer[0]:
                bad.append(f"{name} ({layer[1]}) calls {sym} of {tname} ({tl[1]})")
    return bad, len(objs), calls


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    root, build = argv[1], argv[2]
    planted = collections.defaultdict(list)
    rest = argv[3:]
    while rest:
        if rest[0] != "--plant" or len(rest) < 2 or ":" not in rest[1]:
            print(__doc__, file=sys.stderr)
            return 2
        f, inc = rest[1].split(":", 1)
        planted[f].append(inc)
        rest = rest[2:]
    inc_bad, nfiles, nincs = check_includes(root, planted)
    call_bad, nobjs, ncalls = check_calls(root, build)
    order = " < ".join(name for name, _ in LAYERS)
    print(f"layers {order}: {nfiles} files, {nincs} includes; {nobjs} objects, {ncalls} calls across objects")
    for b in inc_bad + call_bad:
        print("  up a layer:", b)
    return 1 if inc_bad or call_bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
