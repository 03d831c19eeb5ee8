#!/usr/bin/env python3
"""What ptxas made of every built-in kernel: registers, static shared memory, stack and local
memory per kernel instance, read from the built device code with
`cuobjdump --dump-resource-usage` (the CUDA toolkit's, or PyPI's nvidia-cuda-cuobjdump).

  kernel_resources.py check TABLE BINARY...   the kernel_resources ctest: fails (exit 1) on any
                                              device function with local memory or a stack
                                              frame (a spill, or a local array), and when TABLE
                                              disagrees with the sm_90 code built
  kernel_resources.py write TABLE BINARY...   regenerates TABLE (src/sim/kernel_resources.inc)
  kernel_resources.py merge TABLE BINARY...   writes the built kernels' rows over TABLE's and
                                              keeps the others (a build that prebuilds fewer
                                              kernels than the sim; the kept rows may be stale)
  kernel_resources.py occupancy TABLE [OLD]   registers, shared memory and resident blocks per
                                              SM on the H200 at the default block size, beside
                                              an older table's (bench/RESULTS.md)

BINARY: libakx.so or the kernel objects of a CUDA build. The tool: $AKX_CUOBJDUMP, else
cuobjdump on PATH, in the toolkit next to nvcc, or in a pip-installed nvidia-cuda-cuobjdump
(found on sys.path and under /opt/akx-tools, where .ci/run puts it). Demangling: c++filt.

TABLE is what the sim's occupancy model reads (src/sim/kernel_resources.cpp), so that a
sim-only build sees the registers and shared memory the GPU will have. Its figures are sm_90's
from the CUDA release named in its header; a build by another release may differ, which is
reported (and not a failure: the table is one release's).

No stack: every kernel and every out-of-line device function must have a stack frame of 0
bytes. A frame is spill space or a local array (a value whose address is taken); the calls the
kernels make (the out-of-line finishing step of kernels/akx/finish.cuh) need none. The 64-bit
division routine's calls made ptxas stop at 64 registers and spill: kernels/akx/divide.cuh is why
there are none.
"""
import glob
import os
import re
import shutil
import subprocess
import sys

ARCH = "sm_90"
# cuobjdump's SHARED counts the 1 KiB the driver reserves per block (sm_80 and later) in front
# of a kernel's own static shared memory, whenever the kernel has any: the table keeps the
# kernel's own bytes, and the sim's model adds the reserve to every block itself (model.c).
RESERVED_SHARED = 1024
# A function's own stack frame (EIATTR_FRAME_SIZE in cuobjdump -elf; ptxas -v's "bytes stack
# frame"): must be 0. cuobjdump's STACK adds the frames of the callees.

DTYPES = {
    "bool": "AKX_BOOL", "signed char": "AKX_INT8", "unsigned char": "AKX_UINT8",
    "short": "AKX_INT16", "unsigned short": "AKX_UINT16", "int": "AKX_INT32",
    "unsigned int": "AKX_UINT32", "long": "AKX_INT64", "unsigned long": "AKX_UINT64",
    "akx::f16": "AKX_FLOAT16", "akx::bf16": "AKX_BFLOAT16", "float": "AKX_FLOAT32",
    "double": "AKX_FLOAT64", "akx::cplx<float>": "AKX_COMPLEX64",
    "akx::cplx<double>": "AKX_COMPLEX128",
}
OPS = {"akx::op_" + o: "AKX_OP_" + o.upper() for o in ("add", "mul", "min", "max", "and", "or", "xor")}
NONE = "-1"
# The enums' values (include/akx.h), for the order kernels/akx/kernel_resources.cuh searches in.
ORDER = {"-1": -1}
ORDER.update({d: i for i, d in enumerate(
    ["AKX_BOOL", "AKX_INT8", "AKX_UINT8", "AKX_INT16", "AKX_UINT16", "AKX_INT32", "AKX_UINT32",
     "AKX_INT64", "AKX_UINT64", "AKX_FLOAT16", "AKX_BFLOAT16", "AKX_FLOAT32", "AKX_FLOAT64",
     "AKX_COMPLEX64", "AKX_COMPLEX128"])})
ORDER.update({o: i for i, o in enumerate(
    ["AKX_OP_ADD", "AKX_OP_MUL", "AKX_OP_MIN", "AKX_OP_MAX", "AKX_OP_AND", "AKX_OP_OR", "AKX_OP_XOR"])})


