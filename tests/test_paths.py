#!/usr/bin/env python3
"""ctest paths: every repository path named in the documentation and in comments exists.

Reads README.md, docs/*.md and bench/RESULTS.md whole, and only the comments of the source,
build and script files (C, C++, CUDA, CMake, shell, Python; string literals and code are
left out), and collects the path-like tokens in them:
  - a token that starts with a top-level directory of the repository (src/,
    include/, kernels/, tests/, bench/, docs/, cmake/, .ci/), e.g. src/core/validate.c,
    kernels/akx/scan_tile.cuh, tests/support/, kernels/akx/*.cuh (a glob: at least one match);
  - a bare file name with a source, script or Markdown extension (validate.c, runtime.hpp,
    RESULTS.md, *_instances.inl): some file of that name somewhere in the tree.
A token preceded by a letter, a digit, '.', '/' or '-' is part of something longer (a URL,
a path in another project such as PyTorch's aten/src/..., ./build/bench/akx-bench) and is
not taken. Each token must name a file or directory of the checkout; the test fails with
the list of those that do not (file, line, token).

Usage: python3 tests/test_paths.py [REPO_ROOT]   (default: the parent of tests/)
Exit 0: every path exists; 1: some do not (listed); 2: usage.
"""
import fnmatch
import glob
import os
import re
import sys

TOP_DIRS = ("src", "include", "kernels", "tests", "bench", "docs", "cmake", ".ci")

# Tokens that look like repository paths or file names but are not meant to be in a checkout,
# each with its reason. (Generated sources live in the build directory, build*/gen/, which
# no token above matches: "gen/" is not a top-level directory of the tree.)
ALLOWED = {
    "bench/debs": "optional: a folder of .deb files a user may create (bench/gpu_check.sh)",
    "example.c": "the README's C example, a file the reader writes",
    "app.c": "a user's program in the README and the pkg-config files",
    "Reduce.cuh": "PyTorch's aten/src/ATen/native/cuda/Reduce.cuh",
    "f.cuh": "an example file name in a sim message (src/sim/checks.cpp)",
    "summary.txt": "written by bench/gpu_check.sh into its OUT_DIR",
    "bench.txt": "written by bench/gpu_check.sh into its OUT_DIR",
    "bench.json": "written by bench/gpu_check.sh into its OUT_DIR",
    "ncu-compare.txt": "written by bench/gpu_check.sh into its OUT_DIR",
    "sim-all.json": "written by the akx-bench run that bench/RESULTS.md records",
    "cuda.h": "the CUDA toolkit's driver API header, whose values src/ copies",
    "driver_types.h": "the CUDA toolkit's runtime header, whose values src/ copies",
    "misc.c": "OpenSSH's misc.c (safe_path), whose rules src/jit/cache.c follows",
    "user_op.cpp": "the name a user op's source has in the compiler's log (src/jit/sim_module.cpp)",
    "src/sim/kernel_resources.inc": "the sim's register table, removed when each kernel declared its "
                                    "class (kernel_info.registers); bench/RESULTS.md's older sections name it",
    "kernel_resources.inc": "the same table, named bare in bench/RESULTS.md's older sections",
}

PATH_RE = re.compile(
    r"(?<![\w./@-])((?:%s)/[\w.*+-]*(?:/[\w.*+-]+)*/?)" % "|".join(re.escape(d) for d in TOP_DIRS))
NAME_RE = re.compile(r"(?<![\w./@<\"*-])([A-Za-z_*][\w*-]*\."
                     r"(?:md|c|h|cpp|hpp|cu|cuh|inl|inc|in|py|sh|txt|json|map))\b")

C_LIKE = (".c", ".h", ".cpp", ".hpp", ".cu", ".cuh", ".inl", ".inc", ".in", ".map")
HASH_LIKE = (".sh", ".py", ".cmake", ".txt")


def c_comments(text):
    """(line, comment text) of every // and /* */ comment, skipping string and char literals."""
    out = []
    i, n, line = 0, len(text), 1
    while i < n:
        ch = text[i]
        if ch == "\n":
            line += 1
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append((line, text[i + 2:j]))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j
            out.append((line, text[i + 2:j]))
            line += text.count("\n", i, j)
            i = j + 2
        elif ch in "\"'":
            # a literal, escapes honoured; a raw string R"(...)" has no escapes
            if ch == '"' and i > 0 and text[i - 1] == "R":
                j = text.find(')"', i)
                j = n if j < 0 else j + 1
            else:
                j = i + 1
                while j < n and text[j] != ch and text[j] != "\n":
                    j += 2 if text[j] == "\\" else 1
            line += text.count("\n", i, j)
            i = j + 1
        else:
            i += 1
    return out


def hash_comments(text, python=False):
    """(line, comment text) of # comments (at a line's start or after a blank), and for
    Python also the triple-quoted strings (docstrings)."""
    out = []
    if python:
        for m in re.finditer(r'"""(.*?)"""', text, re.S):
            out.append((text.count("\n", 0, m.start()) + 1, m.group(1)))
    for no, ln in enumerate(text.split("\n"), 1):
        if no == 1 and ln.startswith("#!"):
            continue
        m = re.search(r"(?:^|\s)#(.*)$", ln)
        if m:
            out.append((no, m.group(1)))
    return out


def chunks(root, rel):
    """(line, text) pieces of one file in which paths are looked for."""
    path = os.path.join(root, rel)
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    base = os.path.basename(rel)
    if rel.endswith(".md"):
        return [(no, ln) for no, ln in enumerate(text.split("\n"), 1)]
    if rel.endswith(C_LIKE) and not base.endswith((".pc.in", ".cmake.in")):
        return c_comments(text)
    if rel.endswith(HASH_LIKE) or base.endswith((".pc.in", ".cmake.in")) or rel == ".ci/run":
        return hash_comments(text, python=rel.endswith(".py"))
    return []


def files(root):
    out = ["README.md"] + sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs", "*.md")))
    out.append("CMakeLists.txt")
    for top in ("src", "include", "tests", "bench", "cmake", ".ci"):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = sorted(d for d in dirnames if d != "corpus")
            for name in sorted(filenames):
                out.append(os.path.relpath(os.path.join(dirpath, name), root))
    return [f for f in out if os.path.isfile(os.path.join(root, f))]


def exists(root, token, names):
    if token in ALLOWED:
        return True
    if "/" not in token:
        if "*" in token:
            return any(fnmatch.fnmatchcase(name, token) for name in names)
        return token in names
    token = token.rstrip(".")
    if any(c in token for c in "*?["):
        return bool(glob.glob(os.path.join(root, token)))
    return os.path.exists(os.path.join(root, token))


def main(argv):
    if len(argv) > 2:
        print(__doc__)
        return 2
    root = os.path.abspath(argv[1] if len(argv) == 2 else os.path.join(os.path.dirname(__file__), ".."))
    names = set()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith((".git", "build"))]
        names.update(filenames)
    missing, seen = [], 0
    for rel in files(root):
        for line, text in chunks(root, rel):
            for rx in (PATH_RE, NAME_RE):
                for m in rx.finditer(text):
                    token = m.group(1).rstrip(".")
                    seen += 1
                    if not exists(root, token, names):
                        missing.append("%s:%d: %s" % (rel, line + text.count("\n", 0, m.start()), token))
    if missing:
        print("FAIL: %d path(s) named in documentation or comments do not exist in %s:" % (len(missing), root))
        print("\n".join("  " + m for m in missing))
        return 1
    print("paths: %d path tokens checked, every one exists" % seen)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
