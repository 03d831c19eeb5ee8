/* akx-bench dist: libakx_dist's four families under mpirun, one table row per (family, size,
 * rank), printed by rank 0:
 *
 *   mpirun -np P akx-bench dist [--backend auto|cuda|sim] [--quick | --large]
 *
 * Each rank holds an equal shard (the last one the remainder) of a global int64 array of N
 * elements; the rows are one call each after a warm-up call:
 *   mapreduce: sum of a vector split in memory order (AKX_DIM_ALL);
 *   dims:      sum over the split dim 0 of an N/64 x 64 C-order matrix (64 outputs per rank);
 *   scan:      inclusive cumsum of the vector (AKX_DIM_ALL);
 *   findall:   positions of the nonzero elements (about 8 in 9) of the vector;
 *   argmax:    ARGMAX of the vector (akx_mapreduce_piece: its positions are the global ones);
 *   dims-argmax: ARGMAX over the split dim 0 of the matrix into 64 int64 positions
 *              (akx_reduce_dims_piece: the ranks' partials folded by the pieces kernel);
 *   scan-user: the inclusive cumsum of the vector by a user op (akx_scan_piece on the column
 *              kernels, the ranks' totals folded in rank order: the path of non-commutative
 *              ops), beside the built-in scan's.
 * Columns: the bytes this rank sent and received through the engine (the agreement record and
 * the partials), its exchanges, the host wall time of those exchanges (staging copies
 * included), and the local part: on the sim, the model's GPU time of the call's kernels
 * (src/sim/model.c; the local reduction, the combine and the store), on CUDA the wall time of
 * the call less its exchanges. The sum, the last scan value and the total count are checked
 * against the host. The dist code is compiled into akx-bench (bench/CMakeLists.txt) over the
 * static libakx, so that one copy of libakx serves the contexts. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "akx.h"
#include "akx_dist.h"
#include "akx_sim.h"
#include "bench_dist.h"

typedef struct {
  char family[12];
  int64_t n;
  int rank;
  uint64_t sent, received, exchanges;
  double exchange_us, local_us;
  int ok;
} dist_row;

static double wall(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct {
  akx_context *ctx;
  akx_comm *comm;
  int rank, size, on_sim;
  int64_t n_global, n_local, before; /* elements; this rank's first global index */
  int64_t *dev, *out, *indices;
  akx_op sum_op; /* a user op: int64 addition */
} dist_bench;

static int64_t host_value(int64_t k) { return k % 9 == 4 ? 0 : k % 5 - 2; }

/* One family's call, run by run_case twice (warm-up, then counted). 0 on success. */
typedef int (*dist_call)(dist_bench *b, int check);

static int call_mapreduce(dist_bench *b, int check) {
  akx_array a = akx_vector(b->dev, AKX_INT64, b->n_local);
  int64_t sum = 0, want = 0;
  if (akx_mapreduce_all(b->comm, &a, AKX_DIM_ALL, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &sum, AKX_HOST))
    return 1;
  for (int64_t k = 0; check && k < b->n_global; ++k) want += host_value(k);
  return check && sum != want;
}

static int call_dims(dist_bench *b, int check) {
  const int64_t shape[2] = {b->n_local / 64, 64}, one[2] = {1, 64};
  akx_array a = akx_array_c(b->dev, AKX_INT64, 2, shape), d = akx_array_c(b->out, AKX_INT64, 2, one);
  (void)check;
  return akx_reduce_dims_all(b->comm, &d, &a, 0, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL) != AKX_SUCCESS;
}

/* The inclusive cumsum of the vector by op (ADD, or the user op's int64 addition). */
static int scan_with(dist_bench *b, int check, akx_op op) {
  akx_array a = akx_vector(b->dev, AKX_INT64, b->n_local), d = akx_vector(b->out, AKX_INT64, b->n_local);
  if (akx_scan_all(b->comm, &d, &a, AKX_DIM_ALL, op, AKX_DIM_ALL, NULL)) return 1;
  if (!check || b->n_local == 0) return 0;
  int64_t last = 0, want = 0;
  akx_memcpy(b->ctx, &last, b->out + b->n_local - 1, sizeof last, AKX_COPY_DEVICE_TO_HOST);
  for (int64_t k = 0; k < b->before + b->n_local; ++k) want += host_value(k);
  return last != want;
}

static int call_findall(dist_bench *b, int check) {
  akx_array a = akx_vector(b->dev, AKX_INT64, b->n_local), ind = akx_vector(b->indices, AKX_INT64, b->n_local);
  int64_t count = 0, total = 0, want = 0;
  if (akx_findall_all(b->comm, &a, AKX_DIM_ALL, &ind, &count, &total)) return 1;
  for (int64_t k = 0; check && k < b->n_global; ++k) want += host_value(k) != 0;
  return check && total != want;
}

