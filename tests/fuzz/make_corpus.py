#!/usr/bin/env python3
"""Writes the seed corpus of akx_fuzz (tests/fuzz/corpus/*.bin): small programs in the byte
format that fuzz_api.c decodes. Run it again after changing that format."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

# dtypes, maps, ops (akx.h)
BOOL, I8, U8, I16, U16, I32, U32, I64, U64, F16, BF16, F32, F64, C64, C128 = range(15)
IDENTITY, ABS, SQUARE, NONZERO = range(4)
ADD, MUL, MIN, MAX, AND, OR, XOR = range(7)
# opcodes (LLVMFuzzerTestOneInput)
MR_HOST, MR_DEVICE, WS_SIZE, REDUCE_DIMS, SCAN, FINDALL, SET_WS, MALLOC_FREE, MEMCPY = 0, 3, 4, 5, 6, 7, 8, 9, 10


def u8(v): return struct.pack('<B', v & 0xff)
def u16(v): return struct.pack('<H', v & 0xffff)
def u32(v): return struct.pack('<I', v & 0xffffffff)


def header(sizes, patterns=None, ws=4096):
    """sizes: bytes of each source buffer (1..3 of them)."""
    patterns = patterns or [3] * len(sizes)
    b = u8(len(sizes) - 1)
    for i, (s, p) in enumerate(zip(sizes, patterns)):
        b += u16(s - 1) + u8(p) + u32(1234 + i)
    return b + u16(ws - 256)


def shape(n):
    """The shape byte for n: 0..31 directly, 1, or k*k+32; 'big0'..'big7', 'neg0'..'neg3'."""
    if isinstance(n, str):
        kind, i = n[:3], int(n[3:])
        return u8((5 << 5 | i) if kind == 'big' else (6 << 5 | i))
    if n < 32: return u8(n)
    k = int(round((n - 32) ** 0.5))
    assert k * k + 32 == n, n
    return u8(4 << 5 | k)


def stride(s):
    if s == 0: return u8(0)
    if s == 1: return u8(1 << 5)
    if s == -1: return u8(2 << 5)
    if isinstance(s, str): return u8(4 << 5 | int(s[3:]))  # 'big0'..'big7'
    assert 1 <= abs(s) <= 16
    return u8(3 << 5 | (16 if s < 0 else 0) | (abs(s) - 1))


def array(dtype, shp, layout=0, strides=None, ptr=(8, 0), ndim=None, like_bits=0):
    """layout 0 row-major, 1 column-major, 2 explicit strides. ptr: (pick_ptr selector, v)."""
    nd = len(shp) if ndim is None else ndim
    b = u8(dtype) + u8(nd) + u8(layout | like_bits)
    shp = list(shp) + [1] * (8 - len(shp))
    for n in shp: b += shape(n)
    if layout % 4 >= 2:
        st = list(strides) + [1] * (8 - len(strides))
        for s in st: b += stride(s)
    return b + u8(ptr[0]) + u16(ptr[1])


def opts(acc=None, fold=0, block=0, items=0, target=0, init=None):
    """None for NULL opts. block/items/target: indices into fuzz_api.c's tables."""
    v = 24 + (1 if fold else 0) + (8 if init is not None else 0)
    b = u8(v) + u8(0 if acc is None else acc) + u16(block | items << 4 | target << 8)
    if init is not None: b += init.ljust(16, b'\0')
    return b


NULL_OPTS = u8(0)


def mr_host(buf, arr, op, map_=IDENTITY, o=NULL_OPTS, result=b'\x11' * 16):
    return u8(MR_HOST) + u8(buf) + arr + u8(map_) + u8(op) + o + u8(0) + u8(0) + result + u8(0)


def mr_device(buf, arr, op, map_=IDENTITY, o=NULL_OPTS, res=(8, 0)):
    return u8(MR_DEVICE) + u8(buf) + arr + u8(map_) + u8(op) + o + u8(0) + u8(0) + u8(res[0]) + u16(res[1])


