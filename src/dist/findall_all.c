/* akx_findall_all: each rank runs akx_findall_piece on its shard, which stores its positions as
 * the global array's on the device (akx__dist_positions: in the reference rank's memory order,
 * the ranks before it along split_dim), then the counts are allgathered. The move is monotone,
 * so the positions stay sorted, and they never leave the device. */
#include <stdio.h>
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
    akx_array_memory_order(src, me.order);
    me.capacity = indices->shape[0];
  }
  const akx__dist_record *all;
  AKX_DIST_TRY(akx__dist_agree(comm, &me, &all));

  /* The positions' move, from the records (before the exchange below reuses the staging). */
  akx_findall_piece_t at;
  akx__dist_positions(comm, all, split_dim, 0, &at.position_base, &at.position_block, &at.position_skip);
  int64_t mine = 0;
  akx_status local = akx_findall_piece(ctx, src, indices, &mine, &at);
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

  *count = mine;
  *total = sum;
  return verdict == AKX_SUCCESS ? AKX_SUCCESS : akx_set_last_error(verdict, sentence);
}
