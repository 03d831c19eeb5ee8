/* akx_array_from_dlpack (include/akx_dlpack.h): DLPack's layout as libakx declares it, every
 * dtype code, NULL and given strides, byte_offset, device types, refusals (nothing written),
 * and a reduction over a DLPack view of device memory checked against the host.
 * (The refusals' sentences are also rows of tests/test_bad_input.c.) */
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "akx.h"
#include "akx_dlpack.h"
#include "fixture.h"

/* DLPack's ABI (LP64): the layout a tensor from any framework has. Holds for DLPack's own
 * header (libdlpack-dev) and for the declarations in akx_dlpack.h alike. */
Test(dlpack, layout_is_dlpacks) {
#ifdef AKX_DLPACK_DECLARED_HERE
  cr_log_info("DLPack declarations: include/akx_dlpack.h's own");
#else
  cr_log_info("DLPack declarations: <dlpack/dlpack.h>");
#endif
  cr_expect_eq(sizeof(DLDataType), 4);
  cr_expect_eq(offsetof(DLDataType, code), 0);
  cr_expect_eq(offsetof(DLDataType, bits), 1);
  cr_expect_eq(offsetof(DLDataType, lanes), 2);
  cr_expect_eq(sizeof(DLDevice), 8);
  cr_expect_eq(offsetof(DLDevice, device_id), 4);
  cr_expect_eq(offsetof(DLTensor, data), 0);
  cr_expect_eq(offsetof(DLTensor, device), 8);
  cr_expect_eq(offsetof(DLTensor, ndim), 16);
  cr_expect_eq(offsetof(DLTensor, dtype), 20);
  cr_expect_eq(offsetof(DLTensor, shape), 24);
  cr_expect_eq(offsetof(DLTensor, strides), 32);
  cr_expect_eq(offsetof(DLTensor, byte_offset), 40);
  cr_expect_eq(sizeof(DLTensor), 48);
  cr_expect_eq((int)kDLCPU, 1);
  cr_expect_eq((int)kDLCUDA, 2);
  cr_expect_eq((int)kDLCUDAHost, 3);
  cr_expect_eq((int)kDLCUDAManaged, 13);
  cr_expect_eq((int)kDLInt, 0);
  cr_expect_eq((int)kDLUInt, 1);
  cr_expect_eq((int)kDLFloat, 2);
  cr_expect_eq((int)kDLBfloat, 4);
  cr_expect_eq((int)kDLComplex, 5);
}

static int64_t g_shape[AKX_MAX_DIMS + 1], g_strides[AKX_MAX_DIMS + 1];

/* A 2-d {3, 5} tensor of (code, bits) at a fake CUDA address, row-major (NULL strides). */
static DLTensor tensor(uint8_t code, uint8_t bits) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = (void *)(uintptr_t)0x10000;
  t.device.device_type = kDLCUDA;
  t.ndim = 2;
  t.dtype.code = code;
  t.dtype.bits = bits;
  t.dtype.lanes = 1;
  g_shape[0] = 3;
  g_shape[1] = 5;
  t.shape = g_shape;
  t.strides = NULL;
  return t;
}

/* Calls the conversion into a poisoned descriptor; on failure checks that nothing was written. */
static akx_status convert(const DLTensor *t, akx_array *out) {
  akx_array before;
  memset(&before, 0xA5, sizeof before);
  memcpy(out, &before, sizeof before);
  const akx_status s = akx_array_from_dlpack(t, out);
  if (s != AKX_SUCCESS)
    cr_expect(memcmp(out, &before, sizeof before) == 0, "a refused conversion wrote *out (%s)",
              akx_last_error());
  return s;
}

