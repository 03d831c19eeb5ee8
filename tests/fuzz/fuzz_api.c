/* libFuzzer target over libakx's C API, on one sim context.
 *
 * An input is a little program: a header that sizes and fills a few device buffers, then up to
 * MAX_CALLS calls, each an opcode byte and the bytes its arguments are decoded from (see
 * decode_array, decode_opts, pick_ptr). The arguments are valid and invalid alike: dtypes,
 * ndim, shapes and strides out of range or overflowing, data pointers that are NULL, host
 * memory, misaligned, past the end of a buffer or freed. Every call must return a status of
 * the enum and never crash, hang or trip ASan/UBSan; a refused call must leave a sentence in
 * akx_last_error() and its host outputs untouched. A call the validation lets through runs on
 * the sim, whose checks must not fire (AKX_ERROR_SIM_CHECK or AKX_ERROR_INTERNAL from an
 * accepted call is a finding: validation let through something a kernel cannot do), and an
 * integer mapreduce with map IDENTITY and op add/min/max/and/or/xor is held against a small
 * reference here (exact, add wraps).
 *
 * The fuzzer keeps inside the API's contract what the library cannot check: host pointers
 * (results, init values, memcpy's host side) always point to enough host memory, a source
 * never overlaps a destination or the workspace, and the caller's workspace is never freed
 * while the context holds it. Real sources are kept small (at most MAX_ELEMS elements) unless
 * their span leaves the buffer, so that validation must refuse them.
 *
 * Seeds: tests/fuzz/corpus (tests/fuzz/make_corpus.py). Run: tests/fuzz/fuzz_short.sh (60 s on a
 * copy of the corpus), or akx_fuzz DIR... with libFuzzer's flags. Replay a saved input with
 * AKX_FUZZ_TRACE=1 akx_fuzz FILE: every call and its decoded arguments are printed.
 * AKX_FUZZ_STRICT=0: a sim check failing in an accepted call is not a finding.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akx.h"

#define MAX_CALLS 12
#define MAX_ELEMS 4096
#define NSRC 3
#define SRC_MAX_BYTES (MAX_ELEMS * 16 + 64)
#define OUT_BYTES (MAX_ELEMS * 16 + 256)
#define HOST_BYTES 1024

static akx_context *ctx;
static int strict = 1; /* AKX_FUZZ_STRICT=0: sim checks of accepted calls are not findings */
static int trace;      /* AKX_FUZZ_TRACE=1: print every call (to replay a saved input) */

/* ---- input reader ------------------------------------------------------------------------- */

typedef struct {
  const uint8_t *p;
  size_t n;
} reader;

static uint8_t u8(reader *r) {
  if (r->n == 0) return 0;
  r->n--;
  return *r->p++;
}
static uint16_t u16(reader *r) { return (uint16_t)(u8(r) | (uint16_t)u8(r) << 8); }
static uint32_t u32(reader *r) { return (uint32_t)u16(r) | (uint32_t)u16(r) << 16; }

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* ---- failures ------------------------------------------------------------------------------ */

static void finding(const char *what, const char *call, akx_status s) {
  fprintf(stderr, "akx_fuzz: %s in %s: status %d (%s); akx_last_error: %s\n", what, call, (int)s,
          akx_status_string(s), akx_last_error());
  abort();
}

/* Every call: a status of the enum; a refused call says why. */
static void check_status(const char *call, akx_status s) {
  if ((int)s < AKX_SUCCESS || (int)s > AKX_ERROR_INTERNAL) finding("status outside the enum", call, s);
  if (s == AKX_SUCCESS) return;
  if (akx_last_error()[0] == '\0') finding("a failed call without a sentence", call, s);
  if (s == AKX_ERROR_INTERNAL) finding("an internal error", call, s);
  if (s == AKX_ERROR_SIM_CHECK && strict) finding("a sim check failed after validation", call, s);
  if (s == AKX_ERROR_NO_DEVICE || s == AKX_ERROR_DEVICE) finding("a CUDA status from the sim", call, s);
}

/* ---- buffers ------------------------------------------------------------------------------- */

typedef struct {
  unsigned char *p; /* akx_malloc'd, or freed (then only its address is used) */
  size_t bytes;
  int live;
} buffer;

typedef struct {
  buffer src[NSRC];
  int nsrc;
  buffer out, ws;
  int ws_set; /* the context holds ws (or a part of it) as its caller-owned workspace */
  unsigned char *stack; /* a buffer on LLVMFuzzerTestOneInput's stack */
  _Alignas(64) unsigned char host[HOST_BYTES];
} state;

static void fill(unsigned char *p, size_t bytes, int pattern, uint64_t seed) {
  switch (pattern & 3) {
    case 0: memset(p, 0, bytes); break;
    case 1: memset(p, 0xff, bytes); break;
    case 2:
      for (size_t i = 0; i < bytes; ++i) p[i] = (unsigned char)(splitmix(&seed) & 3);
      break;
    default:
      for (size_t i = 0; i < bytes; i += 8) {
        uint64_t v = splitmix(&seed);
        memcpy(p + i, &v, bytes - i < 8 ? bytes - i : 8);
      }
  }
}

static void alloc_buffer(buffer *b, size_t bytes, int pattern, uint64_t seed) {
  b->bytes = bytes;
  b->live = 0;
  b->p = NULL;
  akx_status s = akx_malloc(ctx, (void **)&b->p, bytes);
  if (s != AKX_SUCCESS || !b->p) finding("akx_malloc of a small buffer failed", "setup", s);
  b->live = 1;
  unsigned char *h = malloc(bytes);
  if (!h) abort();
  fill(h, bytes, pattern, seed);
  s = akx_memcpy(ctx, b->p, h, bytes, AKX_COPY_HOST_TO_DEVICE);
  free(h);
  if (s != AKX_SUCCESS) finding("akx_memcpy into a fresh buffer failed", "setup", s);
}

