/* A program that uses an *installed* libakx (tests/test_install.sh builds it with CMake's
 * find_package and with pkg-config, shared and static): the version from the header and from
 * the library, a sum on the context's backend, a DLPack descriptor, a refused call. It prints
 * one line the test compares; exit status 0 only when every step worked. */
#include <stdio.h>
#include <string.h>
#include <akx.h>
#include <akx_dlpack.h>

#define N 1000

static int report(const char *what, akx_status s) {
  fprintf(stderr, "consumer: %s: %s: %s\n", what, akx_status_string(s), akx_last_error());
  return 1;
}

int main(void) {
  char header[32];
  snprintf(header, sizeof header, "%d.%d.%d", AKX_VERSION_MAJOR, AKX_VERSION_MINOR,
           AKX_VERSION_PATCH);
  if (strcmp(header, akx_version()) != 0) {
    fprintf(stderr, "consumer: header %s, library %s\n", header, akx_version());
    return 1;
  }

  static float host[N];
  for (int i = 0; i < N; ++i) host[i] = (float)(i % 7) - 3.0f; /* sum: -3 */
  akx_context *ctx;
  akx_status s = akx_context_create(&ctx, AKX_BACKEND_AUTO, 0);
  if (s != AKX_SUCCESS) return report("akx_context_create", s);
  float *x;
  if ((s = akx_malloc(ctx, (void **)&x, sizeof host)) != AKX_SUCCESS)
    return report("akx_malloc", s);
  if ((s = akx_memcpy(ctx, x, host, sizeof host, AKX_COPY_HOST_TO_DEVICE)) != AKX_SUCCESS)
    return report("akx_memcpy", s);

  /* The same memory as a DLPack tensor: 1000 float32, every other one from the second. */
  int64_t shape[1] = {N / 2}, strides[1] = {2};
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = x;
  t.device.device_type = akx_context_backend(ctx) == AKX_BACKEND_SIM ? kDLCPU : kDLCUDA;
  t.ndim = 1;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  t.strides = strides;
  t.byte_offset = sizeof(float);
  akx_array xs = akx_vector(x, AKX_FLOAT32, N), odd;
  if ((s = akx_array_from_dlpack(&t, &odd)) != AKX_SUCCESS) return report("akx_array_from_dlpack", s);

  float sum = 0, sum_odd = 0;
  if ((s = akx_mapreduce(ctx, &xs, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &sum, AKX_HOST)) !=
          AKX_SUCCESS ||
      (s = akx_mapreduce(ctx, &odd, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &sum_odd, AKX_HOST)) !=
          AKX_SUCCESS)
    return report("akx_mapreduce", s);
  float want_odd = 0;
  for (int i = 1; i < N; i += 2) want_odd += host[i];
  if (sum_odd != want_odd) {
    fprintf(stderr, "consumer: DLPack view sum %g, expected %g\n", sum_odd, want_odd);
    return 1;
  }
  s = akx_mapreduce(ctx, &xs, AKX_MAP_IDENTITY, AKX_OP_XOR, NULL, &sum, AKX_HOST);
  if (s != AKX_ERROR_UNSUPPORTED) return report("XOR of float32 was not refused", s);

  printf("akx %s: sum %g, dlpack view sum %g, xor of float32 %s\n", akx_version(), sum,
         sum_odd + 0.0f /* never -0 */, akx_status_string(s));
  akx_free(ctx, x);
  akx_context_destroy(ctx);
  return 0;
}
