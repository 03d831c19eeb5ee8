#!/usr/bin/env python3
"""ctest layers: no include and no call goes up a layer, none joins two planners, no circle.

The layers, bottom first, are written here once (LAYERS); the README's source map and
the design card's layout name the same folders. A file may include, and its object may call, only
what lies in its own layer or below:
  - includes: every #include "..." of every C, C++ and CUDA source and header under kernels/
    and src/ (src/dist/ excepted: a library of its own on the public API, checked apart),
    resolved as the build resolves it (the file's own folder, then the include paths);
  - calls: every symbol an object of libakx's build leaves undefined (nm) against the layer of
    the object that defines it (the kernels' instance files, gen/*, belong to src/launch/,
    whose ladders they compile; the embedded headers' table to src/jit/).
The planners' layer is a row of peers, one folder per family (src/scan, src/reduce,
src/segmented, a new family's): an include or a call from one planner folder into another is an
edge reported as up a layer does (what two planners share lies below them: src/tile/, src/core/).
And no circle: the folders' graph of includes and calls (within a layer too: src/sim and
src/cuda are one layer) has no cycle through two folders or more.
libakx_dist (src/dist/) includes only the public headers (include/) and its own files.

Usage: python3 tests/test_layers.py REPO_ROOT BUILD_DIR [--plant FILE:INCLUDE]...
  --plant adds an #include to a file of the tree as if it were written there: the tests of the
  test (ctest layers_planted, layers_planted_peer, layers_planted_circle) plant an upward
  include, one between two planners, and one closing a circle inside a layer, and expect exit 1.
Exit 0: no such edge; 1: the edges and circles, listed; 2: usage.
"""
import collections
import glob
import os
import re
import subprocess
import sys

# Bottom first. A folder's layer is the first entry whose prefix matches it; "src/*" is every
# other folder of src/ (each family's planner: src/reduce, src/scan, a new family's own), and
# its folders are peers (PEERS): none may include or call another.
LAYERS = [
    ("kernels", ["kernels/akx"]),
    ("core", ["src/core"]),
    ("jit", ["src/jit"]),
    ("backends", ["src/sim", "src/cuda", "src/nocuda"]),
    ("launch", ["src/launch"]),
    # What the planners of tiles share (docs/tile.md): the look-back's sizing and grant, the
    # tile tuning, the count-back, the scan op rule; above launch (it takes the workspace and
    # resolves user ops), below every planner that calls it.
    ("tile", ["src/tile"]),
    ("planners", ["src/*"]),
]
PEERS = "planners"
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
                # A file in a folder of src/, or the folder itself (an object's source folder:
                # object_layer; the planners' objects were left out of the calls without it).
                rest = rel[len(p) - 1:]
                if rel.startswith(p[:-1]) and rest and ("/" in rest or "." not in rest):
                    return i, name
            elif rel == p or rel.startswith(p + "/"):
                return i, name
    return None


def folder_of(rel):
    """The folder whose layer holds rel: its src/ folder, or kernels/akx."""
    parts = rel.split("/")
    return "/".join(parts[:2]) if len(parts) > 2 else os.path.dirname(rel)


def crossing(a, b, rel, target):
    """Why the edge rel (layer a) -> target (layer b) is refused, or None."""
    if b[0] > a[0]:
        return "up a layer"
    if a[1] == b[1] == PEERS and folder_of(rel) != folder_of(target):
        return "between planners"
    return None


def circles(edges):
    """Every cycle of two folders or more in {(folder, folder)}: its strongly connected
    components (Tarjan), each as "a -> b -> ... -> a" along edges of the graph."""
    graph = collections.defaultdict(set)
    for a, b in edges:
        if a != b:
            graph[a].add(b)
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(list(graph)):
        if v not in index:
            visit(v)
    paths = []
    for comp in out:
        # A walk from the first folder back to it inside the component (breadth first).
        start, inside = comp[0], set(comp)
        prev, frontier, back = {start: None}, [start], None
        while frontier and back is None:
            nxt = []
            for v in frontier:
                for w in sorted(graph[v] & inside):
                    if w == start:
                        back = v
                        break
                    if w not in prev:
                        prev[w] = v
                        nxt.append(w)
                if back is not None:
                    break
            frontier = nxt
        walk, v = [start], back
        while v is not None and v != start:
            walk.insert(1, v)
            v = prev[v]
        paths.append(" -> ".join(walk + [start]) + f" ({len(comp)} folders)")
    return paths


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


def check_includes(root, planted, folders):
    bad = []
    edges, n = include_edges(root, planted)
    for rel, target, inc in edges:
        if rel.startswith("src/dist/"):
            if not (target.startswith("include/") or target.startswith("src/dist/")):
                bad.append(f"{rel}: #include \"{inc}\" ({target}): libakx_dist uses the public headers only")
            continue
        a, b = layer_of(rel), layer_of(target)
        if not (a and b):
            continue
        folders.add((folder_of(rel), folder_of(target)))
        why = crossing(a, b, rel, target)
        if why:
            bad.append(f"{why}: {rel} ({a[1]}): #include \"{inc}\" reaches into {target} ({b[1]})")
    return bad, n, len(edges)


def object_layer(build, obj):
    rel = os.path.relpath(obj, os.path.join(build, "CMakeFiles", "akx_objs.dir"))
    if rel.startswith("gen/"):
        return (layer_of("src/launch"), "src/launch/(instances) " + os.path.basename(rel)) \
            if "embedded" not in rel else (layer_of("src/jit"), "src/jit/(embedded) " + rel)
    src = rel[:-2] if rel.endswith(".o") else rel
    return layer_of(os.path.dirname(src)), src


def check_calls(root, build, folders):
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
    # One nm for many objects (-A: each line starts with its object's path and ": "): one process
    # per object was 6 s of the test's 7, four times over (the planted copies).
    of_path = {o: (layer, name) for o, layer, name in objs}
    paths = [o for o, _, _ in objs]
    lines = {o: [] for o in paths}
    for i in range(0, len(paths), 256):
        chunk = paths[i:i + 256]
        out = subprocess.run(["nm", "-P", "-A"] + chunk, capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            path, sep, rest = line.partition(": ")
            if sep and path in lines:
                lines[path].append(rest)
    for o in paths:  # in the objects' order, as one nm each read them
        layer, name = of_path[o]
        for line in lines[o]:
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
            folders.add((folder_of(name), folder_of(tname)))
            why = crossing(layer, tl, name, tname)
            if why:
                bad.append(f"{why}: {name} ({layer[1]}) calls {sym} of {tname} ({tl[1]})")
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
    folders = set()
    inc_bad, nfiles, nincs = check_includes(root, planted, folders)
    call_bad, nobjs, ncalls = check_calls(root, build, folders)
    circ = circles(folders)
    order = " < ".join(name for name, _ in LAYERS)
    print(f"layers {order} (the {PEERS} peers): {nfiles} files, {nincs} includes; {nobjs} objects, "
          f"{ncalls} calls across objects; {len(folders)} folder edges")
    for b in inc_bad + call_bad:
        print("  " + b)
    for c in circ:
        print("  a circle:", c)
    return 1 if inc_bad or call_bad or circ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