static void free_buffer(buffer *b) {
  if (!b->live) return;
  akx_status s = akx_free(ctx, b->p);
  if (s != AKX_SUCCESS) finding("akx_free of a live buffer failed", "teardown", s);
  b->live = 0;
}

/* A pointer for an argument that is device memory: NULL, host memory, into a buffer at some
 * offset (aligned, misaligned, last element, one past the end, before the start), freed. */
static void *pick_ptr(reader *r, state *st, buffer *b, size_t elem) {
  uint8_t sel = u8(r);
  uint16_t v = u16(r);
  if (elem == 0) elem = 1;
  switch (sel % 16) {
    case 0: return NULL;
    case 1: return st->host + (v % 64);
    case 2: return st->stack + (v % 64); /* a stack address */
    case 3: return b->p + b->bytes;     /* one past the end */
    case 4: return b->p - elem;         /* before the start (address arithmetic only) */
    case 5: return b->p + (v % (b->bytes + 64));             /* anywhere, maybe misaligned */
    case 6: return b->p + (b->bytes >= elem ? b->bytes - elem : 0); /* the last element */
    case 7: return st->src[v % NSRC].live ? b->p : st->src[v % NSRC].p; /* maybe freed */
    default: return b->p + (v % (b->bytes / elem + 1)) * elem * (sel & 16 ? 1 : 0);
  }
}

/* ---- descriptors --------------------------------------------------------------------------- */

static akx_dtype decode_dtype(reader *r) {
  static const int bad[] = {15, -1, -2, 16, 100, INT32_MIN, INT32_MAX, AKX_DTYPE_AUTO};
  uint8_t v = u8(r);
  if (v < 240) return (akx_dtype)(v % AKX_DTYPE_COUNT);
  return (akx_dtype)bad[v % 8];
}

static int64_t decode_shape(reader *r) {
  static const int64_t large[] = {INT64_C(1) << 31, INT64_C(1) << 32, INT64_C(1) << 40,
                                  INT64_MAX,        INT64_C(1) << 62, INT64_C(3037000500),
                                  65536,            MAX_ELEMS + 1};
  static const int64_t negative[] = {-1, -2, INT64_MIN, -(INT64_C(1) << 40)};
  uint8_t v = u8(r);
  unsigned low = v & 31;
  switch (v >> 5) {
    case 0: case 1: case 2: return low;
    case 3: return 1;
    case 4: return (int64_t)low * low + 32;
    case 5: return large[low % 8];
    case 6: return negative[low % 4];
    default: return 0;
  }
}

static int64_t decode_stride(reader *r, int64_t contiguous) {
  static const int64_t large[] = {INT64_C(1) << 31, -(INT64_C(1) << 31), INT64_C(1) << 62,
                                  -(INT64_C(1) << 62), INT64_MAX, INT64_MIN,
                                  INT64_MAX / 2 + 1, 4096};
  uint8_t v = u8(r);
  unsigned low = v & 31;
  switch (v >> 5) {
    case 0: return 0;
    case 1: return 1;
    case 2: return -1;
    case 3: return (low & 16) ? -(int64_t)(low % 16 + 1) : (int64_t)(low % 16 + 1);
    case 4: return large[low % 8];
    default: return (low & 1) ? -contiguous : contiguous;
  }
}

/* Element count and the element-offset span, computed exactly (in 128 bits); 0 when the
 * descriptor is not a valid one. */
typedef struct {
  int valid;
  __int128 count, lo, hi;
} extent;

static extent extent_of(const akx_array *a) {
  extent e = {0, 1, 0, 0};
  if ((int)a->dtype < 0 || (int)a->dtype >= AKX_DTYPE_COUNT) return e;
  if (a->ndim < 0 || a->ndim > AKX_MAX_DIMS) return e;
  for (int d = 0; d < a->ndim; ++d) {
    if (a->shape[d] < 0) return e;
    e.count *= a->shape[d];
    if (e.count > ((__int128)1 << 63)) e.count = (__int128)1 << 63; /* saturate */
  }
  const __int128 cap = (__int128)1 << 100; /* far outside any buffer */
  if (e.count > 0)
    for (int d = 0; d < a->ndim; ++d) {
      __int128 span = (__int128)(a->shape[d] - 1) * a->strides[d];
      if (span > cap) span = cap;
      if (span < -cap) span = -cap;
      if (span < 0) e.lo += span;
      else e.hi += span;
    }
  e.valid = 1;
  return e;
}

/* Does the descriptor's memory lie inside buffer b? */
static int inside(const akx_array *a, const extent *e, const buffer *b) {
  if (!b->live || !a->data) return 0;
  size_t size = akx_dtype_size(a->dtype);
  __int128 first = (__int128)(intptr_t)a->data + e->lo * (__int128)size;
  __int128 end = (__int128)(intptr_t)a->data + (e->hi + 1) * (__int128)size;
  return first >= (__int128)(intptr_t)b->p && end <= (__int128)(intptr_t)(b->p + b->bytes);
}

