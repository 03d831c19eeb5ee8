#!/usr/bin/env python3
"""What ptxas made of every built-in kernel: registers, static shared memory, stack and local
memory per kernel instance, read from the built device code with
`cuobjdump --dump-resource-usage` (the CUDA toolkit's, or PyPI's nvidia-cuda-cuobjdump).

  kernel_resources.py check BINARY...     the kernel_resources ctest: fails (exit 1) on any
                                          device function with local memory or a stack frame
                                          (a spill, or a local array), on any sm_90 instance
                                          that uses more registers than its kernel declares
                                          (kernel_info.registers, its class), and on a built
                                          kernel that declares none
  kernel_resources.py classes BINARY...   per kernel: the declared class, the instances built,
                                          their registers and static shared memory, and the
                                          blocks of 256 threads resident per H200 SM at the
                                          class (bench/RESULTS.md, "Declared registers")

BINARY: libakx.so or the kernel objects of a CUDA build (the all-kernels preset,
AKX_CUDA_PREBUILT_ALL, builds every kernel the tests run). The tool: $AKX_CUOBJDUMP, else
cuobjdump on PATH, in the toolkit next to nvcc, or in a pip-installed nvidia-cuda-cuobjdump
(found on sys.path and under /opt/akx-tools, where .ci/run puts it). Demangling: c++filt.

The classes are what the sim's occupancy model takes (kernels/akx/device.cuh, kernel_info), so
that a sim-only build sees the registers the GPU will have at most; they are read here from the
kernels' declarations, `constexpr kernel_info NAME{"name", threads, registers, ...}` in
kernels/akx/*.cuh, under the kernel's key (the declaration's function field where it has one,
else its name: the family list's K rows, src/core/families.h). A kernel declared under several
names is held to the smallest class among them.

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
KERNELS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kernels", "akx")
DECLARATION = re.compile(r'constexpr\s+kernel_info\s+\w+\s*\{\s*"(\w+)"\s*,\s*[^,]+,\s*(\d+)\s*,[^}]*?(?:,\s*"(\w+)"\s*)?\}')


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


def declared_classes():
    """{kernel key: registers} from the kernels' declarations (the smallest class where one
    kernel is declared under several names)."""
    classes = {}
    for path in sorted(glob.glob(os.path.join(KERNELS_DIR, "*"))):
        with open(path) as f:
            text = f.read()
        for name, registers, function in DECLARATION.findall(text):
            key = function or name
            classes[key] = min(classes.get(key, 1 << 30), int(registers))
    if not classes:
        fail("no kernel_info declarations read under %s" % KERNELS_DIR)
    return classes


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


def check(table, others, version):
    problems = bad_memory(table, others)
    for p in problems:
        print("SPILL OR LOCAL MEMORY: " + p)
    if not table:
        fail("no %s code in the binaries: the declared classes cannot be checked" % ARCH)
    classes = declared_classes()
    over = []
    for key, (reg, own, frame, local, name) in sorted(table.items()):
        cls = classes.get(key[0])
        if cls is None:
            over.append("%s: kernel %s declares no registers (no kernel_info under kernels/akx/ names it)" % (name, key[0]))
        elif reg > cls:
            over.append("%s: %d registers, above its kernel's class of %d (%s's kernel_info.registers)" % (
                name, reg, cls, key[0]))
    for o in over:
        print("ABOVE ITS CLASS: " + o)
    if problems or over:
        sys.exit(1)
    most = {}
    for key, v in table.items():
        most[key[0]] = max(most.get(key[0], 0), v[0])
    print("kernel_resources: %d %s kernels (%s) within their classes: %s" % (
        len(table), ARCH, version, ", ".join("%s %d/%d" % (k, most[k], classes[k]) for k in sorted(most))))
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


def classes_report(table):
    """Per kernel: its class, instances, registers (min..max), static shared bytes, and the
    blocks of 256 threads resident per H200 SM at the class (the sim's figure) and at the
    most registers built."""
    classes = declared_classes()
    groups = {}
    for (fn, src, dst, acc, o), (reg, own, frame, local, name) in table.items():
        groups.setdefault(fn, []).append((reg, own, acc))
    print("| kernel | class | instances | registers | static smem (B) | blocks/SM at the class | at the most built |")
    print("|---" * 7 + "|")
    span = lambda xs: "%d" % min(xs) if min(xs) == max(xs) else "%d..%d" % (min(xs), max(xs))
    for fn in sorted(groups):
        g = groups[fn]
        cls = classes.get(fn, 0)
        smem = max(own + dynamic_smem(fn, acc) for _, own, acc in g)
        print("| %s | %d | %d | %s | %s | %d | %d |" % (fn, cls, len(g), span([r for r, _, _ in g]),
              span([s for _, s, _ in g]), resident(BLOCK, cls, smem), resident(BLOCK, max(r for r, _, _ in g), smem)))


def main(argv):
    if len(argv) < 3 or argv[1] not in ("check", "classes"):
        print(__doc__, file=sys.stderr)
        return 2
    table, others, version = read_binaries(argv[2:])
    if argv[1] == "classes":
        classes_report(table)
        return 0
    check(table, others, version)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