static int call_argmax(dist_bench *b, int check) {
  akx_array a = akx_vector(b->dev, AKX_INT64, b->n_local);
  struct { int64_t index, value; } r = {-1, 0};
  if (akx_mapreduce_all(b->comm, &a, AKX_DIM_ALL, AKX_MAP_IDENTITY, AKX_OP_ARGMAX, NULL, &r, AKX_HOST))
    return 1;
  int64_t best = -1, best_v = 0;
  for (int64_t k = 0; check && k < b->n_global; ++k)
    if (best < 0 || host_value(k) > best_v) best = k, best_v = host_value(k);
  return check && (r.index != best || r.value != best_v);
}

static int call_dims_argmax(dist_bench *b, int check) {
  const int64_t shape[2] = {b->n_local / 64, 64}, one[2] = {1, 64};
  akx_array a = akx_array_c(b->dev, AKX_INT64, 2, shape), d = akx_array_c(b->out, AKX_INT64, 2, one);
  if (akx_reduce_dims_all(b->comm, &d, &a, 0, AKX_MAP_IDENTITY, AKX_OP_ARGMAX, NULL)) return 1;
  if (!check) return 0;
  int64_t got[64];
  akx_memcpy(b->ctx, got, b->out, sizeof got, AKX_COPY_DEVICE_TO_HOST);
  int bad = 0;
  for (int64_t j = 0; j < 64; ++j) {
    int64_t best = -1, best_v = 0;
    for (int64_t i = 0; i < b->n_global / 64; ++i)
      if (best < 0 || host_value(i * 64 + j) > best_v) best = i, best_v = host_value(i * 64 + j);
    bad |= got[j] != best;
  }
  return bad;
}

static int call_scan(dist_bench *b, int check) { return scan_with(b, check, AKX_OP_ADD); }
static int call_scan_user(dist_bench *b, int check) { return scan_with(b, check, b->sum_op); }

static dist_row run_case(dist_bench *b, const char *family, dist_call call) {
  dist_row r;
  memset(&r, 0, sizeof r);
  snprintf(r.family, sizeof r.family, "%s", family);
  r.n = b->n_global;
  r.rank = b->rank;
  int bad = call(b, 0); /* warm-up: run-time compiles, the communicator's buffers */
  akx_synchronize(b->ctx);
  akx_comm_counters_t c0, c1;
  akx_comm_counters_reset(b->comm);
  akx_comm_counters(b->comm, &c0);
  if (b->on_sim) akx_sim_counters_reset(b->ctx);
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = wall();
  bad |= call(b, 1);
  akx_synchronize(b->ctx);
  const double t1 = wall();
  akx_comm_counters(b->comm, &c1);
  r.sent = c1.bytes_sent - c0.bytes_sent;
  r.received = c1.bytes_received - c0.bytes_received;
  r.exchanges = c1.exchanges - c0.exchanges;
  r.exchange_us = 1e6 * (c1.exchange_seconds - c0.exchange_seconds);
  if (b->on_sim) {
    akx_sim_kernel_counters total;
    r.local_us = akx_sim_counters_get(b->ctx, &total, NULL, 0, NULL) == AKX_SUCCESS ? total.model_us : -1;
  } else {
    r.local_us = 1e6 * (t1 - t0) - r.exchange_us;
  }
  r.ok = !bad;
  return r;
}