/* A source array, or a destination (dst: output buffer, shapes from `like` when given). */
static void decode_array(reader *r, state *st, akx_array *a, buffer *b, const akx_array *like) {
  memset(a, 0, sizeof *a);
  a->dtype = decode_dtype(r);
  uint8_t nd = u8(r);
  static const int32_t bad_ndim[] = {-1, 9, 100, INT32_MIN, INT32_MAX, -8, 16, 8};
  a->ndim = nd < 232 ? nd % 9 : bad_ndim[nd % 8];
  if (like && (nd & 1)) a->ndim = like->ndim;
  uint8_t layout = u8(r);
  for (int d = 0; d < AKX_MAX_DIMS; ++d) {
    a->shape[d] = decode_shape(r);
    /* A destination mostly keeps or reduces each of the source's dims. */
    if (like && d < like->ndim && (layout & 0x80)) a->shape[d] = (layout >> (d % 7)) & 1 ? like->shape[d] : 1;
  }
  int64_t size = (int64_t)akx_dtype_size(a->dtype);
  (void)size;
  int nd_ok = a->ndim >= 0 && a->ndim <= AKX_MAX_DIMS ? a->ndim : AKX_MAX_DIMS;
  int64_t c = 1;
  switch (layout % 4) {
    case 0: /* row-major */
      for (int d = nd_ok - 1; d >= 0; --d) {
        a->strides[d] = c;
        if (a->shape[d] > 0 && c < (INT64_C(1) << 40)) c *= a->shape[d] > (INT64_C(1) << 20) ? 1 : a->shape[d];
      }
      break;
    case 1: /* column-major */
      for (int d = 0; d < nd_ok; ++d) {
        a->strides[d] = c;
        if (a->shape[d] > 0 && c < (INT64_C(1) << 40)) c *= a->shape[d] > (INT64_C(1) << 20) ? 1 : a->shape[d];
      }
      break;
    default: /* any strides */
      for (int d = 0; d < AKX_MAX_DIMS; ++d) {
        a->strides[d] = decode_stride(r, c);
        if (a->shape[d] > 0 && a->shape[d] < 64) c *= a->shape[d];
      }
  }
  size_t elem = akx_dtype_size(a->dtype);
  a->data = pick_ptr(r, st, b, elem ? elem : 1);

  /* A real source stays small: when the whole span is inside the buffer (validation would let
   * it run), clamp the shapes until at most MAX_ELEMS elements remain. A span that leaves the
   * buffer is left as it is: validation must refuse it. */
  extent e = extent_of(a);
  if (e.valid && e.count > MAX_ELEMS && inside(a, &e, b)) {
    __int128 n = 1;
    for (int d = 0; d < a->ndim; ++d) {
      int64_t keep = 1 + a->shape[d] % 7;
      if (a->shape[d] > keep) a->shape[d] = keep;
      if (n * a->shape[d] > MAX_ELEMS) a->shape[d] = 1;
      n *= a->shape[d];
    }
  }
}

static akx_reduce_opts *decode_opts(reader *r, akx_reduce_opts *o, unsigned char *init_buf) {
  static const int32_t block[] = {0, 32, 64, 96, 128, 256, 512, 1024, 1056, 31, -32, 33, 2048, 0, 0, 0};
  static const int32_t items[] = {0, 1, 2, 3, 4, 7, 16, 256, 257, -1, 0, 0, 8, 32, 0, 1};
  static const int32_t target[] = {0, 1, 2, 3, 7, 64, 65535, 65536, -1, 0, 0, 4, 132, 0, 1, 2};
  static const int32_t fold[] = {0, 1, 0, 1, 2, -1, 0, 0};
  uint8_t v = u8(r);
  if (v < 24) return NULL;
  *o = akx_reduce_opts_default();
  uint8_t a = u8(r);
  o->acc = a < 128 ? AKX_DTYPE_AUTO : decode_dtype(&(reader){&a, 1});
  if (a >= 128 && a < 136) o->acc = (akx_dtype)(a - 128 + AKX_INT64 - 4); /* int32..uint64 */
  o->fold = fold[v % 8];
  uint16_t t = u16(r);
  o->block_size = block[t & 15];
  o->items_per_thread = items[(t >> 4) & 15];
  o->target_blocks = target[(t >> 8) & 15];
  if ((v >> 3) & 1) {
    for (int i = 0; i < 16; ++i) init_buf[i] = u8(r);
    o->init = init_buf;
  }
  return o;
}

static akx_map decode_map(reader *r) {
  uint8_t v = u8(r);
  if (v < 200) return (akx_map)(v % AKX_MAP_COUNT);
  static const int bad[] = {4, -1, 100, INT32_MIN};
  return (akx_map)bad[v % 4];
}

static akx_op decode_op(reader *r) {
  uint8_t v = u8(r);
  /* The seven dtype-accumulator ops (ARGMIN/ARGMAX compile at run time: tests/test_argminmax.c). */
  if (v < 220) return (akx_op)(v % (AKX_OP_XOR + 1));
  static const int bad[] = {AKX_OP_COUNT, -1, 100, INT32_MAX};
  return (akx_op)bad[v % 4];
}

/* ---- the reference: integer mapreduce, map IDENTITY, op add/min/max/and/or/xor ------------- */

static int is_signed_int(akx_dtype t) {
  return t == AKX_INT8 || t == AKX_INT16 || t == AKX_INT32 || t == AKX_INT64;
}
static int is_unsigned_int(akx_dtype t) {
  return t == AKX_UINT8 || t == AKX_UINT16 || t == AKX_UINT32 || t == AKX_UINT64;
}
static int is_int(akx_dtype t) { return is_signed_int(t) || is_unsigned_int(t); }

/* The value of an integer of dtype t at p, as 64 bits (sign- or zero-extended). */
static uint64_t load_int(const unsigned char *p, akx_dtype t) {
  switch (t) {
    case AKX_INT8: { int8_t v; memcpy(&v, p, 1); return (uint64_t)(int64_t)v; }
    case AKX_UINT8: { uint8_t v; memcpy(&v, p, 1); return v; }
    case AKX_INT16: { int16_t v; memcpy(&v, p, 2); return (uint64_t)(int64_t)v; }
    case AKX_UINT16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case AKX_INT32: { int32_t v; memcpy(&v, p, 4); return (uint64_t)(int64_t)v; }
    case AKX_UINT32: { uint32_t v; memcpy(&v, p, 4); return v; }
    default: { uint64_t v; memcpy(&v, p, 8); return v; }
  }
}

/* x converted to the integer accumulator dtype t, kept sign- or zero-extended in 64 bits. */
static uint64_t to_acc(uint64_t x, akx_dtype t) {
  unsigned char b[8];
  memcpy(b, &x, 8); /* little-endian: the low bytes first */
  return load_int(b, t);
}

