/* The small parts of the public API: status strings, dtypes, array helpers, option
 * defaults, contexts and their info, the sim's device profiles, memory helpers, a scan and
 * a findall through the API, and akx_last_error's thread-locality. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "reference.h"

/* ---- status ---------------------------------------------------------------------------------- */

Test(api, status_strings) {
  static const char *names[] = {
      "AKX_SUCCESS",           "AKX_ERROR_INVALID_ARGUMENT",    "AKX_ERROR_UNSUPPORTED",
      "AKX_ERROR_OUT_OF_MEMORY", "AKX_ERROR_WORKSPACE_TOO_SMALL", "AKX_ERROR_OUTPUT_TOO_SMALL",
      "AKX_ERROR_NO_DEVICE",   "AKX_ERROR_DEVICE",              "AKX_ERROR_SIM_CHECK",
      "AKX_ERROR_INTERNAL"};
  /* the values are pinned (ABI) */
  cr_assert_eq(AKX_SUCCESS, 0);
  cr_assert_eq(AKX_ERROR_INVALID_ARGUMENT, 1);
  cr_assert_eq(AKX_ERROR_INTERNAL, 9);
  for (int s = 0; s < 10; s++) {
    const char *a = akx_status_string((akx_status)s);
    cr_assert(a != NULL && a[0] != '\0', "status %d: empty string", s);
    cr_expect_str_eq(a, names[s], "status %d: \"%s\", expected \"%s\"", s, a, names[s]);
    for (int t = 0; t < s; t++)
      cr_assert_str_neq(a, akx_status_string((akx_status)t), "statuses %d and %d share \"%s\"", s,
                        t, a);
  }
  static const int bad[] = {10, 11, -1, 1000, INT32_MIN};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    const char *a = akx_status_string((akx_status)bad[i]);
    cr_assert(a != NULL, "status %d: NULL", bad[i]);
    cr_expect_str_eq(a, "unknown status", "status %d: \"%s\"", bad[i], a);
  }
}

/* ---- dtypes ---------------------------------------------------------------------------------- */

Test(api, dtype_sizes_and_names) {
  static const struct {
    akx_dtype t;
    size_t size;
    const char *name;
  } k[] = {{AKX_BOOL, 1, "bool"},         {AKX_INT8, 1, "int8"},       {AKX_UINT8, 1, "uint8"},
           {AKX_INT16, 2, "int16"},       {AKX_UINT16, 2, "uint16"},   {AKX_INT32, 4, "int32"},
           {AKX_UINT32, 4, "uint32"},     {AKX_INT64, 8, "int64"},     {AKX_UINT64, 8, "uint64"},
           {AKX_FLOAT16, 2, "float16"},   {AKX_BFLOAT16, 2, "bfloat16"}, {AKX_FLOAT32, 4, "float32"},
           {AKX_FLOAT64, 8, "float64"},   {AKX_COMPLEX64, 8, "complex64"},
           {AKX_COMPLEX128, 16, "complex128"}};
  cr_assert_eq(AKX_DTYPE_COUNT, 15);
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    cr_assert_eq((int)k[i].t, (int)i, "dtype values are pinned");
    cr_expect_eq(akx_dtype_size(k[i].t), k[i].size, "akx_dtype_size(%s) = %zu, expected %zu",
                 k[i].name, akx_dtype_size(k[i].t), k[i].size);
    cr_expect_str_eq(akx_dtype_name(k[i].t), k[i].name, "akx_dtype_name(%d) = \"%s\"", (int)i,
                     akx_dtype_name(k[i].t));
    /* the reference's own table agrees */
    cr_expect_eq(ref_size(k[i].t), k[i].size);
    cr_expect_str_eq(ref_name(k[i].t), k[i].name);
  }
  static const int bad[] = {15, 16, 99, -2, -100, INT32_MAX};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    cr_expect_eq(akx_dtype_size((akx_dtype)bad[i]), 0, "akx_dtype_size(%d) = %zu", bad[i],
                 akx_dtype_size((akx_dtype)bad[i]));
    cr_expect_str_eq(akx_dtype_name((akx_dtype)bad[i]), "invalid", "akx_dtype_name(%d) = \"%s\"",
                     bad[i], akx_dtype_name((akx_dtype)bad[i]));
  }
  cr_expect_str_eq(akx_dtype_name(AKX_DTYPE_AUTO), "auto");
  cr_expect_eq(akx_dtype_size(AKX_DTYPE_AUTO), 0, "AUTO is not an element type");
}