int akx_bench_dist(int argc, char **argv) {
  akx_backend backend = AKX_BACKEND_AUTO;
  int quick = 0, large = 0;
  for (int i = 2; i < argc; ++i) {
    if (strcmp(argv[i], "--quick") == 0) quick = 1;
    else if (strcmp(argv[i], "--large") == 0) large = 1;
    else if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc) {
      const char *v = argv[++i];
      backend = strcmp(v, "sim") == 0 ? AKX_BACKEND_SIM : strcmp(v, "cuda") == 0 ? AKX_BACKEND_CUDA
                                                                                : AKX_BACKEND_AUTO;
    } else {
      fprintf(stderr, "usage: mpirun -np P akx-bench dist [--backend auto|cuda|sim] [--quick | --large]\n");
      return 2;
    }
  }
  MPI_Init(&argc, &argv);
  dist_bench b;
  memset(&b, 0, sizeof b);
  MPI_Comm_rank(MPI_COMM_WORLD, &b.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &b.size);
  MPI_Comm world = MPI_COMM_WORLD;
  if (akx_context_create(&b.ctx, backend, 0) != AKX_SUCCESS ||
      akx_comm_create_mpi(b.ctx, &world, &b.comm) != AKX_SUCCESS) {
    fprintf(stderr, "akx-bench dist: rank %d: %s\n", b.rank, akx_last_error());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  b.on_sim = akx_context_backend(b.ctx) == AKX_BACKEND_SIM;
  static const char sum_src[] = "AKX_HD int64_t s_add(int64_t a, int64_t b) { return a + b; }\n"
                                "AKX_HD int64_t s_zero() { return 0; }\n";
  const akx_user_op_desc sum_desc = {sum_src, "int64_t", "s_add", "s_zero", NULL, NULL};
  if (akx_user_op_create(b.ctx, &sum_desc, &b.sum_op) != AKX_SUCCESS) {
    fprintf(stderr, "akx-bench dist: rank %d: %s\n", b.rank, akx_last_error());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  /* Global sizes: multiples of 64 per rank (the dims case's rows). */
  /* --large adds 2^24 (a minute or more on the sim). */
  const int64_t sizes[] = {1 << 14, 1 << 17, 1 << 20, 1 << 24};
  const int nsizes = quick ? 2 : large ? 4 : 3;
  static const struct { const char *name; dist_call call; } families[] = {
      {"mapreduce", call_mapreduce}, {"dims", call_dims}, {"scan", call_scan}, {"findall", call_findall},
      {"argmax", call_argmax}, {"dims-argmax", call_dims_argmax}, {"scan-user", call_scan_user}};
  dist_row *rows = malloc(sizeof(dist_row) * (size_t)b.size);
  int failed = 0;
  if (b.rank == 0)
    printf("akx-bench dist: %d ranks, %s; int64; per rank: bytes sent / received through the engine "
           "(agreement record + partials), exchanges, their host wall time, and the local part (%s).\n"
           "%-11s %9s %4s %9s %9s %5s %12s %12s %s\n",
           b.size, b.on_sim ? "sim" : "cuda",
           b.on_sim ? "the model's GPU time of the call's kernels, src/sim/model.c" : "call wall time less exchanges",
           "family", "elements", "rank", "sent B", "recv B", "exch", "exchange µs", b.on_sim ? "model µs" : "local µs",
           "check");
  for (int si = 0; si < nsizes; ++si) {
    b.n_global = sizes[si];
    const int64_t rows64 = b.n_global / 64, per = rows64 / b.size;
    const int64_t my_rows = b.rank == b.size - 1 ? rows64 - per * (b.size - 1) : per;
    b.n_local = my_rows * 64;
    b.before = per * b.rank * 64;
    const size_t bytes = (size_t)(b.n_local ? b.n_local : 1) * sizeof(int64_t);
    int64_t *host = malloc(bytes);
    for (int64_t k = 0; k < b.n_local; ++k) host[k] = host_value(b.before + k);
    if (akx_malloc(b.ctx, (void **)&b.dev, bytes) || akx_malloc(b.ctx, (void **)&b.out, bytes) ||
        akx_malloc(b.ctx, (void **)&b.indices, bytes) ||
        akx_memcpy(b.ctx, b.dev, host, bytes, AKX_COPY_HOST_TO_DEVICE)) {
      fprintf(stderr, "akx-bench dist: rank %d: %s\n", b.rank, akx_last_error());
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    free(host);
    for (size_t f = 0; f < sizeof families / sizeof families[0]; ++f) {
      const dist_row r = run_case(&b, families[f].name, families[f].call);
      if (!r.ok) fprintf(stderr, "akx-bench dist: rank %d: %s: %s\n", b.rank, r.family, akx_last_error());
      MPI_Gather(&r, (int)sizeof r, MPI_BYTE, rows, (int)sizeof r, MPI_BYTE, 0, MPI_COMM_WORLD);
      for (int q = 0; b.rank == 0 && q < b.size; ++q) {
        failed |= !rows[q].ok;
        printf("%-11s %9lld %4d %9llu %9llu %5llu %12.1f %12.1f %s\n", rows[q].family, (long long)rows[q].n,
               rows[q].rank, (unsigned long long)rows[q].sent, (unsigned long long)rows[q].received,
               (unsigned long long)rows[q].exchanges, rows[q].exchange_us, rows[q].local_us,
               rows[q].ok ? "ok" : "FAILED");
      }
    }
    akx_free(b.ctx, b.dev);
    akx_free(b.ctx, b.out);
    akx_free(b.ctx, b.indices);
  }
  free(rows);
  MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  akx_comm_destroy(b.comm);
  akx_context_destroy(b.ctx);
  MPI_Finalize();
  return failed ? 1 : 0;
}