static uint64_t combine(akx_op op, akx_dtype t, uint64_t a, uint64_t b) {
  switch (op) {
    case AKX_OP_ADD: return to_acc(a + b, t);
    case AKX_OP_MIN:
      if (is_signed_int(t)) return (int64_t)a < (int64_t)b ? a : b;
      return a < b ? a : b;
    case AKX_OP_MAX:
      if (is_signed_int(t)) return (int64_t)a > (int64_t)b ? a : b;
      return a > b ? a : b;
    case AKX_OP_AND: return a & b;
    case AKX_OP_OR: return a | b;
    default: return a ^ b;
  }
}

static int checked_op(akx_op op) {
  return op == AKX_OP_ADD || op == AKX_OP_MIN || op == AKX_OP_MAX || op == AKX_OP_AND ||
         op == AKX_OP_OR || op == AKX_OP_XOR;
}

/* The accumulator a successful call used: the explicit one, or AUTO's rule. */
static akx_dtype acc_of(const akx_array *src, akx_op op, const akx_reduce_opts *o) {
  if (o && o->acc != AKX_DTYPE_AUTO) return o->acc;
  if (op == AKX_OP_ADD && akx_dtype_size(src->dtype) < 8)
    return is_signed_int(src->dtype) ? AKX_INT64 : AKX_UINT64;
  return src->dtype;
}

/* Expected value of the reduction of src (read back from the device) with init and, when
 * folding, the previous value `prev` (acc-typed bytes). Returns 0 when not checkable. */
static int reference(const akx_array *src, akx_op op, const akx_reduce_opts *o,
                     const unsigned char *prev, uint64_t *out, akx_dtype *acc_out) {
  akx_dtype acc = acc_of(src, op, o);
  if (!is_int(src->dtype) || !is_int(acc) || !checked_op(op)) return 0;
  extent e = extent_of(src);
  if (!e.valid || e.count > MAX_ELEMS) return 0;
  size_t size = akx_dtype_size(src->dtype);
  int have = 0;
  uint64_t r = 0;
  if (e.count > 0) {
    /* Read the span back through the API (the device's memory). */
    size_t span = (size_t)((e.hi - e.lo + 1) * (__int128)size);
    unsigned char *h = malloc(span);
    if (!h) abort();
    const unsigned char *first = (const unsigned char *)src->data + (ptrdiff_t)(e.lo * (__int128)size);
    akx_status s = akx_memcpy(ctx, h, first, span, AKX_COPY_DEVICE_TO_HOST);
    if (s != AKX_SUCCESS) finding("reading an accepted source back failed", "reference", s);
    int64_t idx[AKX_MAX_DIMS] = {0};
    for (int64_t k = 0; k < (int64_t)e.count; ++k) {
      __int128 off = -e.lo;
      for (int d = 0; d < src->ndim; ++d) off += (__int128)idx[d] * src->strides[d];
      uint64_t x = to_acc(load_int(h + (size_t)off * size, src->dtype), acc);
      r = have ? combine(op, acc, r, x) : x;
      have = 1;
      for (int d = src->ndim - 1; d >= 0; --d) {
        if (++idx[d] < src->shape[d]) break;
        idx[d] = 0;
      }
    }
    free(h);
  }
  size_t asz = akx_dtype_size(acc);
  if (o && o->init) {
    uint64_t i = load_int(o->init, acc);
    r = have ? combine(op, acc, r, i) : i;
    have = 1;
  }
  if (!have) { /* the neutral element */
    if (op == AKX_OP_MIN) r = is_signed_int(acc) ? to_acc(UINT64_MAX >> (65 - 8 * asz), acc) : UINT64_MAX;
    else if (op == AKX_OP_MAX) r = is_signed_int(acc) ? to_acc(UINT64_C(1) << (8 * asz - 1), acc) : 0;
    else if (op == AKX_OP_AND) r = to_acc(UINT64_MAX, acc);
    else r = 0;
    r = to_acc(r, acc);
  }
  if (o && o->fold) r = combine(op, acc, load_int(prev, acc), r);
  *out = r;
  *acc_out = acc;
  return 1;
}

static void check_value(const char *call, const unsigned char *got, uint64_t want, akx_dtype acc,
                        const akx_array *src, akx_op op) {
  size_t asz = akx_dtype_size(acc);
  uint64_t g = load_int(got, acc);
  if (g == to_acc(want, acc)) return;
  fprintf(stderr,
          "akx_fuzz: wrong value from %s: %s of %s (ndim %d, shape[0] %" PRId64
          ", strides[0] %" PRId64 ") into %s: got 0x%0*" PRIx64 ", want 0x%0*" PRIx64 "\n",
          call, op == AKX_OP_ADD ? "add" : op == AKX_OP_MIN ? "min" : op == AKX_OP_MAX ? "max"
                : op == AKX_OP_AND ? "and" : op == AKX_OP_OR ? "or" : "xor",
          akx_dtype_name(src->dtype), (int)src->ndim, src->shape[0], src->strides[0],
          akx_dtype_name(acc), (int)(2 * asz), g, (int)(2 * asz), to_acc(want, acc));
  abort();
}

/* ---- tracing (AKX_FUZZ_TRACE=1) -------------------------------------------------------------- */

/* Where a pointer points: a buffer and offset, the host or stack buffer, or an address. */
static void describe_ptr(const state *st, const void *p, char *out, size_t n) {
  const unsigned char *c = p;
  const buffer *bufs[NSRC + 2] = {&st->src[0], &st->src[1], &st->src[2], &st->out, &st->ws};
  const char *names[NSRC + 2] = {"src0", "src1", "src2", "out", "ws"};
  if (!p) { snprintf(out, n, "NULL"); return; }
  for (int i = 0; i < NSRC + 2; ++i)
    if (bufs[i]->p && c >= bufs[i]->p - 64 && c <= bufs[i]->p + bufs[i]->bytes + 64) {
      snprintf(out, n, "%s%s%+td (of %zu bytes)", names[i], bufs[i]->live ? "" : "(freed)",
               c - bufs[i]->p, bufs[i]->bytes);
      return;
    }
  if (c >= st->host && c < st->host + HOST_BYTES) { snprintf(out, n, "host%+td", c - st->host); return; }
  if (st->stack && c >= st->stack && c < st->stack + 128) { snprintf(out, n, "stack%+td", c - st->stack); return; }
  snprintf(out, n, "%p", p);
}

