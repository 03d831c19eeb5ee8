"""The Julia caller, played through libakx's C ABI with ctypes and numpy (no Julia here).

Every call is made as the README's Julia section makes it with ccall: the akx_array struct
built from a column-major array's size and strides (Julia's, in elements, never transposed),
dimension d of the descriptor as Julia's dims = d + 1, views with a step and an offset, an
output through a Ref, status codes checked as a Julia `check` would (and akx_last_error()
read on failure). Device memory comes from akx_malloc and moves with akx_memcpy (the sim reads
nothing else); results are compared with numpy on the same column-major data.

Usage: python3 julia_caller.py path/to/libakx.so   (exit 0: passed, 1: a check failed)
"""
import ctypes as C
import sys

import numpy as np

lib = C.CDLL(sys.argv[1])

# ---- the C ABI, as a Julia LibAKX module declares it -------------------------------------
AKX_MAX_DIMS = 8


class AkxArray(C.Structure):  # akx_array
    _fields_ = [("data", C.c_void_p), ("dtype", C.c_int), ("ndim", C.c_int32),
                ("shape", C.c_int64 * AKX_MAX_DIMS), ("strides", C.c_int64 * AKX_MAX_DIMS)]


class DLDevice(C.Structure):
    _fields_ = [("device_type", C.c_int), ("device_id", C.c_int32)]


class DLDataType(C.Structure):
    _fields_ = [("code", C.c_uint8), ("bits", C.c_uint8), ("lanes", C.c_uint16)]


class DLTensor(C.Structure):
    _fields_ = [("data", C.c_void_p), ("device", DLDevice), ("ndim", C.c_int32),
                ("dtype", DLDataType), ("shape", C.POINTER(C.c_int64)),
                ("strides", C.POINTER(C.c_int64)), ("byte_offset", C.c_uint64)]


assert C.sizeof(AkxArray) == 144 and C.sizeof(DLTensor) == 48

# Status values (pinned), enums counted from 0 in the order include/akx.h writes them.
AKX_SUCCESS, AKX_ERROR_INVALID_ARGUMENT, AKX_ERROR_UNSUPPORTED = 0, 1, 2
AKX_BACKEND_AUTO, AKX_BACKEND_CUDA, AKX_BACKEND_SIM = 0, 1, 2
AKX_HOST, AKX_DEVICE = 0, 1
AKX_COPY_HOST_TO_DEVICE, AKX_COPY_DEVICE_TO_HOST = 0, 1
AKX_MAP_IDENTITY, AKX_MAP_ABS, AKX_MAP_SQUARE, AKX_MAP_NONZERO = 0, 1, 2, 3
(AKX_OP_ADD, AKX_OP_MUL, AKX_OP_MIN, AKX_OP_MAX, AKX_OP_AND, AKX_OP_OR, AKX_OP_XOR,
 AKX_OP_ARGMIN, AKX_OP_ARGMAX) = range(9)
# Julia element type -> akx_dtype (numpy's name for the same type)
AKX_DTYPE = {np.bool_: 0, np.int8: 1, np.uint8: 2, np.int16: 3, np.uint16: 4, np.int32: 5,
             np.uint32: 6, np.int64: 7, np.uint64: 8, np.float16: 9, np.float32: 11,
             np.float64: 12, np.complex64: 13, np.complex128: 14}

ctx_p, arr_p, vp = C.c_void_p, C.POINTER(AkxArray), C.c_void_p
for name, res, args in [
        ("akx_version", C.c_char_p, []),
        ("akx_last_error", C.c_char_p, []),
        ("akx_status_string", C.c_char_p, [C.c_int]),
        ("akx_context_create", C.c_int, [C.POINTER(ctx_p), C.c_int, C.c_int]),
        ("akx_context_destroy", None, [ctx_p]),
        ("akx_context_set_stream", C.c_int, [ctx_p, vp]),
        ("akx_context_backend", C.c_int, [ctx_p]),
        ("akx_malloc", C.c_int, [ctx_p, C.POINTER(vp), C.c_size_t]),
        ("akx_free", C.c_int, [ctx_p, vp]),
        ("akx_memcpy", C.c_int, [ctx_p, vp, vp, C.c_size_t, C.c_int]),
        ("akx_mapreduce", C.c_int, [ctx_p, arr_p, C.c_int, C.c_int, vp, vp, C.c_int]),
        ("akx_reduce_dims", C.c_int, [ctx_p, arr_p, arr_p, C.c_int, C.c_int, vp]),
        ("akx_scan", C.c_int, [ctx_p, arr_p, arr_p, C.c_int, C.c_int32, vp]),
        ("akx_array_from_dlpack", C.c_int, [C.POINTER(DLTensor), arr_p])]:
    f = getattr(lib, name)
    f.restype, f.argtypes = res, args

