/* libakx_dist over NCCL on one rank: a communicator from ncclCommInitAll over device 0, then
 * akx_mapreduce_all (host and device results), akx_reduce_dims_all along the split dim (ADD,
 * and ARGMAX: the pieces' path, its partials gathered by NCCL and folded by the run-time pieces
 * kernel), akx_scan_all and akx_findall_all, each against a host reference. The exchange of
 * partials stays on the stream: a call into device memory makes no akx_memcpy or
 * akx_synchronize beyond the agreement record's two copies (counted by this program's own
 * akx_memcpy and akx_synchronize, which stand in for libakx's). With two devices or more, a
 * communicator on device 1 is refused for a context on device 0, and the pair's second rank
 * created on the thread that holds its first is refused. Exits 77 (ctest: skipped)
 * where there is no CUDA device: CI compiles and links it, bench/gpu_check.sh's ctest runs it
 * on a GPU. */
#define _GNU_SOURCE /* dlsym's RTLD_NEXT */
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "akx.h"
#include "akx_dist.h"

/* These definitions stand in for libakx's: the dynamic linker binds libakx_dist.so's calls to
 * the executable's, which count them and pass them on (dlsym RTLD_NEXT: libakx.so's). */
static long copies[3], synchronizes;
akx_status akx_memcpy(akx_context *c, void *dst, const void *src, size_t bytes, akx_copy_kind k) {
  static akx_status (*real)(akx_context *, void *, const void *, size_t, akx_copy_kind);
  if (!real) *(void **)&real = dlsym(RTLD_NEXT, "akx_memcpy");
  if ((unsigned)k < 3) ++copies[k];
  return real(c, dst, src, bytes, k);
}
akx_status akx_synchronize(akx_context *c) {
  static akx_status (*real)(akx_context *);
  if (!real) *(void **)&real = dlsym(RTLD_NEXT, "akx_synchronize");
  ++synchronizes;
  return real(c);
}

static int failures;
#define CHECK(cond, ...)                                     \
  do {                                                       \
    if (!(cond)) {                                           \
      ++failures;                                            \
      fprintf(stderr, "line %d: ", __LINE__);                \
      fprintf(stderr, __VA_ARGS__);                          \
      fprintf(stderr, " (%s)\n", akx_last_error());          \
    }                                                        \
  } while (0)