def sort_key(k):
    """(function, src, dst, acc, op) as kernels/akx/kernel_resources.cuh's binary search orders
    them: the function by its bytes (strcmp), the rest by their enum values."""
    return (k[0].encode(),) + tuple(ORDER[x] for x in k[1:])

# The table holds every kernel the sim prebuilds (kernels/akx/dtypes.cuh, the prebuilt sets): a
# CUDA build with AKX_CUDA_PREBUILT_ALL (the all-kernels preset) compiles them all for sm_90. The
# default build prebuilds fewer (the AUTO accumulators) and is checked against the rows it has.
REGENERATE = ("cmake --preset all-kernels && cmake --build --preset all-kernels && "
              "python3 bench/kernel_resources.py write src/sim/kernel_resources.inc "
              "build-all-kernels/libakx.so")


def fail(msg):
    print("kernel_resources: " + msg, file=sys.stderr)
    sys.exit(1)


def find_cuobjdump():
    env = os.environ.get("AKX_CUOBJDUMP")
    if env:
        if not os.access(env, os.X_OK):
            fail("AKX_CUOBJDUMP is %s, which is not an executable" % env)
        return env
    found = shutil.which("cuobjdump")
    if found:
        return found
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    beside = os.path.join(os.path.dirname(nvcc), "cuobjdump")
    if os.access(beside, os.X_OK):
        return beside
    for root in sys.path + ["/opt/akx-tools"]:
        for cand in sorted(glob.glob(os.path.join(root, "nvidia", "*", "bin", "cuobjdump"))):
            if os.access(cand, os.X_OK):
                return cand
    fail("cuobjdump not found (not $AKX_CUOBJDUMP, not on PATH, not beside nvcc, no "
         "pip-installed nvidia-cuda-cuobjdump): `python3 -m pip install nvidia-cuda-cuobjdump` "
         "(.ci/run does), or the toolkit's cuda-cuobjdump package. The CUDA backend is built, "
         "so its kernels' resources must be checked: this is a failure, not a skip.")


def split_args(s):
    """Top-level comma-separated template arguments of s (without the outer <>)."""
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def template_of(s):
    """'name<a, b>' -> ('name', ['a', 'b']); a name without arguments -> (s, [])."""
    s = s.strip()
    i = s.find("<")
    if i < 0:
        return s, []
    return s[:i], split_args(s[i + 1:s.rindex(">")])


def dtype(t):
    t = re.sub(r"\s+>", ">", t.strip())
    if t not in DTYPES:
        raise ValueError("no akx dtype is the C++ type '%s'" % t)
    return DTYPES[t]


def op(t):
    t = t.strip()
    if t not in OPS:
        raise ValueError("'%s' is not a built-in op" % t)
    return OPS[t]


# The built-in kernels and their keys: the family list's K(key, template-id, user_only) rows
# (src/core/families.h), the one place a family names its kernels; {S} {D} {A} {O} stand for the
# source, dst, accumulator and op of an instance.
FAMILIES_H = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "core", "families.h")
PLACEHOLDERS = ("{S}", "{D}", "{A}", "{O}")


def parse_id(s):
    """A template-id as (name, [args]), a placeholder as itself."""
    s = s.strip()
    if s in PLACEHOLDERS:
        return s
    name, args = template_of(s)
    return (name.strip().lstrip(":"), [parse_id(a) for a in args])


def kernel_patterns():
    with open(FAMILIES_H) as f:
        text = f.read()
    rows = re.findall(r'K\("(\w+)", "([^"]+)", \d\)', text)
    if not rows:
        fail("%s: no kernel rows K(key, template-id, user_only) read" % FAMILIES_H)
    return [(key, parse_id(tid)) for key, tid in rows]


def unify(pat, s, binds):
    """Whether the demangled type s has pat's shape; binds the placeholders to their types."""
    if isinstance(pat, str):
        binds[pat] = s.strip()
        return True
    name, pargs = pat
    sname, sargs = template_of(s)
    if sname.strip().lstrip(":") != name or len(sargs) != len(pargs):
        return False
    return all(unify(p, a, binds) for p, a in zip(pargs, sargs))


