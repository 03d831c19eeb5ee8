/* akx_findall_all: each rank runs akx_findall on its shard (local memory-order positions), the
 * counts are allgathered, and each rank rewrites its positions as global ones: the local index
 * of each position, moved along split_dim by the extents of the ranks before it, numbered over
 * the global shape in the reference rank's memory order. Monotone, so the positions stay
 * sorted. The rewrite runs on the host over the rank's own positions (akx_findall has brought
 * its count there already). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

typedef struct {
  int64_t count, capacity;
  int32_t status, pad;
} outcome;

akx_status akx_findall_all(akx_comm *comm, const akx_array *src, int32_t split_dim,
                           const akx_array *indices, int64_t *count, int64_t *total) {
  if (!comm) return akx__dist_fail(AKX_ERROR_INVALID_ARGUMENT, "akx_findall_all: comm is NULL");
  akx_context *ctx = comm->ctx;
  akx__dist_record me;
  akx__dist_begin(&me, AKX__DIST_FINDALL, NULL, src, split_dim, AKX_MAP_NONZERO, AKX_OP_ADD,
                  AKX_DIM_ALL, 1, 0);
  if (me.status == AKX_SUCCESS) {
    akx_dtype counted;
    const akx_status s = akx_mapreduce_result_dtype(src, AKX_MAP_NONZERO, AKX_OP_ADD, NULL, &counted);
    if (s != AKX_SUCCESS) akx__dist_record_fail(&me, s, NULL);
    if (!indices) akx__dist_record_fail(&me, AKX_ERROR_INVALID_ARGUMENT, "indices is NULL");
    else if (indices->dtype != AKX_INT64 || indices->ndim != 1 || indices->shape[0] < 0 ||
             (indices->shape[0] > 1 && indices->strides[0] != 1))
      akx__dist_record_fail(&me, AKX_ERROR_INVALID_ARGUMENT, "indices is %s, %d-d, shape[0] %lld, "
                            "strides[0] %lld: expected a 1-d int64 array with stride 1",
                            akx_dtype_name(indices->dtype), (int)indices->ndim,
                            (long long)indices->shape[0], (long long)indices->strides[0]);
    else if (indices->data == NULL && indices->shape[0] > 0)
      akx__dist_record_fail(&me, AKX_ERROR_INVALID_ARGUMENT, "indices->data is NULL");
    if (!count) akx__dist_record_fail(&me, AKX_ERROR_INVALID_ARGUMENT, "count is NULL");
    if (!total) akx__dist_record_fail(&me, AKX_ERROR_INVALID_ARGUMENT, "total is NULL");
  }
  if (me.status == AKX_SUCCESS) {
    akx__dist_memory_order(src, me.order);
    me.capacity = indices->shape[0];
  }
  const akx__dist_record *all;
  AKX_DIST_TRY(akx__dist_agree(comm, &me, &all));

  /* The map from local to global positions, from the records (before the exchange below
   * reuses the staging). */
  const int ref = akx__dist_findall_ref(all, comm->size);
  int64_t before = 0, global_split = 0; /* elements (AKX_DIM_ALL) or extent along split_dim */
  for (int q = 0; q < comm->size; ++q) {
    const int64_t e = split_dim == AKX_DIM_ALL ? all[q].src_count : all[q].src_shape[split_dim];
    if (q < comm->rank) before += e;
    global_split += e;
  }
  int32_t global_order[AKX_MAX_DIMS];
  if (ref >= 0) memcpy(global_order, all[ref].order, sizeof global_order);

  int64_t mine = 0;
  akx_status local = akx_findall(ctx, src, indices, &mine);
  outcome out = {mine, indices->shape[0], (int32_t)local, 0}, *outs;
  if (local != AKX_SUCCESS && local != AKX_ERROR_OUTPUT_TOO_SMALL) {
    out.count = 0;
  }
  AKX_DIST_TRY(akx__dist_host(comm, sizeof out * (size_t)comm->size, (void **)&outs));
  const double t0 = akx__dist_now();
  const akx_status ex = comm->engine->allgather_host(comm, &out, outs, sizeof out);
  comm->counters.exchange_seconds += akx__dist_now() - t0;
  AKX_DIST_TRY(ex);
  int64_t sum = 0;
  int worst = -1;
  for (int q = 0; q < comm->size; ++q) {
    sum += outs[q].count;
    if (outs[q].status != AKX_SUCCESS && (worst < 0 || (outs[worst].status == AKX_ERROR_OUTPUT_TOO_SMALL &&
                                                        outs[q].status != AKX_ERROR_OUTPUT_TOO_SMALL)))
      worst = q;
  }
  if (worst >= 0 && outs[worst].status != AKX_ERROR_OUTPUT_TOO_SMALL) {
    /* A device failure somewhere: the positions are not to be trusted anywhere. */
    return akx__dist_fail((akx_status)outs[worst].status, "akx_findall_all: rank %d: akx_findall "
                          "failed (%s)%s%s", worst, akx_status_string((akx_status)outs[worst].status),
                          worst == comm->rank ? ": " : "", worst == comm->rank ? akx_last_error() : "");
  }
  const akx_status verdict = worst < 0 ? AKX_SUCCESS : AKX_ERROR_OUTPUT_TOO_SMALL;
  char sentence[256] = "";
  if (worst >= 0)
    snprintf(sentence, sizeof sentence, "akx_findall_all: rank %d: %lld positions, indices holds "
             "%lld (every rank stored at most its capacity)", worst,
             (long long)outs[worst].count, (long long)outs[worst].capacity);

  /* Rewrite this rank's positions. */
  const int64_t written = mine < indices->shape[0] ? mine : indices->shape[0];
  const int64_t n_split = split_dim == AKX_DIM_ALL ? me.src_count : src->shape[split_dim];
  if (written > 0 && (before != 0 || global_split != n_split)) {
    int64_t *pos;
    AKX_DIST_TRY(akx__dist_host(comm, (size_t)written * sizeof *pos, (void **)&pos));
    AKX_DIST_TRY(akx_memcpy(ctx, pos, indices->data, (size_t)written * sizeof *pos,
                            AKX_COPY_DEVICE_TO_HOST));
    if (split_dim == AKX_DIM_ALL) {
      for (int64_t k = 0; k < written; ++k) pos[k] += before;
    } else {
      int64_t gshape[AKX_MAX_DIMS];
      for (int32_t d = 0; d < src->ndim; ++d) gshape[d] = d == split_dim ? global_split : src->shape[d];
      for (int64_t k = 0; k < written; ++k) {
        int64_t idx[AKX_MAX_DIMS], p = pos[k];
        for (int32_t j = src->ndim - 1; j >= 0; --j) {
          const int32_t d = me.order[j];
          idx[d] = p % src->shape[d];
          p /= src->shape[d];
        }
        idx[split_dim] += before;
        int64_t g = 0;
        for (int32_t j = 0; j < src->ndim; ++j) g = g * gshape[global_order[j]] + idx[global_order[j]];
        pos[k] = g;
      }
    }
    AKX_DIST_TRY(akx_memcpy(ctx, indices->data, pos, (size_t)written * sizeof *pos,
                            AKX_COPY_HOST_TO_DEVICE));
  }
  *count = mine;
  *total = sum;
  return verdict == AKX_SUCCESS ? AKX_SUCCESS : akx_set_last_error(verdict, sentence);
}
