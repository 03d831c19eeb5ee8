/* akx_comm_create_nccl's device check and its (thread, clique) table (the contracts are in
 * internal.h). A file of its own, with no NCCL or CUDA in it, so that the decisions and the
 * device check's call site (which device each side is taken from) are compiled and tested
 * (tests/dist/test_dist_nccl_device.c) in every build of libakx_dist. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include "internal.h"

akx_status akx__dist_nccl_device_check(int comm_device, int ctx_device, const char *ctx_name, char *why,
                                       size_t cap) {
  if (why && cap) why[0] = '\0';
  if (comm_device == ctx_device) return AKX_SUCCESS;
  if (why && cap) {
    const int named = ctx_name && ctx_name[0];
    snprintf(why, cap,
             "nccl_comm is on CUDA device %d, but ctx is on CUDA device %d%s%s%s; a rank's context must "
             "be on its communicator's device (each rank in its own thread or process, with its own "
             "context)",
             comm_device, ctx_device, named ? " (" : "", named ? ctx_name : "", named ? ")" : "");
  }
  return AKX_ERROR_INVALID_ARGUMENT;
}

/* ---- one thread, one rank of a clique ------------------------------------------------------- */

akx_status akx__dist_nccl_thread_check(const akx__dist_nccl_rank *held, int n, const akx__dist_nccl_rank *mine,
                                       char *why, size_t cap) {
  if (why && cap) why[0] = '\0';
  for (int i = 0; i < n; i++) {
    const akx__dist_nccl_rank *h = &held[i];
    /* NCCL refuses two ranks of one communicator on one device ("Duplicate GPU detected"), so
     * a communicator of the same size on one device is another clique (a sub-communicator of
     * this thread's rank); on another device with another rank, it is taken for a second rank
     * of the same clique: NCCL gives no clique's identity to compare. */
    if (h->thread != mine->thread || h->size != mine->size || h->rank == mine->rank || h->device == mine->device)
      continue;
    if (why && cap)
      snprintf(why, cap,
               "nccl_comm is rank %d of %d on CUDA device %d, and this thread already holds rank %d of %d on "
               "CUDA device %d (taken for two ranks of one clique); one thread driving two ranks deadlocks "
               "in its first call, which waits on the host for the other rank's agreement record that the "
               "same thread would send next: create each rank's akx_comm in the thread (or process) that "
               "drives it, one rank per thread",
               mine->rank, mine->size, mine->device, h->rank, h->size, h->device);
    return AKX_ERROR_INVALID_ARGUMENT;
  }
  return AKX_SUCCESS;
}

uint64_t akx__dist_thread_id(void) {
  static atomic_uint_fast64_t next = 1;
  static _Thread_local uint64_t id;
  if (id == 0) id = atomic_fetch_add(&next, 1);
  return id;
}

/* The process's table: every NCCL akx_comm alive, with the thread that created it. */
static pthread_mutex_t ranks_lock = PTHREAD_MUTEX_INITIALIZER;
static akx__dist_nccl_rank *ranks;
static int n_ranks, ranks_cap;

akx_status akx__dist_nccl_claim(const void *owner, int size, int rank, int device, char *why, size_t cap) {
  const akx__dist_nccl_rank mine = {akx__dist_thread_id(), owner, size, rank, device};
  pthread_mutex_lock(&ranks_lock);
  akx_status s = akx__dist_nccl_thread_check(ranks, n_ranks, &mine, why, cap);
  if (s == AKX_SUCCESS && n_ranks == ranks_cap) {
    const int grown = ranks_cap ? 2 * ranks_cap : 8;
    akx__dist_nccl_rank *r = realloc(ranks, (size_t)grown * sizeof *r);
    if (r) {
      ranks = r;
      ranks_cap = grown;
    } else {
      s = AKX_ERROR_OUT_OF_MEMORY;
      if (why && cap) snprintf(why, cap, "no memory for the table of this process's NCCL ranks");
    }
  }
  if (s == AKX_SUCCESS) ranks[n_ranks++] = mine;
  pthread_mutex_unlock(&ranks_lock);
  return s;
}

void akx__dist_nccl_release(const void *owner) {
  pthread_mutex_lock(&ranks_lock);
  for (int i = 0; i < n_ranks; i++)
    if (ranks[i].owner == owner) {
      ranks[i] = ranks[--n_ranks];
      break;
    }
  pthread_mutex_unlock(&ranks_lock);
}

akx_status akx__dist_nccl_context_check(akx_context *ctx, int comm_device,
                                        akx_status (*current_device)(void *, void *, void *), char *why,
                                        size_t cap) {
  if (why && cap) why[0] = '\0';
  int ctx_device = -1;
  /* The context's device is the one current inside its akx_context_run. */
  const akx_status s = akx_context_run(ctx, 0, current_device, &ctx_device);
  if (s != AKX_SUCCESS) return s;
  akx_context_info_t info;
  if (akx_context_info(ctx, &info) != AKX_SUCCESS) info.device_name[0] = '\0';
  return akx__dist_nccl_device_check(comm_device, ctx_device, info.device_name, why, cap);
}