def key_of(demangled, patterns=None):
    """(function, src, dst, acc, op) of a built-in kernel's demangled name, by the family list's
    kernel rows, or None for a kernel the table does not cover (one compiled from
    include/akx.cuh by a bench)."""
    m = re.match(r"void (akx::\w+<.*>)\(.*\)$", demangled)
    if not m:
        return None
    for key, pat in patterns if patterns is not None else kernel_patterns():
        binds = {}
        if unify(pat, m.group(1), binds):
            return (key, dtype(binds["{S}"]) if "{S}" in binds else NONE,
                    dtype(binds["{D}"]) if "{D}" in binds else NONE,
                    dtype(binds["{A}"]) if "{A}" in binds else NONE,
                    op(binds["{O}"]) if "{O}" in binds else NONE)
    return None


def read_binaries(paths):
    """{key: (registers, static shared, own stack frame, local, name)} of the ARCH code, the other
    architectures' kernels (checked for spills only), and cuobjdump's version line."""
    tool = find_cuobjdump()
    toolkits = set()  # the compiler's release, from each cubin's ELF header
    functions = []  # (arch, mangled, fields)
    for path in paths:
        if not os.path.exists(path):
            fail("%s does not exist (build the library first)" % path)
        r = subprocess.run([tool, "--dump-resource-usage", path], capture_output=True, text=True)
        if r.returncode != 0:
            fail("%s --dump-resource-usage %s failed: %s" % (tool, path, r.stderr.strip()))
        arch, fn = None, None
        for line in r.stdout.splitlines():
            m = re.match(r"\s*arch = (sm_\d+a?)", line)
            if m:
                arch = m.group(1)
            m = re.match(r"\s*Function (\S+):", line)
            if m:
                fn = m.group(1)
                continue
            if fn and "REG:" in line:
                fields = dict(re.findall(r"([A-Z]+(?:\[\d+\])?):(\d+)", line))
                functions.append((arch, fn, {k: int(v) for k, v in fields.items()}))
                fn = None
    frames = {}  # (arch, kernel) -> its own stack frame
    for path in paths:
        p = subprocess.Popen([tool, "-elf", path], stdout=subprocess.PIPE, text=True)
        arch = None
        for line in p.stdout:
            if line.startswith("arch = "):
                arch = line.split()[2]
            elif line.startswith("64-bit ELF:"):
                m = re.search(r"toolkit=([0-9.]+)", line)
                if m:
                    toolkits.add(m.group(1))
            elif "frame size:" in line:
                m = re.search(r"function: ([^\s$(][^\s(]*)\(0x[0-9a-f]+\)\s+frame size: 0x([0-9a-f]+)", line)
                if m:
                    k = (arch, m.group(1))
                    frames[k] = max(frames.get(k, 0), int(m.group(2), 16))
        if p.wait() != 0:
            fail("%s -elf %s failed" % (tool, path))
    version = "release " + "/".join(sorted(toolkits)) if toolkits else "unknown release"
    if not functions:
        fail("no device functions in %s: is this a CUDA build (AKX_CUDA=ON)?" % " ".join(paths))
    if not shutil.which("c++filt"):
        fail("c++filt not found (binutils): needed to read the kernels' names")
    names = sorted({f[1] for f in functions})
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True).stdout
    demangled = dict(zip(names, out.splitlines()))
    table, others = {}, []
    patterns = kernel_patterns()
    for arch, mangled, f in functions:
        shared = f.get("SHARED", 0)
        own = shared - RESERVED_SHARED if shared >= RESERVED_SHARED else shared
        if (arch, mangled) not in frames:
            fail("cuobjdump -elf gave no frame size for %s (%s)" % (demangled[mangled], arch))
        entry = (f.get("REG", 0), own, frames[(arch, mangled)], f.get("LOCAL", 0), demangled[mangled])
        key = key_of(demangled[mangled], patterns) if arch == ARCH else None
        if key is None:
            others.append((arch, entry))
            continue
        if key in table and table[key][:2] != entry[:2]:
            fail("%s is in the binaries twice, with different figures" % entry[4])
        table[key] = entry
    return table, others, version


def parse_table(path):
    rows, version = {}, None
    if not os.path.exists(path):
        return rows, version
    with open(path) as f:
        for line in f:
            m = re.match(r"// sm_90, CUDA (release [0-9.]+)", line)
            if m:
                version = m.group(1)
            m = re.match(r"AKX_KERNEL_RESOURCES\((\w+), (\S+), (\S+), (\S+), (\S+), (\d+), (\d+), (\d+)\)", line)
            if m:
                rows[m.groups()[:5]] = (int(m.group(6)), int(m.group(7)), int(m.group(8)))
    return rows, version