seeds = {
    'int32_sum': header([4000]) + mr_host(0, array(I32, [993]), ADD),
    'int8_min_2d_colmajor_init': header([600]) + mr_host(0, array(I8, [20, 29], layout=1), MIN,
                                                          o=opts(init=b'\x05')),
    'uint16_max_negative_strides': header([2000], [2]) +
        mr_host(0, array(U16, [9, 10], layout=2, strides=[-10, -1], ptr=(6, 0)), MAX, o=opts(block=5)),
    'int64_xor_fold_device': header([8192]) +
        mr_device(0, array(I64, [5, 7, 3], layout=2, strides=[15, 3, 1]), XOR, o=opts(fold=1, items=4)),
    'float32_sum_and_uint8_or': header([4096, 300]) + mr_host(0, array(F32, [993]), ADD) +
        mr_host(1, array(U8, [17, 17]), OR, o=opts(target=4)),
    'reduce_dims_int32': header([4096]) + u8(REDUCE_DIMS) + u8(0) + array(I32, [30, 30]) +
        array(I32, [1, 1], ptr=(8, 0)) + u8(IDENTITY) + u8(ADD) + opts(fold=1) + u8(0),
    'workspace_small_then_sum': header([4096], ws=512) + u8(WS_SIZE) + array(I16, [96]) +
        u8(IDENTITY) + u8(ADD) + opts(target=6) + u8(0) + u8(0) +
        u8(SET_WS) + u8(4) + u16(40) + mr_host(0, array(I16, [96]), ADD, o=opts(target=6)) +
        u8(SET_WS) + u8(3) + u16(0) + mr_host(0, array(I16, [96]), ADD) + u8(SET_WS) + u8(0) + u16(0),
    'malloc_free_memcpy': header([256]) + u8(MALLOC_FREE) + u8(0) + u16(6) + u8(MALLOC_FREE) + u8(0) +
        u16(8) + u8(MALLOC_FREE) + u8(2) + u16(0) + u8(MALLOC_FREE) + u8(7) + u16(3) +
        u8(MEMCPY) + u8(0) + u16(0) + u8(8) + u16(0) + u8(8) + u16(0) + u16(100) +
        u8(MEMCPY) + u8(2) + u16(0) + u8(8) + u16(0) + u8(8) + u16(64) + u16(64),
    'invalid_descriptors': header([68]) + mr_host(0, array(250, [4]), ADD) +
        mr_host(0, array(I32, [4], ndim=240), ADD) + mr_host(0, array(I32, ['neg0']), ADD) +
        mr_host(0, array(I32, [4], ptr=(0, 0)), ADD) + mr_host(0, array(F64, [3], ptr=(5, 3)), MIN),
    'huge_shapes': header([1024]) + mr_host(0, array(I32, ['big3', 4], layout=2, strides=[0, 1]), ADD) +
        mr_host(0, array(I32, ['big2'], layout=2, strides=[1]), ADD) +
        mr_host(0, array(U32, ['big0', 'big1'], layout=2, strides=[0, 0]), MAX),
    'scan_findall': header([4096]) + u8(SCAN) + u8(0) + array(F32, [68]) + u8(1) + u8(ADD) + u8(0) +
        u8(FINDALL) + u8(0) + array(I32, [68]) + array(I64, [68]) + u8(1),
    'complex_abs_bool_any': header([4096, 512]) + mr_host(0, array(C128, [228]), ADD, map_=ABS) +
        mr_host(1, array(BOOL, [473]), OR, map_=NONZERO) + mr_host(0, array(U64, [8, 8]), AND) +
        mr_host(0, array(C64, [30]), MUL, map_=SQUARE),
}

out = os.path.join(HERE, 'corpus')
os.makedirs(out, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(out, name + '.bin'), 'wb') as f:
        f.write(data)
print(f'{len(seeds)} seeds in {out}')