static void trace_array(const state *st, const char *name, const akx_array *a) {
  if (!trace) return;
  if (!a) { fprintf(stderr, "  %s = NULL\n", name); return; }
  char where[96];
  describe_ptr(st, a->data, where, sizeof where);
  fprintf(stderr, "  %s: dtype %d (%s), ndim %d, data %s, shape/strides", name, (int)a->dtype,
          akx_dtype_name(a->dtype), (int)a->ndim, where);
  int nd = a->ndim >= 0 && a->ndim <= AKX_MAX_DIMS ? a->ndim : AKX_MAX_DIMS;
  for (int d = 0; d < nd; ++d) fprintf(stderr, " %" PRId64 "/%" PRId64, a->shape[d], a->strides[d]);
  fprintf(stderr, "\n");
}

static void trace_opts(const akx_reduce_opts *o, size_t init_bytes) {
  if (!trace) return;
  if (!o) { fprintf(stderr, "  opts = NULL\n"); return; }
  fprintf(stderr, "  opts: acc %d, fold %d, block %d, items %d, target %d, init", (int)o->acc,
          (int)o->fold, (int)o->block_size, (int)o->items_per_thread, (int)o->target_blocks);
  if (!o->init) fprintf(stderr, " NULL");
  for (size_t i = 0; o->init && i < init_bytes; ++i) fprintf(stderr, " %02x", ((const unsigned char *)o->init)[i]);
  fprintf(stderr, "\n");
}

static void trace_status(const char *call, akx_status s) {
  if (trace) fprintf(stderr, "  -> %s%s%s\n", akx_status_string(s), s ? ": " : "", s ? akx_last_error() : "");
  (void)call;
}

/* ---- the calls ------------------------------------------------------------------------------ */

static void call_mapreduce(reader *r, state *st, int to_device) {
  akx_array src;
  buffer *b = &st->src[u8(r) % st->nsrc];
  decode_array(r, st, &src, b, NULL);
  akx_map map = decode_map(r);
  akx_op op = decode_op(r);
  akx_reduce_opts o;
  _Alignas(16) unsigned char init[16];
  const akx_reduce_opts *opts = decode_opts(r, &o, init);
  uint8_t w = u8(r);
  akx_where where = w < 250 ? (to_device ? AKX_DEVICE : AKX_HOST) : (akx_where)(w == 250 ? 2 : -1);
  const akx_array *srcp = u8(r) == 255 ? NULL : &src;

  _Alignas(16) unsigned char host_result[16], before[16];
  unsigned char *result;
  if (!to_device) {
    for (int i = 0; i < 16; ++i) host_result[i] = u8(r);
    result = (u8(r) == 255) ? NULL : host_result;
  } else {
    result = pick_ptr(r, st, &st->out, 16);
    memset(host_result, 0, 16);
    if (st->out.live && result >= st->out.p && result < st->out.p + st->out.bytes) {
      size_t left = (size_t)(st->out.p + st->out.bytes - result);
      akx_memcpy(ctx, host_result, result, left < 16 ? left : 16, AKX_COPY_DEVICE_TO_HOST);
    }
  }
  memcpy(before, host_result, 16);
  const char *name = to_device ? "akx_mapreduce(AKX_DEVICE)" : "akx_mapreduce(AKX_HOST)";
  if (trace) {
    char res[96];
    describe_ptr(st, result, res, sizeof res);
    fprintf(stderr, "%s: map %d, op %d, where %d, result %s, previous", name, (int)map, (int)op,
            (int)where, result == host_result ? "host_result" : res);
    for (int i = 0; i < 16; ++i) fprintf(stderr, " %02x", before[i]);
    fprintf(stderr, "\n");
    trace_array(st, "src", srcp);
    trace_opts(opts, 16);
  }
  akx_status s = akx_mapreduce(ctx, srcp, map, op, opts, result, where);
  trace_status(name, s);
  check_status(name, s);
  if (s != AKX_SUCCESS) {
    if (!to_device && memcmp(before, host_result, 16) != 0) finding("a refused call wrote its result", name, s);
    return;
  }
  if (map != AKX_MAP_IDENTITY || !srcp) return;
  uint64_t want;
  akx_dtype acc;
  if (!reference(&src, op, opts, before, &want, &acc)) return;
  if (to_device) {
    unsigned char got[16];
    s = akx_memcpy(ctx, got, result, akx_dtype_size(acc), AKX_COPY_DEVICE_TO_HOST);
    if (s != AKX_SUCCESS) finding("reading a device result back failed", name, s);
    check_value(name, got, want, acc, &src, op);
  } else {
    check_value(name, host_result, want, acc, &src, op);
  }
}

static void call_workspace_size(reader *r, state *st) {
  akx_array src;
  decode_array(r, st, &src, &st->src[0], NULL);
  akx_map map = decode_map(r);
  akx_op op = decode_op(r);
  akx_reduce_opts o;
  _Alignas(16) unsigned char init[16];
  const akx_reduce_opts *opts = decode_opts(r, &o, init);
  size_t bytes = 12345, *bp = u8(r) == 255 ? NULL : &bytes;
  const akx_array *srcp = u8(r) == 255 ? NULL : &src;
  if (trace) {
    fprintf(stderr, "akx_mapreduce_workspace_size: map %d, op %d, bytes %s\n", (int)map, (int)op, bp ? "&bytes" : "NULL");
    trace_array(st, "src", srcp);
    trace_opts(opts, 16);
  }
  akx_status s = akx_mapreduce_workspace_size(ctx, srcp, map, op, opts, bp);
  trace_status("akx_mapreduce_workspace_size", s);
  check_status("akx_mapreduce_workspace_size", s);
  if (s != AKX_SUCCESS && bytes != 12345) finding("a refused size query wrote its result", "akx_mapreduce_workspace_size", s);
  if (s == AKX_SUCCESS && bytes > (size_t)1 << 32) finding("an absurd workspace size", "akx_mapreduce_workspace_size", s);
}