def bad_memory(table, others):
    """Device functions with local memory or a stack frame."""
    bad = []
    for key, (reg, own, frame, local, name) in sorted(table.items()):
        if frame > 0 or local > 0:
            bad.append("%s: a %d-byte stack frame, %d bytes of local memory (%d registers)" % (name, frame, local, reg))
    for arch, (reg, own, frame, local, name) in others:
        if frame > 0 or local > 0:
            bad.append("%s (%s): a %d-byte stack frame, %d bytes of local memory" % (name, arch, frame, local))
    return bad


def write(path, table, version, kept=0):
    keys = sorted(table, key=sort_key)
    with open(path, "w") as f:
        f.write("// Generated by bench/kernel_resources.py (do not edit): registers per thread and static\n"
                "// shared memory per block of every built-in kernel instance, as ptxas built them.\n"
                "// Compiled into the sim (src/sim/kernel_resources.cpp, kernels/akx/kernel_resources.cuh) for\n"
                "// its occupancy model. Regenerate after changing a kernel, from a CUDA build for sm_90\n"
                "// that prebuilds every kernel the sim does (AKX_CUDA_PREBUILT_ALL):\n"
                "//   %s\n" % REGENERATE)
        f.write("// sm_90, CUDA %s; %d kernels.\n" % (version, len(keys)))
        if kept:
            f.write("// %d rows kept from the table before (`merge`: kernels the build that wrote the\n"
                    "// others compiles at run time); they may be stale until the next full write.\n" % kept)
        spills = sum(1 for k in keys if table[k][2] > 0)
        f.write("// %d of them have a stack frame (the kernel_resources test fails on any).\n" % spills)
        f.write("// AKX_KERNEL_RESOURCES(function, src, dst, acc, op, registers, static shared bytes,\n"
                "//                      stack frame bytes)\n")
        for k in keys:
            reg, own, frame = table[k][:3]
            f.write("AKX_KERNEL_RESOURCES(%s, %s, %s, %s, %s, %d, %d, %d)\n" % (k + (reg, own, frame)))


def check(path, table, others, version):
    rows, table_version = parse_table(path)
    problems = bad_memory(table, others)
    for p in problems:
        print("SPILL OR LOCAL MEMORY: " + p)
    built = {k: v[:3] for k, v in table.items()}
    if not built:
        print("kernel_resources: no %s code in the binaries: the table (%s) is not compared" % (ARCH, path))
    else:
        diffs = []
        # Rows of kernels this build compiles at run time on CUDA (outside its prebuilt set)
        # are not compared: only a build that prebuilds them (REGENERATE's) has their code.
        not_built = len(set(rows) - set(built))
        if not_built:
            print("kernel_resources: %d of the table's %d rows are kernels this build compiles at run "
                  "time on CUDA: not compared" % (not_built, len(rows)))
        for k in sorted(set(built)):
            if rows.get(k) != built.get(k):
                diffs.append("  %-70s table %-12s built %s" % (
                    "(%s)" % ", ".join(k), rows.get(k, "missing"), built.get(k, "missing")))
        if diffs:
            print("kernel_resources: %s disagrees with the build (%s, %s) in %d kernels "
                  "(registers, static shared bytes, stack frame):" % (path, ARCH, version, len(diffs)))
            print("\n".join(diffs[:60]) + ("\n  ..." if len(diffs) > 60 else ""))
            if table_version is not None and table_version != version:
                print("kernel_resources: the table is CUDA %s's, this build's tools are %s: not a "
                      "failure (regenerate with `%s` to model this release)" % (table_version, version, REGENERATE))
            else:
                print("kernel_resources: regenerate it: " + REGENERATE)
                problems.append("table")
        else:
            print("kernel_resources: %d %s kernels match %s" % (len(built), ARCH, path))
    if problems:
        sys.exit(1)
    print("kernel_resources: no device function has a stack frame or local memory (%d %s "
          "kernels, %d others)" % (len(table), ARCH, len(others)))


# ---- occupancy at the default block sizes (H200: src/core/device_profile.c) ----------------
H200 = dict(threads=2048, blocks=32, registers=65536, shared=228 * 1024, reserved=1024)
SIZES = {"AKX_BOOL": 1, "AKX_INT8": 1, "AKX_UINT8": 1, "AKX_INT16": 2, "AKX_UINT16": 2,
         "AKX_FLOAT16": 2, "AKX_BFLOAT16": 2, "AKX_INT32": 4, "AKX_UINT32": 4, "AKX_FLOAT32": 4,
         "AKX_INT64": 8, "AKX_UINT64": 8, "AKX_FLOAT64": 8, "AKX_COMPLEX64": 8, "AKX_COMPLEX128": 16}