Test(dlpack, every_dtype_code) {
  static const struct {
    uint8_t code, bits;
    akx_dtype want;
  } cases[] = {
      {6, 8, AKX_BOOL}, /* kDLBool (DLPack 0.8; Debian's 0.6 header has no name for it) */
      {kDLInt, 8, AKX_INT8},          {kDLUInt, 8, AKX_UINT8},       {kDLInt, 16, AKX_INT16},
      {kDLUInt, 16, AKX_UINT16},      {kDLInt, 32, AKX_INT32},       {kDLUInt, 32, AKX_UINT32},
      {kDLInt, 64, AKX_INT64},        {kDLUInt, 64, AKX_UINT64},     {kDLFloat, 16, AKX_FLOAT16},
      {kDLBfloat, 16, AKX_BFLOAT16},  {kDLFloat, 32, AKX_FLOAT32},   {kDLFloat, 64, AKX_FLOAT64},
      {kDLComplex, 64, AKX_COMPLEX64}, {kDLComplex, 128, AKX_COMPLEX128}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    DLTensor t = tensor(cases[i].code, cases[i].bits);
    akx_array a;
    akx_status s = convert(&t, &a);
    cr_expect_eq(s, AKX_SUCCESS, "code %u bits %u: %s", cases[i].code, cases[i].bits,
                 akx_last_error());
    cr_expect_eq(a.dtype, cases[i].want, "code %u bits %u gave %s, expected %s", cases[i].code,
                 cases[i].bits, akx_dtype_name(a.dtype), akx_dtype_name(cases[i].want));
  }
  /* what has no akx dtype: UNSUPPORTED, naming t->dtype */
  static const uint8_t refused[][2] = {{6, 1},  {kDLInt, 1}, {kDLInt, 4},   {kDLInt, 128},
                                       {kDLUInt, 1}, {kDLFloat, 8}, {kDLFloat, 128},
                                       {kDLBfloat, 32}, {kDLComplex, 32}, {kDLOpaqueHandle, 64},
                                       {7, 8} /* float8 codes of DLPack 1.x */, {200, 32}};
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
    DLTensor t = tensor(refused[i][0], refused[i][1]);
    akx_array a;
    cr_expect_eq(convert(&t, &a), AKX_ERROR_UNSUPPORTED, "code %u bits %u was accepted",
                 refused[i][0], refused[i][1]);
    cr_expect(strstr(akx_last_error(), "t->dtype") != NULL, "%s", akx_last_error());
  }
}

Test(dlpack, lanes_other_than_one_refused) {
  const uint16_t lanes[] = {0, 2, 4, 16};
  for (size_t i = 0; i < sizeof lanes / sizeof lanes[0]; i++) {
    DLTensor t = tensor(kDLFloat, 32);
    t.dtype.lanes = lanes[i];
    akx_array a;
    cr_expect_eq(convert(&t, &a), AKX_ERROR_UNSUPPORTED, "lanes %u", lanes[i]);
    cr_expect(strstr(akx_last_error(), "lanes") != NULL, "%s", akx_last_error());
  }
}

Test(dlpack, null_strides_are_row_major) {
  DLTensor t = tensor(kDLFloat, 64);
  t.ndim = 3;
  g_shape[0] = 2;
  g_shape[1] = 3;
  g_shape[2] = 4;
  akx_array a;
  cr_assert_eq(convert(&t, &a), AKX_SUCCESS, "%s", akx_last_error());
  cr_expect_eq(a.ndim, 3);
  cr_expect_eq(a.shape[0], 2);
  cr_expect_eq(a.shape[2], 4);
  cr_expect_eq(a.strides[0], 12);
  cr_expect_eq(a.strides[1], 4);
  cr_expect_eq(a.strides[2], 1);
  const int64_t shape[3] = {2, 3, 4};
  akx_array c = akx_array_c(t.data, AKX_FLOAT64, 3, shape);
  cr_expect(memcmp(&a, &c, sizeof a) == 0, "differs from akx_array_c of the same shape");
  /* the unused tail is zero, as the helpers leave it */
  for (int d = 3; d < AKX_MAX_DIMS; d++) cr_expect(a.shape[d] == 0 && a.strides[d] == 0);
}

Test(dlpack, strides_and_byte_offset_are_kept) {
  /* Julia's view(A, 3:2:999, 2:30) of a 1000 x 37 Float32 array: column-major strides (2, 1000),
   * the first element at ((3-1) + (2-1) * 1000) * 4 bytes */
  DLTensor t = tensor(kDLFloat, 32);
  g_shape[0] = 499;
  g_shape[1] = 29;
  g_strides[0] = 2;
  g_strides[1] = 1000;
  t.strides = g_strides;
  t.byte_offset = (2 + 1000) * 4;
  akx_array a;
  cr_assert_eq(convert(&t, &a), AKX_SUCCESS, "%s", akx_last_error());
  cr_expect_eq((uintptr_t)a.data, 0x10000 + (2 + 1000) * 4);
  cr_expect_eq(a.strides[0], 2);
  cr_expect_eq(a.strides[1], 1000);
  cr_expect_eq(a.shape[0], 499);
  cr_expect_eq(a.shape[1], 29);
  /* negative and zero strides (a reversed, broadcast source) are kept as they are */
  g_strides[0] = -1;
  g_strides[1] = 0;
  t.byte_offset = 498 * 4;
  cr_assert_eq(convert(&t, &a), AKX_SUCCESS, "%s", akx_last_error());
  cr_expect_eq(a.strides[0], -1);
  cr_expect_eq(a.strides[1], 0);
}