static void call_reduce_dims(reader *r, state *st) {
  akx_array src, dst;
  decode_array(r, st, &src, &st->src[u8(r) % st->nsrc], NULL);
  decode_array(r, st, &dst, &st->out, &src);
  akx_map map = decode_map(r);
  akx_op op = decode_op(r);
  akx_reduce_opts o;
  _Alignas(16) unsigned char init[16];
  const akx_reduce_opts *opts = decode_opts(r, &o, init);
  uint8_t nul = u8(r);
  if (trace) {
    fprintf(stderr, "akx_reduce_dims: map %d, op %d\n", (int)map, (int)op);
    trace_array(st, "dst", nul == 254 ? NULL : &dst);
    trace_array(st, "src", nul == 255 ? NULL : &src);
    trace_opts(opts, 16);
  }
  akx_status s = akx_reduce_dims(ctx, nul == 254 ? NULL : &dst, nul == 255 ? NULL : &src, map, op, opts);
  trace_status("akx_reduce_dims", s);
  check_status("akx_reduce_dims", s);
}

static void call_scan(reader *r, state *st) {
  akx_array src, dst;
  decode_array(r, st, &src, &st->src[u8(r) % st->nsrc], NULL);
  uint8_t how = u8(r);
  if (how & 1) {
    dst = src; /* in place: the same view, in the source's buffer */
  } else {
    decode_array(r, st, &dst, &st->out, &src);
  }
  akx_op op = decode_op(r);
  static const int32_t dims[] = {AKX_DIM_ALL, 0, 1, 2, 7, 8, -2, INT32_MIN};
  int32_t dim = dims[u8(r) % 8];
  akx_scan_opts so = akx_scan_opts_default(), *sop = NULL;
  _Alignas(16) unsigned char init[16];
  if (how & 2) {
    sop = &so;
    if (how & 4) {
      for (int i = 0; i < 16; ++i) init[i] = u8(r);
      so.init = init;
    }
    so.acc = (how & 8) ? decode_dtype(r) : AKX_DTYPE_AUTO;
    so.exclusive = (how & 16) ? ((how & 32) ? 1 : 2) : 0;
    static const int32_t block[] = {0, 32, 256, 1024, 1056, 31, -32, 0};
    static const int32_t items[] = {0, 1, 7, 16, 256, 257, -1, 0};
    so.block_size = block[u8(r) % 8];
    so.items_per_thread = items[u8(r) % 8];
  }
  if (trace) {
    fprintf(stderr, "akx_scan: op %d, dim %d, opts %s\n", (int)op, (int)dim, sop ? "set" : "NULL");
    trace_array(st, "dst", (how & 64) ? NULL : &dst);
    trace_array(st, "src", (how & 128) ? NULL : &src);
  }
  akx_status s = akx_scan(ctx, (how & 64) ? NULL : &dst, (how & 128) ? NULL : &src, op, dim, sop);
  trace_status("akx_scan", s);
  check_status("akx_scan", s);
}

static void call_findall(reader *r, state *st) {
  akx_array src, idx;
  decode_array(r, st, &src, &st->src[u8(r) % st->nsrc], NULL);
  decode_array(r, st, &idx, &st->out, NULL);
  uint8_t how = u8(r);
  if (how & 1) {
    idx.dtype = AKX_INT64;
    if (idx.ndim > 1) idx.ndim = 1;
  }
  int64_t count = -7;
  if (trace) {
    fprintf(stderr, "akx_findall: count %s\n", (how & 8) ? "NULL" : "&count");
    trace_array(st, "src", (how & 2) ? NULL : &src);
    trace_array(st, "indices", (how & 4) ? NULL : &idx);
  }
  akx_status s = akx_findall(ctx, (how & 2) ? NULL : &src, (how & 4) ? NULL : &idx, (how & 8) ? NULL : &count);
  trace_status("akx_findall", s);
  check_status("akx_findall", s);
}

/* The segmented family: offsets or keys decoded from the fuzzer's sources (their bytes are
 * whatever the input holds: garbage offsets, any keys), one of its four calls. */
static void call_segmented(reader *r, state *st) {
  akx_array src, dst, seg, keys_out;
  decode_array(r, st, &src, &st->src[u8(r) % st->nsrc], NULL);
  decode_array(r, st, &dst, &st->out, NULL);
  decode_array(r, st, &seg, &st->src[u8(r) % st->nsrc], NULL);
  decode_array(r, st, &keys_out, &st->out, NULL);
  const uint8_t how = u8(r), which = u8(r) % 4;
  if (how & 1) { /* mostly well-formed descriptors: 1-d, offsets int32/int64, the lengths that fit */
    src.ndim = dst.ndim = seg.ndim = keys_out.ndim = 1;
    seg.dtype = which >= 2 ? AKX_INT32 : (how & 2) ? AKX_INT64 : AKX_INT32;
    if (which == 0) seg.shape[0] = dst.shape[0] + 1;
  }
  akx_op op = decode_op(r);
  akx_map map = decode_map(r);
  akx_scan_opts so = akx_scan_opts_default();
  so.exclusive = (how & 4) ? 1 : 0;
  int64_t runs = -7;
  akx_status s;
  const char *name;
  if (trace) fprintf(stderr, "segmented call %d: op %d, map %d, how %d\n", (int)which, (int)op, (int)map, (int)how);
  switch (which) {
    case 0:
      name = "akx_segmented_reduce";
      s = akx_segmented_reduce(ctx, (how & 64) ? NULL : &dst, &src, (how & 128) ? NULL : &seg, map, op, NULL);
      break;
    case 1:
      name = "akx_segmented_scan";
      s = akx_segmented_scan(ctx, (how & 64) ? NULL : &dst, &src, (how & 128) ? NULL : &seg, op, &so);
      break;
    case 2:
      name = "akx_reduce_by_key";
      s = akx_reduce_by_key(ctx, &keys_out, (how & 64) ? NULL : &dst, (how & 128) ? NULL : &seg, &src, map, op, NULL,
                            (how & 8) ? NULL : &runs);
      break;
    default:
      name = "akx_scan_by_key";
      s = akx_scan_by_key(ctx, (how & 64) ? NULL : &dst, (how & 128) ? NULL : &seg, &src, op, &so);
      break;
  }
  trace_status(name, s);
  check_status(name, s);
}