BLOCK = 256  # every tuning row's block (src/core/tuning.c)


def dynamic_smem(fn, acc):
    """A tile's partials at the default tuning (src/core/tuning.c: items per accumulator size;
    kernels/akx/scan_layout.cuh: runs of 1- and 2-byte partials padded to an odd word count).
    findall's selection tile has static shared memory only (kernels/akx/select_tile.cuh)."""
    if fn not in ("scan_tile", "scan_slices"):
        return 0
    w = SIZES[acc]
    ipt = 4 if fn == "scan_slices" else {1: 32, 2: 32, 4: 16, 8: 8, 16: 4}[w]
    stride = ipt
    if w < 4:
        words = (ipt * w + 3) // 4
        words += 1 - words % 2
        stride = words * 4 // w
    return BLOCK * stride * w


def resident(threads, regs, shared):
    per_warp = (regs * 32 + 255) // 256 * 256
    warps = (threads + 31) // 32
    by = [H200["blocks"], H200["threads"] // threads, H200["registers"] // (per_warp * warps)]
    by.append(H200["shared"] // (shared + H200["reserved"]))
    return max(1, min(by))


def summary(rows):
    groups = {}
    for (fn, src, dst, acc, o), (reg, own, frame) in rows.items():
        occ = resident(BLOCK, reg, own + dynamic_smem(fn, acc))
        groups.setdefault(fn, []).append((reg, own, occ))
    return groups


def occupancy(path, old=None):
    """Per kernel: instances, registers (min..max), static shared bytes, blocks of 256 threads
    resident per H200 SM (min..max over instances), and the same of an older table."""
    rows, version = parse_table(path)
    if not rows:
        fail("%s has no rows" % path)
    new = summary(rows)
    before = summary(parse_table(old)[0]) if old else {}
    head = "| kernel | instances | registers | static smem (B) | blocks/SM at %d threads |" % BLOCK
    print(head + (" before: registers | before: blocks/SM |" if old else ""))
    print("|---" * (5 + (2 if old else 0)) + "|")
    span = lambda xs: "%d" % min(xs) if min(xs) == max(xs) else "%d..%d" % (min(xs), max(xs))
    for fn in sorted(set(new) | set(before)):
        g = new.get(fn, [(0, 0, 0)])
        line = "| %s | %d | %s | %s | %s |" % (fn, len(new.get(fn, [])), span([r for r, _, _ in g]),
                                             span([s for _, s, _ in g]), span([o for _, _, o in g]))
        if old:
            b = before.get(fn, [(0, 0, 0)])
            line += " %s | %s |" % (span([r for r, _, _ in b]), span([o for _, _, o in b]))
        print(line)


def main(argv):
    if len(argv) < 3 or argv[1] not in ("check", "write", "merge", "occupancy"):
        print(__doc__, file=sys.stderr)
        return 2
    mode, path = argv[1], argv[2]
    if mode == "occupancy":
        occupancy(path, argv[3] if len(argv) > 3 else None)
        return 0
    if len(argv) < 4:
        fail("name the built library or objects after the table")
    table, others, version = read_binaries(argv[3:])
    if mode == "write":
        problems = bad_memory(table, others)
        for p in problems:
            print("SPILL OR LOCAL MEMORY: " + p)
        if problems:
            fail("refusing to write a table of kernels that spill or use local memory: fix them")
        write(path, table, version)
        print("kernel_resources: wrote %d kernels to %s" % (len(table), path))
        return 0
    if mode == "merge":
        # The built kernels' rows over the table's, the other rows kept as they are: after a
        # kernel change, from a build that prebuilds fewer kernels than the sim (the default
        # preset). The kept rows may be stale; REGENERATE makes them all anew.
        problems = bad_memory(table, others)
        if problems:
            fail("refusing to merge kernels that spill or use local memory: " + "; ".join(problems))
        rows, _ = parse_table(path)
        kept = {k: v for k, v in rows.items() if k not in table}
        merged = dict(kept)
        merged.update({k: v[:3] for k, v in table.items()})
        write(path, merged, version, kept=len(kept))
        print("kernel_resources: %d built kernels written over %s, %d rows kept" % (len(table), path, len(kept)))
        return 0
    check(path, table, others, version)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