/* ---- array helpers --------------------------------------------------------------------------- */

Test(api, array_helpers) {
  int x;
  akx_array v = akx_vector(&x, AKX_INT32, 12345);
  cr_assert(v.data == &x && v.dtype == AKX_INT32 && v.ndim == 1);
  cr_assert(v.shape[0] == 12345 && v.strides[0] == 1, "vector: shape %lld stride %lld",
            (long long)v.shape[0], (long long)v.strides[0]);
  int64_t shape[4] = {2, 3, 4, 5};
  akx_array c = akx_array_c(&x, AKX_FLOAT64, 4, shape);
  akx_array f = akx_array_f(&x, AKX_FLOAT64, 4, shape);
  static const int64_t cs[4] = {60, 20, 5, 1}, fs[4] = {1, 2, 6, 24};
  cr_assert(c.data == &x && c.dtype == AKX_FLOAT64 && c.ndim == 4);
  cr_assert(f.data == &x && f.dtype == AKX_FLOAT64 && f.ndim == 4);
  for (int d = 0; d < 4; d++) {
    cr_expect(c.shape[d] == shape[d] && c.strides[d] == cs[d], "C order dim %d: %lld / %lld", d,
              (long long)c.shape[d], (long long)c.strides[d]);
    cr_expect(f.shape[d] == shape[d] && f.strides[d] == fs[d], "F order dim %d: %lld / %lld", d,
              (long long)f.shape[d], (long long)f.strides[d]);
  }
  int64_t one[1] = {7};
  akx_array c1 = akx_array_c(&x, AKX_INT8, 1, one), f1 = akx_array_f(&x, AKX_INT8, 1, one);
  cr_assert(c1.strides[0] == 1 && f1.strides[0] == 1 && c1.shape[0] == 7 && f1.shape[0] == 7);
  akx_array c0 = akx_array_c(&x, AKX_INT8, 0, NULL);
  cr_assert(c0.ndim == 0 && c0.data == &x);
  int64_t s8[8] = {2, 1, 3, 1, 2, 2, 1, 3};
  akx_array c8 = akx_array_c(&x, AKX_INT8, 8, s8);
  akx_array f8 = akx_array_f(&x, AKX_INT8, 8, s8);
  int64_t acc_c = 1, acc_f = 1;
  for (int d = 7; d >= 0; d--) {
    cr_expect_eq(c8.strides[d], acc_c);
    acc_c *= s8[d];
  }
  for (int d = 0; d < 8; d++) {
    cr_expect_eq(f8.strides[d], acc_f);
    acc_f *= s8[d];
  }
}

Test(api, options_defaults) {
  akx_reduce_opts o = akx_reduce_opts_default();
  cr_assert(o.init == NULL && o.acc == AKX_DTYPE_AUTO && o.fold == 0 && o.block_size == 0 &&
            o.items_per_thread == 0 && o.target_blocks == 0);
  akx_scan_opts s = akx_scan_opts_default();
  cr_assert(s.init == NULL && s.acc == AKX_DTYPE_AUTO && s.exclusive == 0 && s.block_size == 0 &&
            s.items_per_thread == 0);
}

/* ---- contexts -------------------------------------------------------------------------------- */