static void call_set_workspace(reader *r, state *st) {
  uint8_t sel = u8(r);
  uint16_t v = u16(r);
  void *p;
  size_t bytes;
  int ours = 0;
  switch (sel % 10) {
    case 0: p = NULL; bytes = 0; break;
    case 1: p = NULL; bytes = v; break;
    case 2: p = st->ws.p; bytes = 0; break;
    case 3: p = st->ws.p; bytes = st->ws.bytes; ours = 1; break;
    case 4: p = st->ws.p; bytes = 1 + v % st->ws.bytes; ours = 1; break; /* maybe too small */
    case 5: p = st->ws.p + 256; bytes = st->ws.bytes; break;              /* leaves the buffer */
    case 6: p = st->ws.p + 1 + v % 255; bytes = 64; break;                /* misaligned */
    case 7: p = st->host; bytes = 64; break;
    case 8: p = st->ws.p; bytes = SIZE_MAX; break;
    default: p = st->ws.p + 256; bytes = st->ws.bytes > 256 ? st->ws.bytes - 256 : 1; ours = 1;
  }
  akx_status s = akx_context_set_workspace(ctx, p, bytes);
  if (trace) {
    char where[96];
    describe_ptr(st, p, where, sizeof where);
    fprintf(stderr, "akx_context_set_workspace: ptr %s, bytes %zu\n", where, bytes);
  }
  trace_status("akx_context_set_workspace", s);
  check_status("akx_context_set_workspace", s);
  if (s == AKX_SUCCESS) st->ws_set = p != NULL;
  if (s == AKX_SUCCESS && p && !ours) finding("a workspace outside the buffer was accepted", "akx_context_set_workspace", s);
}

static void call_malloc_free(reader *r, state *st) {
  uint8_t sel = u8(r);
  uint16_t v = u16(r);
  akx_status s;
  if (trace) fprintf(stderr, "memory/misc: case %d, v %u\n", sel % 8, (unsigned)v);
  switch (sel % 8) {
    case 0: { /* a fresh allocation, written, freed */
      static const size_t sizes[] = {0, 1, 3, 255, 256, 257, 4096, 65536,
                                     SIZE_MAX, SIZE_MAX - 254, SIZE_MAX - 100, 0};
      size_t bytes = sizes[v % 12];
      if (v & 0x8000) bytes = v & 0x7fff;
      void *const untouched = &v, *p = untouched;
      s = akx_malloc(ctx, &p, bytes);
      check_status("akx_malloc", s);
      if (s == AKX_SUCCESS && bytes > 0) {
        if (!p || (uintptr_t)p % 256) finding("akx_malloc gave a NULL or unaligned pointer", "akx_malloc", s);
        unsigned char h[64] = {0};
        s = akx_memcpy(ctx, p, h, bytes < 64 ? bytes : 64, AKX_COPY_HOST_TO_DEVICE);
        check_status("akx_memcpy", s);
        if (s != AKX_SUCCESS) finding("akx_memcpy into a fresh allocation failed", "akx_memcpy", s);
        s = akx_free(ctx, p);
        if (s != AKX_SUCCESS) finding("akx_free of a fresh allocation failed", "akx_free", s);
      } else if (s == AKX_SUCCESS && p != NULL) {
        finding("akx_malloc of 0 bytes gave a pointer", "akx_malloc", s);
      } else if (s != AKX_SUCCESS && p != untouched) {
        finding("a failed akx_malloc wrote its output", "akx_malloc", s); /* written on success only */
      }
      break;
    }
    case 1: s = akx_malloc(ctx, NULL, v); check_status("akx_malloc", s); break;
    case 2: { /* free a source buffer (later calls see its freed address) */
      buffer *b = &st->src[v % st->nsrc];
      s = akx_free(ctx, b->p);
      check_status("akx_free", s);
      if (b->live && s != AKX_SUCCESS) finding("akx_free of a live buffer failed", "akx_free", s);
      if (!b->live && s == AKX_SUCCESS) finding("a double akx_free was accepted", "akx_free", s);
      b->live = 0;
      break;
    }
    case 3: s = akx_free(ctx, st->src[v % st->nsrc].p + 1 + v % 64); check_status("akx_free", s);
      if (s == AKX_SUCCESS) finding("akx_free inside a buffer was accepted", "akx_free", s);
      break;
    case 4: s = akx_free(ctx, st->host + v % 64); check_status("akx_free", s);
      if (s == AKX_SUCCESS) finding("akx_free of host memory was accepted", "akx_free", s);
      break;
    case 5: s = akx_free(ctx, NULL); check_status("akx_free", s); break;
    case 6: s = akx_free(NULL, st->out.p); check_status("akx_free", s);
      if (s == AKX_SUCCESS) finding("akx_free without a context was accepted", "akx_free", s);
      break;
    default: { /* info, synchronize, streams, names */
      akx_context_info_t info;
      s = akx_context_info(ctx, (v & 1) ? NULL : &info);
      check_status("akx_context_info", s);
      s = akx_synchronize(ctx);
      check_status("akx_synchronize", s);
      s = akx_context_set_stream(ctx, (v & 2) ? (void *)st->host : NULL);
      check_status("akx_context_set_stream", s);
      int x = (int)(int16_t)v;
      if (!akx_status_string((akx_status)x) || !akx_dtype_name((akx_dtype)x)) abort();
      (void)akx_dtype_size((akx_dtype)x);
    }
  }
}