failures = []


def expect(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures.append(what)


class AkxError(Exception):
    def __init__(self, status, msg):
        super().__init__(f"libakx status {status}: {msg}")
        self.status = status


def check(status):
    """Julia's check(status): 0 returns, anything else throws with akx_last_error()."""
    if status == AKX_SUCCESS:
        return
    raise AkxError(status, lib.akx_last_error().decode())


# ---- a CuArray stand-in: device memory from akx_malloc, column-major ---------------------
class DevArray:
    """A column-major device array (Julia's CuArray): base pointer, size, strides in elements,
    element offset of element (1, ..., 1); host_parent is the numpy mirror of the parent."""

    def __init__(self, ptr, dtype, size, strides, offset, host):
        self.ptr, self.dtype, self.size, self.strides = ptr, dtype, size, strides
        self.offset, self.host = offset, host

    def akx_array(self):  # akx_array(A): size(A) and strides(A), untransposed
        a = AkxArray()
        a.data = self.ptr + self.offset * np.dtype(self.dtype).itemsize
        a.dtype = AKX_DTYPE[self.dtype]
        a.ndim = len(self.size)
        for d, (n, s) in enumerate(zip(self.size, self.strides)):
            a.shape[d], a.strides[d] = n, s
        return a


def cu(ctx, host):
    """cu(A): a Fortran-ordered numpy array uploaded to akx_malloc memory."""
    host = np.asfortranarray(host)
    p = vp()
    check(lib.akx_malloc(ctx, C.byref(p), host.nbytes))
    check(lib.akx_memcpy(ctx, p, host.ctypes.data, host.nbytes, AKX_COPY_HOST_TO_DEVICE))
    strides = tuple(s // host.itemsize for s in host.strides)
    return DevArray(p.value, host.dtype.type, host.shape, strides, 0, host)


def zeros(ctx, dtype, *size):
    return cu(ctx, np.zeros(size, dtype=dtype, order="F"))


def Array(ctx, A):
    """Array(A) of a whole (not viewed) device array, back in column-major order."""
    out = np.empty(A.size, dtype=A.dtype, order="F")
    check(lib.akx_memcpy(ctx, out.ctypes.data, A.ptr, out.nbytes, AKX_COPY_DEVICE_TO_HOST))
    return out


def view(A, *ranges):
    """view(A, r1, r2, ...) with Julia ranges given as (first, step, last), 1-based and
    inclusive, or None for a whole dimension (:). Returns the device view and numpy's."""
    size, strides, offset, np_index = [], [], A.offset, []
    for d, r in enumerate(ranges):
        first, step, last = r if r is not None else (1, 1, A.size[d])
        n = max(0, (last - first) // step + 1)
        size.append(n)
        strides.append(A.strides[d] * step)
        offset += (first - 1) * A.strides[d]
        stop = first - 1 + step * n  # numpy's exclusive end, 0-based
        np_index.append(slice(first - 1, stop if stop >= 0 else None, step))
    V = DevArray(A.ptr, A.dtype, tuple(size), tuple(strides), offset, A.host)
    Vnp = A.host[tuple(np_index)]
    # Julia's strides(V) and the first element's place are numpy's too: no transposition.
    assert tuple(s // Vnp.itemsize for s in Vnp.strides) == V.strides, (Vnp.strides, V.strides)
    assert Vnp.ctypes.data - A.host.ctypes.data == offset * Vnp.itemsize
    return V, Vnp


# ---- the calls ----------------------------------------------------------------------------
REF = {np.float32: C.c_float, np.float64: C.c_double, np.int32: C.c_int32,
       np.int64: C.c_int64, np.complex128: C.c_double * 2}


def mapreduce(ctx, A, map_, op, acc):
    """s = Ref{acc}(); ccall(:akx_mapreduce, ..., Ref(akx_array(A)), ..., s, AKX_HOST)"""
    s = REF[acc]()
    check(lib.akx_mapreduce(ctx, C.byref(A.akx_array()), map_, op, None, C.byref(s), AKX_HOST))
    if acc is np.complex128:
        return complex(s[0], s[1])
    return s.value


# ---- user operators, as the README's "A user operator from Julia" makes them ----------------
class AkxUserOpDesc(C.Structure):  # akx_user_op_desc: six Ptr{UInt8} (Cstring) fields
    _fields_ = [("source", C.c_char_p), ("acc_type", C.c_char_p), ("combine", C.c_char_p),
                ("identity", C.c_char_p), ("map", C.c_char_p), ("store", C.c_char_p)]


class Welford(C.Structure):  # the isbits struct the op's Acc is: struct Welford in WELFORD
    _fields_ = [("n", C.c_double), ("mean", C.c_double), ("m2", C.c_double)]


class ArgResult32(C.Structure):  # ARGMAX of a Float32 array: {Int64 index; Float32 value}, 16 bytes
    _fields_ = [("index", C.c_int64), ("value", C.c_float), ("pad", C.c_uint32)]


WELFORD = b"""
struct Welford { double n, mean, m2; };
AKX_HD Welford combine(Welford a, Welford b) {
  if (a.n == 0) return b;
  if (b.n == 0) return a;
  Welford r;
  r.n = a.n + b.n;
  const double d = b.mean - a.mean;
  r.mean = a.mean + d * (b.n / r.n);
  r.m2 = a.m2 + b.m2 + d * d * (a.n * b.n / r.n);
  return r;
}
AKX_HD Welford identity() { Welford r; r.n = 0; r.mean = 0; r.m2 = 0; return r; }
template <class S> AKX_HD Welford map(S x, int64_t i) {
  Welford r; r.n = 1; r.mean = (double)x; r.m2 = 0; return r;
}
"""


def user_op_section(ctx, A, host):
    """op = Ref{Cint}(); ccall(:akx_user_op_create, ...); s = Ref{Welford}(); mapreduce."""
    try:
        for name, res, args in [
                ("akx_user_op_create", C.c_int, [ctx_p, C.POINTER(AkxUserOpDesc), C.POINTER(C.c_int)]),
                ("akx_user_op_destroy", C.c_int, [ctx_p, C.c_int]),
                ("akx_last_compile_log", C.c_char_p, [])]:
            f = getattr(lib, name)
            f.restype, f.argtypes = res, args
    except AttributeError as e:
        expect(False, f"this libakx has no user ops: {e}")
        return
    desc = AkxUserOpDesc(WELFORD, b"Welford", b"combine", b"identity", b"map", None)
    op = C.c_int(-1)
    st = lib.akx_user_op_create(ctx, C.byref(desc), C.byref(op))
    if st != AKX_SUCCESS:
        expect(False, f"akx_user_op_create(Welford): {lib.akx_last_error().decode()}\n"
                      f"{lib.akx_last_compile_log().decode()}")
        return
    expect(op.value >= 1024, f"a user op value >= AKX_USER_OP_FIRST: {op.value}")
    s = Welford()
    check(lib.akx_mapreduce(ctx, C.byref(A.akx_array()), AKX_MAP_IDENTITY, op.value, None,
                            C.byref(s), AKX_HOST))
    x = host.astype(np.float64)
    expect(s.n == x.size and abs(s.mean - x.mean()) <= 1e-12 * abs(x.mean()) + 1e-12
           and abs(s.m2 / s.n - x.var()) <= 1e-9 * x.var(),
           f"Welford(A): n {s.n} mean {s.mean} var {s.m2 / s.n}, numpy {x.size} {x.mean()} {x.var()}")
    check(lib.akx_user_op_destroy(ctx, op.value))

    # findmax(A) as ARGMAX: the index is Julia's linear index - 1 (column-major memory order)
    r = ArgResult32()
    check(lib.akx_mapreduce(ctx, C.byref(A.akx_array()), AKX_MAP_IDENTITY, AKX_OP_ARGMAX, None,
                            C.byref(r), AKX_HOST))
    flat = host.ravel(order="F")
    want = int(np.argmax(flat))
    expect(r.index == want and r.value == flat[want],
           f"findmax(A) = ({r.value}, {r.index + 1}), numpy argmax (F order) {want} ({flat[want]})")
    r = ArgResult32()
    check(lib.akx_mapreduce(ctx, C.byref(A.akx_array()), AKX_MAP_IDENTITY, AKX_OP_ARGMIN, None,
                          C.byref(r), AKX_HOST))
    want = int(np.argmin(flat))
    expect(r.index == want and r.value == flat[want],
           f"findmin(A) = ({r.value}, {r.index + 1}), numpy argmin (F order) {want} ({flat[want]})")


def main():
    print(f"libakx {lib.akx_version().decode()} from {sys.argv[1]}")
    ctx = ctx_p()
    check(lib.akx_context_create(C.byref(ctx), AKX_BACKEND_AUTO, 0))
    backend = lib.akx_context_backend(ctx)
    # Julia passes CUDA.stream().handle; without CUDA.jl: NULL, the default stream (the only
    # stream the sim takes).
    check(lib.akx_context_set_stream(ctx, None))
    print("backend:", {AKX_BACKEND_CUDA: "cuda", AKX_BACKEND_SIM: "sim"}[backend])

    m, n = 300, 41
    i, j = np.meshgrid(np.arange(m), np.arange(n), indexing="ij")
    host = np.asfortranarray(((i * 7 + j * 3) % 11 - 5).astype(np.float32))
    A = cu(ctx, host)
    expect(A.strides == (1, m), f"A = cu(rand(Float32, {m}, {n})): strides(A) == (1, {m})")

    # sum(A), sum(V) with V = view(A, 3:2:299, 2:41): Julia strides (2, 300), offset 2 + 300
    got = mapreduce(ctx, A, AKX_MAP_IDENTITY, AKX_OP_ADD, np.float32)
    expect(got == host.sum(dtype=np.float64), f"sum(A) = {got}, numpy {host.sum()}")
    V, Vnp = view(A, (3, 2, 299), (2, 1, 41))
    expect(V.size == (149, 40) and V.strides == (2, 300) and V.offset == 302,
           f"view(A, 3:2:299, 2:41): size {V.size} strides {V.strides} offset {V.offset}")
    got = mapreduce(ctx, V, AKX_MAP_IDENTITY, AKX_OP_ADD, np.float32)
    expect(got == Vnp.sum(dtype=np.float64), f"sum(V) = {got}, numpy {Vnp.sum()}")

    # sum!(r, V) into r = CUDA.zeros(Float32, 1, 1): akx_reduce_dims into one element
    r = zeros(ctx, np.float32, 1, 1)
    check(lib.akx_reduce_dims(ctx, C.byref(r.akx_array()), C.byref(V.akx_array()),
                              AKX_MAP_IDENTITY, AKX_OP_ADD, None))
    got = Array(ctx, r)[0, 0]
    expect(got == Vnp.sum(dtype=np.float64), f"sum!(r, V): {got}, numpy {Vnp.sum()}")

    # maximum(abs, V), count(!iszero, V), sum(abs2, W) of a 3-d view with a negative step
    got = mapreduce(ctx, V, AKX_MAP_ABS, AKX_OP_MAX, np.float32)
    expect(got == np.abs(Vnp).max(), f"maximum(abs, V) = {got}, numpy {np.abs(Vnp).max()}")
    got = mapreduce(ctx, V, AKX_MAP_NONZERO, AKX_OP_ADD, np.int64)
    expect(got == np.count_nonzero(Vnp), f"count(!iszero, V) = {got}, numpy {np.count_nonzero(Vnp)}")
    host3 = np.asfortranarray(np.arange(12 * 5 * 6, dtype=np.float64).reshape(12, 5, 6, order="F")
                              % 13 - 6)
    B = cu(ctx, host3)
    W, Wnp = view(B, (11, -2, 1), None, (2, 3, 6))  # view(B, 11:-2:1, :, 2:3:6)
    expect(W.strides == (-2, 12, 180), f"view(B, 11:-2:1, :, 2:3:6): strides {W.strides}")
    got = mapreduce(ctx, W, AKX_MAP_SQUARE, AKX_OP_ADD, np.float64)
    expect(got == (Wnp ** 2).sum(), f"sum(abs2, W) = {got}, numpy {(Wnp ** 2).sum()}")

    # Int32 (sum widens to Int64, as Julia's sum does: libakx's AUTO accumulator)
    # and ComplexF64
    hi = np.asfortranarray((np.arange(5000, dtype=np.int64).reshape(100, 50, order="F")
                            * 2654435761 % 2000001 - 1000000).astype(np.int32))
    I = cu(ctx, hi)
    got = mapreduce(ctx, I, AKX_MAP_IDENTITY, AKX_OP_ADD, np.int64)
    expect(got == hi.sum(dtype=np.int64), f"sum(Int32 matrix) = {got}, numpy {hi.sum(dtype=np.int64)}")
    got = mapreduce(ctx, I, AKX_MAP_IDENTITY, AKX_OP_MIN, np.int32)
    expect(got == hi.min(), f"minimum(Int32 matrix) = {got}, numpy {hi.min()}")
    hz = np.asfortranarray((host[:40, :10] + 1j * host[:40, 10:20]).astype(np.complex128))
    Z = cu(ctx, hz)
    got = mapreduce(ctx, Z, AKX_MAP_IDENTITY, AKX_OP_ADD, np.complex128)
    expect(got == hz.sum(), f"sum(ComplexF64 matrix) = {got}, numpy {hz.sum()}")

    # A refused call, as Julia's check sees it: status 2, the sentence, the Ref untouched
    s = C.c_float(12345.0)
    st = lib.akx_mapreduce(ctx, C.byref(V.akx_array()), AKX_MAP_IDENTITY, AKX_OP_XOR, None,
                           C.byref(s), AKX_HOST)
    msg = lib.akx_last_error().decode()
    expect(st == AKX_ERROR_UNSUPPORTED and "XOR" in msg and s.value == 12345.0,
           f"xor(V) refused: status {st} ({lib.akx_status_string(st).decode()}): {msg}")
    try:
        check(st)
        expect(False, "check(status) threw")
    except AkxError as e:
        expect(e.status == AKX_ERROR_UNSUPPORTED, f"check(status) threw: {e}")

    # The same view through DLPack (as DLPack.jl would hand it over): the same descriptor
    shape, strides = (C.c_int64 * 2)(*V.size), (C.c_int64 * 2)(*V.strides)
    t = DLTensor(data=V.ptr, ndim=2, shape=shape, strides=strides,
                 byte_offset=V.offset * 4, dtype=DLDataType(2, 32, 1),  # kDLFloat 32
                 device=DLDevice(1 if backend == AKX_BACKEND_SIM else 2, 0))  # CPU | CUDA
    a = AkxArray()
    check(lib.akx_array_from_dlpack(C.byref(t), C.byref(a)))
    expect(bytes(a) == bytes(V.akx_array()), "akx_array_from_dlpack(V's DLTensor) == akx_array(V)")

    # Along a dimension (dims = d + 1), when this libakx has it: sum(V; dims=...) into a dst
    # with 1 in the reduced dims, and cumsum(V; dims=...) through akx_scan.
    for dims in (1, 2):
        rs = tuple(1 if d + 1 == dims else V.size[d] for d in range(2))
        R = zeros(ctx, np.float32, *rs)
        st = lib.akx_reduce_dims(ctx, C.byref(R.akx_array()), C.byref(V.akx_array()),
                                 AKX_MAP_IDENTITY, AKX_OP_ADD, None)
        if st == AKX_ERROR_UNSUPPORTED:
            print(f"note  sum(V; dims={dims}) skipped: akx_reduce_dims says "
                  f"{lib.akx_last_error().decode()}")
        else:
            check(st)
            want = Vnp.sum(axis=dims - 1, keepdims=True, dtype=np.float64)
            expect(np.array_equal(Array(ctx, R), want), f"sum(V; dims={dims}) into {rs}")
        C_ = zeros(ctx, np.float32, *V.size)
        st = lib.akx_scan(ctx, C.byref(C_.akx_array()), C.byref(V.akx_array()), AKX_OP_ADD,
                          dims - 1, None)
        if st == AKX_ERROR_UNSUPPORTED:
            print(f"note  cumsum(V; dims={dims}) skipped: akx_scan says "
                  f"{lib.akx_last_error().decode()}")
        else:
            check(st)
            want = np.cumsum(Vnp, axis=dims - 1, dtype=np.float64)
            expect(np.array_equal(Array(ctx, C_), want), f"cumsum(V; dims={dims}), akx dim {dims - 1}")
        for X in (R, C_):
            check(lib.akx_free(ctx, X.ptr))

    # A user operator (Welford's mean and variance) and ARGMAX / ARGMIN of the column-major A
    user_op_section(ctx, A, host)

    for X in (A, r, B, I, Z):
        check(lib.akx_free(ctx, X.ptr))
    lib.akx_context_destroy(ctx)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("julia caller: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