int main(void) {
  akx_context *ctx = NULL;
  if (akx_context_create(&ctx, AKX_BACKEND_CUDA, 0) != AKX_SUCCESS) {
    printf("no CUDA device (%s): skipped\n", akx_last_error());
    return 77;
  }
  ncclComm_t nc;
  int dev = 0;
  if (ncclCommInitAll(&nc, 1, &dev) != ncclSuccess) {
    fprintf(stderr, "ncclCommInitAll failed\n");
    return 1;
  }
  akx_comm *comm = NULL;
  akx_status s = akx_comm_create_nccl(ctx, nc, &comm);
  CHECK(s == AKX_SUCCESS, "akx_comm_create_nccl: %s", akx_status_string(s));
  if (s != AKX_SUCCESS) return 1;

  enum { R = 37, C = 5, N = R * C };
  int64_t host[N], want_cols[C] = {0}, want_sum = 0, back[N], *x = NULL, *y = NULL, *r = NULL;
  for (int i = 0; i < N; ++i) {
    host[i] = i % 11 - 5;
    want_sum += host[i];
    want_cols[i % C] += host[i];
  }
  akx_malloc(ctx, (void **)&x, sizeof host);
  akx_malloc(ctx, (void **)&y, sizeof host);
  akx_malloc(ctx, (void **)&r, sizeof host);
  akx_memcpy(ctx, x, host, sizeof host, AKX_COPY_HOST_TO_DEVICE);
  const int64_t shape[2] = {R, C}, one[2] = {1, C};
  akx_array a = akx_array_c(x, AKX_INT64, 2, shape);

  int64_t sum = 0;
  s = akx_mapreduce_all(comm, &a, 0, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &sum, AKX_HOST);
  CHECK(s == AKX_SUCCESS && sum == want_sum, "mapreduce_all host: %lld, want %lld", (long long)sum,
        (long long)want_sum);
  s = akx_mapreduce_all(comm, &a, 0, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, r, AKX_DEVICE);
  akx_memcpy(ctx, &sum, r, sizeof sum, AKX_COPY_DEVICE_TO_HOST);
  CHECK(s == AKX_SUCCESS && sum == want_sum, "mapreduce_all device: %lld", (long long)sum);

  akx_array d = akx_array_c(r, AKX_INT64, 2, one);
  s = akx_reduce_dims_all(comm, &d, &a, 0, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL);
  akx_memcpy(ctx, back, r, C * sizeof *back, AKX_COPY_DEVICE_TO_HOST);
  for (int j = 0; j < C; ++j)
    CHECK(s == AKX_SUCCESS && back[j] == want_cols[j], "reduce_dims_all column %d: %lld", j,
          (long long)back[j]);

  /* ARGMAX down each column: the first row of the column's largest value. */
  s = akx_reduce_dims_all(comm, &d, &a, 0, AKX_MAP_IDENTITY, AKX_OP_ARGMAX, NULL);
  akx_memcpy(ctx, back, r, C * sizeof *back, AKX_COPY_DEVICE_TO_HOST);
  for (int j = 0; j < C; ++j) {
    int64_t at = 0;
    for (int i = 1; i < R; ++i)
      if (host[i * C + j] > host[at * C + j]) at = i;
    CHECK(s == AKX_SUCCESS && back[j] == at, "reduce_dims_all ARGMAX column %d: %lld, want %lld", j,
          (long long)back[j], (long long)at);
  }

  /* The same ARGMAX again, counting: the record's copy to the device and back (the call's one
   * wait), nothing for the partials (ncclAllGather straight from the piece's partial). */
  memset(copies, 0, sizeof copies);
  synchronizes = 0;
  s = akx_reduce_dims_all(comm, &d, &a, 0, AKX_MAP_IDENTITY, AKX_OP_ARGMAX, NULL);
  CHECK(s == AKX_SUCCESS && copies[AKX_COPY_DEVICE_TO_DEVICE] == 0 && synchronizes == 0 &&
            copies[AKX_COPY_HOST_TO_DEVICE] == 1 && copies[AKX_COPY_DEVICE_TO_HOST] == 1,
        "reduce_dims_all ARGMAX: %ld copies to the device, %ld to the host, %ld device-to-device, %ld "
        "synchronizes; want 1, 1, 0, 0",
        copies[AKX_COPY_HOST_TO_DEVICE], copies[AKX_COPY_DEVICE_TO_HOST], copies[AKX_COPY_DEVICE_TO_DEVICE],
        synchronizes);

  /* findall: the positions of the nonzero elements, C order. */
  akx_array ind = akx_vector(y, AKX_INT64, N);
  int64_t count = -1, total = -1, nz = 0;
  s = akx_findall_all(comm, &a, 0, &ind, &count, &total);
  akx_memcpy(ctx, back, y, sizeof back, AKX_COPY_DEVICE_TO_HOST);
  for (int i = 0; i < N; ++i)
    if (host[i] != 0) {
      CHECK(s == AKX_SUCCESS && nz < count && back[nz] == i, "findall_all position %lld: %lld, want %d",
            (long long)nz, (long long)back[nz], i);
      ++nz;
    }
  CHECK(s == AKX_SUCCESS && count == nz && total == nz, "findall_all: count %lld, total %lld, want %lld",
        (long long)count, (long long)total, (long long)nz);

  akx_array out = akx_array_c(y, AKX_INT64, 2, shape);
  s = akx_scan_all(comm, &out, &a, 0, AKX_OP_ADD, 0, NULL);
  akx_memcpy(ctx, back, y, sizeof back, AKX_COPY_DEVICE_TO_HOST);
  int64_t run[C] = {0};
  for (int i = 0; i < N; ++i) {
    run[i % C] += host[i];
    if (back[i] != run[i % C]) {
      CHECK(0, "scan_all element %d: %lld, want %lld", i, (long long)back[i], (long long)run[i % C]);
      break;
    }
  }
  CHECK(s == AKX_SUCCESS, "scan_all: %s", akx_status_string(s));

  akx_comm_destroy(comm);
  ncclCommDestroy(nc);

  /* A communicator on device 1 for a context on device 0: refused, both named. */
  int devices = 0;
  if (cudaGetDeviceCount(&devices) == cudaSuccess && devices >= 2) {
    ncclComm_t pair[2];
    int both[2] = {0, 1};
    if (ncclCommInitAll(pair, 2, both) == ncclSuccess) {
      akx_comm *wrong = NULL;
      s = akx_comm_create_nccl(ctx, pair[1], &wrong);
      CHECK(s == AKX_ERROR_INVALID_ARGUMENT && wrong == NULL &&
                strstr(akx_last_error(), "CUDA device 1") && strstr(akx_last_error(), "CUDA device 0"),
            "akx_comm_create_nccl with the communicator of device 1: %s", akx_status_string(s));
      /* Both ranks of the clique created on this thread, each with a context on its device: the
       * second is refused (one thread driving both would deadlock in its first call). */
      akx_context *ctx1 = NULL;
      akx_comm *first = NULL, *second = NULL;
      if (akx_context_create(&ctx1, AKX_BACKEND_CUDA, 1) == AKX_SUCCESS) {
        CHECK(akx_comm_create_nccl(ctx, pair[0], &first) == AKX_SUCCESS, "rank 0 of the pair");
        s = akx_comm_create_nccl(ctx1, pair[1], &second);
        CHECK(s == AKX_ERROR_INVALID_ARGUMENT && second == NULL &&
                  strstr(akx_last_error(), "already holds rank 0 of 2 on CUDA device 0"),
              "rank 1 of the pair on rank 0's thread: %s", akx_status_string(s));
        akx_comm_destroy(first);
        CHECK(akx_comm_create_nccl(ctx1, pair[1], &second) == AKX_SUCCESS, "rank 1 once rank 0's is destroyed");
        akx_comm_destroy(second);
        akx_context_destroy(ctx1);
      }
      ncclCommDestroy(pair[0]);
      ncclCommDestroy(pair[1]);
    }
  }
  akx_free(ctx, x);
  akx_free(ctx, y);
  akx_free(ctx, r);
  akx_context_destroy(ctx);
  printf("test_dist_nccl: %d failed checks\n", failures);
  return failures ? 1 : 0;
}