static void call_memcpy(reader *r, state *st) {
  uint8_t sel = u8(r);
  uint16_t v = u16(r);
  akx_copy_kind k = sel < 240 ? (akx_copy_kind)(sel % 3) : (akx_copy_kind)(sel % 2 ? 3 : -1);
  buffer *b = (sel & 8) ? &st->out : &st->src[v % st->nsrc];
  /* The device side: anywhere around the buffer. The host side: always enough host memory. */
  void *dev = pick_ptr(r, st, b, 1);
  void *dev2 = pick_ptr(r, st, &st->out, 1);
  uint16_t n = u16(r);
  size_t bytes = (k == AKX_COPY_DEVICE_TO_DEVICE && (sel & 16)) ? (size_t)n << 8 : n % (HOST_BYTES + 1);
  if ((sel & 32) && k == AKX_COPY_DEVICE_TO_DEVICE) bytes = SIZE_MAX - n;
  if (k == AKX_COPY_DEVICE_TO_DEVICE && b == &st->out && dev && dev2 && bytes <= OUT_BYTES) {
    /* overlapping device copies are the caller's mistake (memcpy): keep them apart (a larger
     * copy leaves the buffer and must be refused) */
    uintptr_t a = (uintptr_t)dev, c = (uintptr_t)dev2;
    if (a < c + bytes && c < a + bytes) return;
  }
  void *host = (sel & 64) ? NULL : st->host;
  akx_status s;
  if (trace) {
    char a[96], b2[96];
    describe_ptr(st, dev, a, sizeof a);
    describe_ptr(st, dev2, b2, sizeof b2);
    fprintf(stderr, "akx_memcpy: kind %d, bytes %zu, device %s, device2 %s, host %s\n", (int)k,
            bytes, a, b2, host ? "host" : "NULL");
  }
  switch ((int)k) {
    case AKX_COPY_HOST_TO_DEVICE: s = akx_memcpy(ctx, dev, host, bytes, k); break;
    case AKX_COPY_DEVICE_TO_HOST: s = akx_memcpy(ctx, host, dev, bytes, k); break;
    case AKX_COPY_DEVICE_TO_DEVICE: s = akx_memcpy(ctx, dev2, dev, bytes, k); break;
    default: s = akx_memcpy(ctx, dev, host, bytes, k);
  }
  check_status("akx_memcpy", s);
}

/* ---- libFuzzer ------------------------------------------------------------------------------ */

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  const char *e = getenv("AKX_FUZZ_STRICT");
  if (e && e[0] == '0') strict = 0;
  e = getenv("AKX_FUZZ_TRACE");
  if (e && e[0] == '1') trace = 1;
  akx_status s = akx_context_create(&ctx, AKX_BACKEND_SIM, 0);
  if (s != AKX_SUCCESS) {
    fprintf(stderr, "akx_fuzz: no sim context: %s: %s\n", akx_status_string(s), akx_last_error());
    abort();
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  reader rd = {data, size}, *r = &rd;
  static state st;
  unsigned char stack[128];
  memset(&st, 0, sizeof st);
  memset(stack, 0x5a, sizeof stack);
  st.stack = stack;
  for (size_t i = 0; i < HOST_BYTES; ++i) st.host[i] = (unsigned char)(i * 37 + 11);

  /* The header: how many sources, their sizes and contents; the workspace buffer. */
  uint8_t h = u8(r);
  st.nsrc = 1 + h % NSRC;
  for (int i = 0; i < st.nsrc; ++i) {
    uint16_t v = u16(r);
    size_t bytes = 1 + (size_t)v % SRC_MAX_BYTES;
    alloc_buffer(&st.src[i], bytes, u8(r), u32(r));
  }
  for (int i = st.nsrc; i < NSRC; ++i) st.src[i] = st.src[0]; /* aliases of the first */
  alloc_buffer(&st.out, OUT_BYTES, 3, 7);
  alloc_buffer(&st.ws, 256 + (size_t)u16(r) % 8192, 3, 9);

  if (trace)
    fprintf(stderr, "input: %d sources of %zu, %zu, %zu bytes; workspace buffer %zu bytes\n", st.nsrc,
            st.src[0].bytes, st.nsrc > 1 ? st.src[1].bytes : 0, st.nsrc > 2 ? st.src[2].bytes : 0, st.ws.bytes);
  for (int call = 0; call < MAX_CALLS && r->n > 0; ++call) {
    switch (u8(r) % 13) {
      case 0: case 1: case 2: call_mapreduce(r, &st, 0); break;
      case 3: call_mapreduce(r, &st, 1); break;
      case 4: call_workspace_size(r, &st); break;
      case 5: call_reduce_dims(r, &st); break;
      case 6: call_scan(r, &st); break;
      case 7: call_findall(r, &st); break;
      case 8: call_set_workspace(r, &st); break;
      case 9: call_malloc_free(r, &st); break;
      case 12: call_segmented(r, &st); break;
      default: call_memcpy(r, &st); break;
    }
  }

  /* Back to the context's own workspace before the caller's buffer goes. */
  if (st.ws_set) check_status("akx_context_set_workspace", akx_context_set_workspace(ctx, NULL, 0));
  for (int i = 0; i < st.nsrc; ++i) free_buffer(&st.src[i]);
  free_buffer(&st.out);
  free_buffer(&st.ws);
  return 0;
}
