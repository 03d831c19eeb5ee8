/* The NCCL engine: ncclAllGather of bytes on device buffers, enqueued on the context's stream
 * (akx_context_run hands it over). The agreement record goes the same way through a small
 * device buffer and is waited for: the host decides from it. Built when CMake finds NCCL and
 * the CUDA toolkit. */
#include <cuda_runtime.h>
#include <nccl.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

typedef struct {
  ncclComm_t nccl;
  const void *send;
  void *recv;
  size_t bytes;
} gather_args;

static akx_status gather_on_stream(void *stream, void *workspace, void *arg) {
  (void)workspace;
  gather_args *g = arg;
  const ncclResult_t r = ncclAllGather(g->send, g->recv, g->bytes, ncclUint8, g->nccl,
                                       (cudaStream_t)stream);
  if (r != ncclSuccess)
    return akx__dist_fail(AKX_ERROR_DEVICE, "libakx_dist: ncclAllGather failed: %s",
                          ncclGetErrorString(r));
  return AKX_SUCCESS;
}

static akx_status nccl_allgather(akx_comm *c, const void *send, void *recv, size_t bytes) {
  gather_args g = {(ncclComm_t)c->handle, send, recv, bytes};
  akx_status s = akx_context_run(c->ctx, 0, gather_on_stream, &g);
  if (s != AKX_SUCCESS) return s;
  c->counters.exchanges++;
  c->counters.bytes_sent += bytes;
  c->counters.bytes_received += bytes * (uint64_t)(c->size - 1);
  return AKX_SUCCESS;
}

/* The record: host -> device (after the partials' slots), gather, device -> host. */
static akx_status nccl_allgather_host(akx_comm *c, const void *send, void *recv, size_t bytes) {
  akx_status s = akx__dist_grow(c, &c->temp, bytes * (size_t)(c->size + 1));
  if (s != AKX_SUCCESS) return s;
  unsigned char *dsend = c->temp.ptr, *drecv = dsend + bytes;
  if ((s = akx_memcpy(c->ctx, dsend, send, bytes, AKX_COPY_HOST_TO_DEVICE)) != AKX_SUCCESS ||
      (s = nccl_allgather(c, dsend, drecv, bytes)) != AKX_SUCCESS)
    return s;
  return akx_memcpy(c->ctx, recv, drecv, bytes * (size_t)c->size, AKX_COPY_DEVICE_TO_HOST);
}

static void nccl_destroy(akx_comm *c) { akx__dist_nccl_release(c); }

static const akx__dist_engine nccl_engine = {"nccl", 1, nccl_allgather_host, nccl_allgather, nccl_destroy};

/* The context's device: current while akx_context_run runs fn. */
static akx_status current_device(void *stream, void *workspace, void *arg) {
  (void)stream, (void)workspace;
  const cudaError_t e = cudaGetDevice((int *)arg);
  if (e != cudaSuccess)
    return akx__dist_fail(AKX_ERROR_DEVICE, "akx_comm_create_nccl: cudaGetDevice failed: %s", cudaGetErrorString(e));
  return AKX_SUCCESS;
}

akx_status akx_comm_create_nccl(akx_context *ctx, void *nccl_comm, akx_comm **comm) {
  if (!ctx) return akx__dist_fail(AKX_ERROR_INVALID_ARGUMENT, "akx_comm_create_nccl: ctx is NULL");
  if (!nccl_comm)
    return akx__dist_fail(AKX_ERROR_INVALID_ARGUMENT, "akx_comm_create_nccl: nccl_comm is NULL");
  if (!comm) return akx__dist_fail(AKX_ERROR_INVALID_ARGUMENT, "akx_comm_create_nccl: comm is NULL");
  if (akx_context_backend(ctx) != AKX_BACKEND_CUDA)
    return akx__dist_fail(AKX_ERROR_UNSUPPORTED, "akx_comm_create_nccl: ctx is a sim context; NCCL "
                          "moves device memory of a CUDA context (use akx_comm_create_mpi on the sim)");
  ncclComm_t nc = (ncclComm_t)nccl_comm;
  int rank = 0, size = 0;
  ncclResult_t r = ncclCommUserRank(nc, &rank);
  if (r == ncclSuccess) r = ncclCommCount(nc, &size);
  int comm_device = -1;
  if (r == ncclSuccess) r = ncclCommCuDevice(nc, &comm_device);
  if (r != ncclSuccess)
    return akx__dist_fail(AKX_ERROR_DEVICE, "akx_comm_create_nccl: %s", ncclGetErrorString(r));
  char why[640];
  const akx_status s = akx__dist_nccl_context_check(ctx, comm_device, current_device, why, sizeof why);
  if (s != AKX_SUCCESS) return why[0] ? akx__dist_fail(s, "akx_comm_create_nccl: %s", why) : s;
  akx_comm *c = NULL;
  AKX_DIST_TRY(akx__dist_comm_new(ctx, &nccl_engine, nc, rank, size, &c));
  /* The calling thread drives this rank: refused when it already holds another of the clique. */
  const akx_status claimed = akx__dist_nccl_claim(c, size, rank, comm_device, why, sizeof why);
  if (claimed != AKX_SUCCESS) {
    akx_comm_destroy(c);
    return akx__dist_fail(claimed, "akx_comm_create_nccl: %s", why);
  }
  *comm = c;
  return AKX_SUCCESS;
}