Test(dlpack, scalar_and_empty) {
  DLTensor t = tensor(kDLInt, 32);
  t.ndim = 0;
  t.shape = NULL; /* a scalar needs no shape */
  akx_array a;
  cr_expect_eq(convert(&t, &a), AKX_SUCCESS, "%s", akx_last_error());
  cr_expect_eq(a.ndim, 0);
  t = tensor(kDLInt, 32);
  g_shape[0] = 0;
  t.data = NULL; /* no element: no data needed */
  cr_expect_eq(convert(&t, &a), AKX_SUCCESS, "%s", akx_last_error());
  cr_expect_eq(a.shape[0], 0);
}

Test(dlpack, device_types) {
  const struct {
    int type;
    akx_status want;
  } cases[] = {{kDLCPU, AKX_SUCCESS},          {kDLCUDA, AKX_SUCCESS},
               {kDLCUDAManaged, AKX_SUCCESS},  {kDLCUDAHost, AKX_ERROR_UNSUPPORTED},
               {4, AKX_ERROR_UNSUPPORTED} /* OpenCL */, {7, AKX_ERROR_UNSUPPORTED} /* Vulkan */,
               {8, AKX_ERROR_UNSUPPORTED} /* Metal */,  {10, AKX_ERROR_UNSUPPORTED} /* ROCm */,
               {14, AKX_ERROR_UNSUPPORTED} /* oneAPI */, {0, AKX_ERROR_UNSUPPORTED}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    DLTensor t = tensor(kDLFloat, 32);
    t.device.device_type = (DLDeviceType)cases[i].type;
    t.device.device_id = 1; /* any ordinal: the call on a context checks the memory */
    akx_array a;
    const akx_status s = convert(&t, &a);
    cr_expect_eq(s, cases[i].want, "device type %d: %s (%s)", cases[i].type,
                 akx_status_string(s), akx_last_error());
    if (s != AKX_SUCCESS)
      cr_expect(strstr(akx_last_error(), "t->device.device_type") != NULL, "%s", akx_last_error());
  }
}

/* End to end on the context's backend: a strided, offset DLPack view of device memory (kDLCPU
 * on the sim, kDLCUDA on CUDA), summed by akx_mapreduce and by akx_reduce_dims into one
 * element, against the same view summed on the host. */
Test(dlpack, reduce_a_dlpack_view) {
  akx_context *ctx = tfx_open();
  enum { M = 64, N = 9 };      /* column-major M x N int32, as Julia's Matrix{Int32} */
  static int32_t host[M * N];
  for (int i = 0; i < M * N; i++) host[i] = (i * 37) % 101 - 50;
  int32_t *dev = tfx_upload(ctx, host, sizeof host);

  /* view(A, 2:3:M, 3:N) */
  int64_t shape[2] = {(M - 2) / 3 + 1, N - 2}, strides[2] = {3, M};
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = dev;
  t.device.device_type = tfx_is_sim(ctx) ? kDLCPU : kDLCUDA;
  t.ndim = 2;
  t.dtype.code = kDLInt;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  t.strides = strides;
  t.byte_offset = (1 + 2 * M) * sizeof(int32_t);
  int64_t want = 0;
  for (int64_t j = 0; j < shape[1]; j++)
    for (int64_t i = 0; i < shape[0]; i++) want += host[1 + 3 * i + (2 + j) * M];

  akx_array a;
  cr_assert_eq(akx_array_from_dlpack(&t, &a), AKX_SUCCESS, "%s", akx_last_error());
  int64_t got = 0; /* the AUTO accumulator of int32 ADD is int64 */
  cr_assert_eq(akx_mapreduce(ctx, &a, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &got, AKX_HOST),
               AKX_SUCCESS, "%s", akx_last_error());
  cr_expect_eq(got, want, "akx_mapreduce: %lld, expected %lld", (long long)got, (long long)want);

  int64_t *r = tfx_alloc(ctx, sizeof(int64_t));
  const int64_t one[2] = {1, 1};
  akx_array dst = akx_array_f(r, AKX_INT64, 2, one);
  cr_assert_eq(akx_reduce_dims(ctx, &dst, &a, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL), AKX_SUCCESS,
               "%s", akx_last_error());
  int64_t back = 0;
  tfx_to_host(ctx, &back, r, sizeof back);
  cr_expect_eq(back, want, "akx_reduce_dims: %lld, expected %lld", (long long)back,
               (long long)want);
  tfx_free(ctx, r);
  tfx_free(ctx, dev);
  tfx_close(ctx);
}
