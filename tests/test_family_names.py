#!/usr/bin/env python3
"""ctest family_names: no comment names a kernel family that the family list does not have.

The families are read from their one list, AKX_FAMILY_LIST (src/core/families.h: its rows
Y(a, ID, name, Plan, header, file, launcher, kind, ...)), and the kinds' nouns from
AKX_KIND_LIST (src/core/kinds.h: X(KIND, noun, ...)). A comment is every // and /* */ comment
of every C, C++ and CUDA source and header under src/, kernels/ and include/ (string and
character literals skipped). A comment names a family where it writes:
  - an identifier the family list derives from a row: AKX__FAMILY_<ID> (AKX__FAMILY_COUNT, the
    enum's end, excepted), AKX_<ID>_KERNELS, akx__<name>_combination; the ID or name must be a
    row's. An environment variable of docs/environment.md's table (`AKX_SIM_TEST_KERNELS`, a
    setting) is no such identifier, whatever its form;
  - the words "<x> family", "<x> family's" or "<x> families", <x> the lowercase word (letters,
    digits, underscores) right before them, not the tail of a hyphenated compound
    ("look-back families" describes) or of a possessive ("c's family"), and not one of GENERIC (articles, quantifiers, pronouns,
    "kernel", "new": words that describe a family without naming one). <x> must be a family's
    name, or a name the lists give to a group of families: a ladder (the file column, the
    build's instance file several families share) or a kind's noun ("reduction", "scan", ...).
So "the scan family", "the segmented family's ladder" and "one reduction family" pass, and "the
unique family" fails until a row (or a ladder) named unique exists, as does "the keyed family": the
segmented families are two rows since their plan type was shared (src/core/families.h).

Usage: python3 tests/test_family_names.py REPO_ROOT [--plant FILE:COMMENT]...
  --plant adds a comment line to a file of the tree as if it were written there: the test of
  the test (ctest family_names_planted) plants a comment naming no family and expects exit 1.
Exit 0: no comment names a family the list lacks; 1: the comments, listed; 2: usage.
"""
import collections
import os
import re
import sys

SOURCE_EXT = (".c", ".cpp", ".cu", ".h", ".hpp", ".cuh", ".inc", ".inl")
TOPS = ("src", "kernels", "include")
GENERIC = {
    "the", "a", "an", "its", "their", "this", "that", "these", "those", "each", "every", "any", "all",
    "one", "two", "three", "other", "another", "whichever", "which", "same", "new", "own", "per", "of",
    "for", "and", "or", "no", "some", "kernel", "given", "whole", "second", "first", "last", "next",
}
FAMILY_ROW = re.compile(r'Y\(a,\s*([A-Z_][A-Z0-9_]*),\s*([a-z_][a-z0-9_]*),\s*[A-Za-z_][A-Za-z0-9_]*,\s*"[^"]*",'
                        r'\s*([a-z_][a-z0-9_]*),')
KIND_ROW = re.compile(r'X\(([A-Z_][A-Z0-9_]*),\s*"([^"]+)",')
PROSE = re.compile(r"(?<![-'\w])([A-Za-z_][A-Za-z0-9_]*) famil(?:y's|y|ies)\b")
IDENTS = [
    (re.compile(r'\bAKX__FAMILY_([A-Z0-9_]+)\b'), "id"),
    (re.compile(r'\bAKX_([A-Z0-9_]+)_KERNELS\b'), "id"),
    (re.compile(r'\bakx__([a-z0-9_]+)_combination\b'), "name"),
]


ENV_ROW = re.compile(r'^\|\s*`(AKX_[A-Z0-9_]+)`\s*\|', re.M)


def read_settings(root):
    """The environment variables docs/environment.md's tables document."""
    with open(os.path.join(root, "docs/environment.md"), encoding="utf-8") as fh:
        names = set(ENV_ROW.findall(fh.read()))
    if not names:
        sys.exit("docs/environment.md: no `AKX_...` row read (has the table's form changed?)")
    return names


def read_lists(root):
    """(ids, names, groups) from the family list and the kind list."""
    with open(os.path.join(root, "src/core/families.h"), encoding="utf-8") as fh:
        fam = fh.read()
    rows = FAMILY_ROW.findall(fam)
    if not rows:
        sys.exit("src/core/families.h: no row of AKX_FAMILY_LIST read (has the row's form changed?)")
    ids = {r[0] for r in rows}
    names = {r[1] for r in rows}
    groups = {r[2] for r in rows}
    with open(os.path.join(root, "src/core/kinds.h"), encoding="utf-8") as fh:
        kinds = KIND_ROW.findall(fh.read())
    if not kinds:
        sys.exit("src/core/kinds.h: no row of AKX_KIND_LIST read")
    groups |= {noun for _, noun in kinds}
    return ids, names, groups


def comments(text):
    """(line, comment text) for every comment of a C-family source, literals skipped."""
    out = []
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append((line, text[i + 2:j]))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j
            body = text[i + 2:j]
            # One entry per line, so that a finding names its line.
            for k, part in enumerate(body.split("\n")):
                out.append((line + k, part))
            line += body.count("\n")
            i = j + 2
        else:
            i += 1
    return out


def check(root, planted):
    ids, names, groups = read_lists(root)
    settings = read_settings(root)
    bad = []
    nfiles = ncomments = 0
    for top in TOPS:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if not f.endswith(SOURCE_EXT):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, f), root)
                with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
                text += "".join(f"\n// {p}\n" for p in planted.get(rel, []))
                nfiles += 1
                for line, com in comments(text):
                    ncomments += 1
                    for rx, kind in IDENTS:
                        for m in rx.finditer(com):
                            x = m.group(1)
                            if m.group(0) in settings:
                                continue
                            if kind == "id" and x != "COUNT" and x not in ids:
                                bad.append(f"{rel}:{line}: {m.group(0)}: no row of AKX_FAMILY_LIST has ID {x}")
                            if kind == "name" and x not in names:
                                bad.append(f"{rel}:{line}: {m.group(0)}: no row of AKX_FAMILY_LIST is named {x}")
                    for m in PROSE.finditer(com):
                        x = m.group(1)
                        if x.lower() in GENERIC or x in names or x in groups:
                            continue
                        bad.append(f"{rel}:{line}: \"{m.group(0)}\": {x} is no family of AKX_FAMILY_LIST, "
                                   f"ladder or kind (families: {', '.join(sorted(names))})")
    return bad, nfiles, ncomments


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    root = argv[1]
    planted = collections.defaultdict(list)
    rest = argv[2:]
    while rest:
        if rest[0] != "--plant" or len(rest) < 2 or ":" not in rest[1]:
            print(__doc__)
            return 2
        f, com = rest[1].split(":", 1)
        planted[f].append(com)
        rest = rest[2:]
    bad, nfiles, ncomments = check(root, planted)
    if bad:
        print("comments that name a family the family list (src/core/families.h) does not have:")
        for b in bad:
            print("  " + b)
        return 1
    print(f"family names: {ncomments} comment lines of {nfiles} files name only families of the list")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