Test(api, context_sim) {
  unsetenv("AKX_SIM_DEVICE");
  akx_context *ctx = NULL;
  cr_assert_eq(akx_context_create(&ctx, AKX_BACKEND_SIM, 0), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert(ctx != NULL);
  cr_assert_eq(akx_context_backend(ctx), AKX_BACKEND_SIM);
  akx_context_info_t info;
  memset(&info, 0x7F, sizeof info);
  cr_assert_eq(akx_context_info(ctx, &info), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(info.backend, AKX_BACKEND_SIM);
  cr_expect_str_eq(info.sim_profile, "h200");
  cr_expect_str_eq(info.device_name, "sim:h200");
  cr_expect_eq(info.sm_count, 132);
  cr_expect_eq(info.max_threads_per_sm, 2048);
  cr_expect_eq(info.shared_per_block, 227 * 1024, "shared_per_block %lld",
               (long long)info.shared_per_block);
  cr_expect(info.cc_major == 9 && info.cc_minor == 0, "cc %d.%d", info.cc_major, info.cc_minor);
  cr_expect(info.bandwidth_gbs > 1000 && info.bandwidth_gbs < 10000, "bandwidth %g",
            info.bandwidth_gbs);
  cr_expect(info.workspace_bytes >= 0 && info.workspace_allocations >= 0);
  cr_assert_eq(akx_synchronize(ctx), AKX_SUCCESS);
  cr_assert_eq(akx_context_set_stream(ctx, NULL), AKX_SUCCESS, "the sim accepts the NULL stream");
  int dummy;
  cr_assert_neq(akx_context_set_stream(ctx, &dummy), AKX_SUCCESS, "the sim accepts only NULL");
  cr_assert(akx_last_error()[0] != '\0');
  akx_context_destroy(ctx);
  akx_context_destroy(NULL); /* a no-op */
}

Test(api, context_sim_rtx5080_profile) {
  setenv("AKX_SIM_DEVICE", "rtx5080", 1); /* Criterion forks per test: this stays here */
  akx_context *ctx = NULL;
  cr_assert_eq(akx_context_create(&ctx, AKX_BACKEND_SIM, 0), AKX_SUCCESS, "%s", akx_last_error());
  akx_context_info_t info;
  cr_assert_eq(akx_context_info(ctx, &info), AKX_SUCCESS, "%s", akx_last_error());
  cr_expect_eq(info.sm_count, 84);
  cr_expect_eq(info.max_threads_per_sm, 1536);
  cr_expect_eq(info.shared_per_block, 99 * 1024, "shared_per_block %lld",
               (long long)info.shared_per_block);
  cr_expect_str_eq(info.sim_profile, "rtx5080");
  cr_expect(strstr(info.device_name, "rtx5080") != NULL, "device_name \"%s\"", info.device_name);
  /* and it still reduces */
  char msg[2048];
  tfx_case c = tfx_case_make(AKX_MAP_IDENTITY, AKX_OP_ADD);
  cr_assert(tfx_vector_case(ctx, AKX_FLOAT32, 100000, &c, 1, 0, msg, sizeof msg), "%s", msg);
  akx_context_destroy(ctx);
}

Test(api, context_auto) {
  unsetenv("AKX_BACKEND");
  akx_context *cuda = NULL;
  akx_status sc = akx_context_create(&cuda, AKX_BACKEND_CUDA, 0);
  akx_context_destroy(cuda);
  akx_context *ctx = NULL;
  cr_assert_eq(akx_context_create(&ctx, AKX_BACKEND_AUTO, 0), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(akx_context_backend(ctx), sc == AKX_SUCCESS ? AKX_BACKEND_CUDA : AKX_BACKEND_SIM,
               "AUTO picks CUDA when a device works, else the sim");
  akx_context_destroy(ctx);
  setenv("AKX_BACKEND", "sim", 1);
  ctx = NULL;
  cr_assert_eq(akx_context_create(&ctx, AKX_BACKEND_AUTO, 0), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(akx_context_backend(ctx), AKX_BACKEND_SIM, "AKX_BACKEND=sim");
  akx_context_destroy(ctx);
}

Test(api, context_cuda_without_gpu) {
  akx_context *ctx = NULL;
  akx_status s = akx_context_create(&ctx, AKX_BACKEND_CUDA, 0);
#ifndef AKX_TEST_HAVE_CUDA
  cr_assert_eq(s, AKX_ERROR_NO_DEVICE, "a build without CUDA: %s", akx_status_string(s));
#endif
  if (s == AKX_SUCCESS) { /* a GPU is here */
    cr_assert(ctx != NULL);
    cr_assert_eq(akx_context_backend(ctx), AKX_BACKEND_CUDA);
    akx_context_info_t info;
    cr_assert_eq(akx_context_info(ctx, &info), AKX_SUCCESS);
    cr_assert(info.sm_count > 0 && info.backend == AKX_BACKEND_CUDA);
    cr_assert_str_eq(info.sim_profile, "");
    akx_context_destroy(ctx);
    return;
  }
  cr_assert_eq(s, AKX_ERROR_NO_DEVICE, "CUDA without a usable device: %s, expected NO_DEVICE",
               akx_status_string(s));
  cr_assert(ctx == NULL, "no context on failure");
  cr_assert(akx_last_error()[0] != '\0', "a sentence says why");
  /* a device ordinal that cannot exist */
  s = akx_context_create(&ctx, AKX_BACKEND_CUDA, 4096);
  cr_assert(s == AKX_ERROR_NO_DEVICE || s == AKX_ERROR_INVALID_ARGUMENT, "%s",
            akx_status_string(s));
}

Test(api, context_bad_arguments) {
  cr_assert_eq(akx_context_create(NULL, AKX_BACKEND_SIM, 0), AKX_ERROR_INVALID_ARGUMENT);
  cr_assert(akx_last_error()[0] != '\0');
  akx_context *ctx = NULL;
  cr_assert_eq(akx_context_create(&ctx, (akx_backend)7, 0), AKX_ERROR_INVALID_ARGUMENT);
  cr_assert(ctx == NULL);
  cr_assert(strstr(akx_last_error(), "backend") != NULL, "\"%s\"", akx_last_error());
  cr_assert_eq(akx_context_info(NULL, NULL), AKX_ERROR_INVALID_ARGUMENT);
  ctx = tfx_open();
  cr_assert_eq(akx_context_info(ctx, NULL), AKX_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(akx_synchronize(NULL), AKX_ERROR_INVALID_ARGUMENT);
  tfx_close(ctx);
}

/* ---- memory ---------------------------------------------------------------------------------- */

Test(api, memory_round_trip) {
  akx_context *ctx = tfx_open();
  for (size_t n = 1; n <= (size_t)1 << 22; n = n * 7 + 3) {
    unsigned char *a = tfx_xmalloc(n), *b = tfx_xmalloc(n);
    for (size_t i = 0; i < n; i++) a[i] = (unsigned char)(ref_rand(1, i) >> 56);
    memset(b, 0, n);
    void *d1 = tfx_alloc(ctx, n), *d2 = tfx_alloc(ctx, n);
    cr_assert_eq(akx_memcpy(ctx, d1, a, n, AKX_COPY_HOST_TO_DEVICE), AKX_SUCCESS, "%s",
                 akx_last_error());
    cr_assert_eq(akx_memcpy(ctx, d2, d1, n, AKX_COPY_DEVICE_TO_DEVICE), AKX_SUCCESS, "%s",
                 akx_last_error());
    cr_assert_eq(akx_memcpy(ctx, b, d2, n, AKX_COPY_DEVICE_TO_HOST), AKX_SUCCESS, "%s",
                 akx_last_error());
    cr_assert(memcmp(a, b, n) == 0, "%zu bytes did not survive H2D, D2D, D2H", n);
    cr_assert_eq(akx_free(ctx, d1), AKX_SUCCESS, "%s", akx_last_error());
    cr_assert_eq(akx_free(ctx, d2), AKX_SUCCESS, "%s", akx_last_error());
    free(a);
    free(b);
  }
  void *p = NULL;
  cr_assert_eq(akx_malloc(NULL, &p, 16), AKX_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(akx_malloc(ctx, NULL, 16), AKX_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(akx_memcpy(NULL, &p, &p, 1, AKX_COPY_HOST_TO_DEVICE), AKX_ERROR_INVALID_ARGUMENT);
  tfx_close(ctx);
}

/* ---- scans and findall through the API (values: tests/test_scan*.c, test_findall.c) ------- */

Test(api, scan_and_findall) {
  akx_context *ctx = tfx_open();
  const float h[5] = {1, 0, 2, 0, 3};
  float *d = tfx_upload(ctx, h, sizeof h);
  int64_t *idx = tfx_alloc(ctx, 8 * 8);
  akx_array v = akx_vector(d, AKX_FLOAT32, 5), iv = akx_vector(idx, AKX_INT64, 8);
  int64_t count = -7;
  cr_assert_eq(akx_findall(ctx, &v, &iv, &count), AKX_SUCCESS, "%s", akx_last_error());
  cr_assert_eq(count, 3);
  int64_t got[3];
  tfx_to_host(ctx, got, idx, sizeof got);
  cr_assert(got[0] == 0 && got[1] == 2 && got[2] == 4);
  akx_scan_opts so = akx_scan_opts_default();
  so.exclusive = 1;
  cr_assert_eq(akx_scan(ctx, &v, &v, AKX_OP_ADD, AKX_DIM_ALL, &so), AKX_SUCCESS, "%s", akx_last_error());
  float out[5];
  tfx_to_host(ctx, out, d, sizeof out);
  cr_assert(out[0] == 0 && out[1] == 1 && out[2] == 1 && out[3] == 3 && out[4] == 3);
  cr_assert_eq(akx_scan(NULL, &v, &v, AKX_OP_ADD, 0, NULL), AKX_ERROR_INVALID_ARGUMENT,
               "the context is validated first");
  cr_assert_eq(akx_findall(NULL, &v, &iv, &count), AKX_ERROR_INVALID_ARGUMENT);
  tfx_free(ctx, idx);
  tfx_free(ctx, d);
  tfx_close(ctx);
}

/* ---- akx_last_error ------------------------------------------------------------------------ */

static void *other_thread(void *arg) {
  (void)arg;
  char *seen = malloc(512);
  /* a fresh thread has no error yet, whatever the main thread did */
  snprintf(seen, 512, "%s", akx_last_error());
  akx_context *ctx = NULL;
  (void)akx_context_create(&ctx, (akx_backend)99, 0); /* an error in this thread only */
  return seen;
}

Test(api, last_error_thread_local_errno_like) {
  akx_context *ctx = tfx_open();
  float *d = tfx_alloc(ctx, 16);
  akx_array v = akx_vector(d, AKX_FLOAT32, 4);
  double r = 0;
  cr_assert_eq(akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, (akx_op)42, NULL, &r, AKX_HOST),
               AKX_ERROR_INVALID_ARGUMENT);
  char mine[512];
  snprintf(mine, sizeof mine, "%s", akx_last_error());
  cr_assert(mine[0] != '\0');
  pthread_t th;
  cr_assert_eq(pthread_create(&th, NULL, other_thread, NULL), 0);
  void *seen = NULL;
  pthread_join(th, &seen);
  cr_assert_str_eq((char *)seen, "", "another thread sees \"%s\"", (char *)seen);
  free(seen);
  cr_assert_str_eq(akx_last_error(), mine, "this thread's error changed to \"%s\"",
                   akx_last_error());
  float r32 = 0;
  cr_assert_eq(akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &r32, AKX_HOST),
               AKX_SUCCESS, "%s", akx_last_error());
  /* errno semantics: a success leaves the last failure's sentence as it was */
  cr_assert_str_eq(akx_last_error(), mine, "a success changed the sentence to \"%s\"",
                   akx_last_error());
  tfx_free(ctx, d);
  tfx_close(ctx);
}
