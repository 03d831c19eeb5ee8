/* Which CUDA device an NCCL communicator may serve (src/dist/nccl_device.c): akx_comm_create_nccl
 * asks the communicator's device (ncclCommCuDevice) and the context's (cudaGetDevice inside
 * akx_context_run) and takes the pair only when they are one device; the sentence names both.
 * The decision is a pure function, so it is tested here on the CPU, in every build of
 * libakx_dist, with or without NCCL. So is the (thread, clique) table that refuses a second rank
 * of one clique on one thread (below). */
#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>

#include "akx.h"
#include "src/dist/internal.h"

typedef struct {
  int comm_device, ctx_device;
  const char *ctx_name;
  akx_status want;
  const char *says[3];
} device_row;

static const device_row rows[] = {
    {0, 0, "NVIDIA H200", AKX_SUCCESS, {0}},
    {3, 3, "NVIDIA H200", AKX_SUCCESS, {0}},
    {1, 0, "NVIDIA H200", AKX_ERROR_INVALID_ARGUMENT,
     {"nccl_comm is on CUDA device 1", "ctx is on CUDA device 0 (NVIDIA H200)", "own thread or process"}},
    {0, 2, "NVIDIA A100-SXM4-80GB", AKX_ERROR_INVALID_ARGUMENT,
     {"CUDA device 0", "CUDA device 2 (NVIDIA A100-SXM4-80GB)", NULL}},
    {0, 1, "", AKX_ERROR_INVALID_ARGUMENT, {"ctx is on CUDA device 1;", NULL, NULL}},
};

Test(dist_nccl_device, the_table) {
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    const device_row *r = &rows[i];
    char why[512] = "(unchanged)";
    akx_status got = akx__dist_nccl_device_check(r->comm_device, r->ctx_device, r->ctx_name, why, sizeof why);
    cr_expect_eq(got, r->want, "communicator on %d, context on %d: %s, want %s (%s)", r->comm_device,
                 r->ctx_device, akx_status_string(got), akx_status_string(r->want), why);
    for (int k = 0; k < 3 && r->says[k]; k++)
      cr_expect(strstr(why, r->says[k]) != NULL, "communicator on %d, context on %d: the sentence lacks \"%s\": %s",
                r->comm_device, r->ctx_device, r->says[k], why);
  }
}

/* ---- one thread, one rank of a clique (src/dist/nccl_device.c) ------------------------------- */
/* The decision: a second rank of one clique on one thread is refused (one thread driving two
 * ranks deadlocks in its first call); other threads, sub-communicators on the thread's own
 * device, the same rank on another device (another clique) and other sizes are taken. */
typedef struct {
  akx__dist_nccl_rank held[2];
  int n;
  akx__dist_nccl_rank mine;
  akx_status want;
  const char *says[3];
} clique_row;

#define RANK(thread, size, rank, device) {thread, NULL, size, rank, device}
static const clique_row clique_rows[] = {
    {{RANK(1, 2, 0, 0)}, 1, RANK(1, 2, 1, 1), AKX_ERROR_INVALID_ARGUMENT,
     {"nccl_comm is rank 1 of 2 on CUDA device 1", "already holds rank 0 of 2 on CUDA device 0",
      "create each rank's akx_comm in the thread"}},
    {{RANK(1, 4, 0, 0), RANK(2, 4, 1, 1)}, 2, RANK(1, 4, 3, 3), AKX_ERROR_INVALID_ARGUMENT,
     {"rank 3 of 4", "rank 0 of 4", "deadlocks"}},
    {{RANK(1, 4, 0, 0), RANK(2, 4, 1, 1)}, 2, RANK(3, 4, 2, 2), AKX_SUCCESS, {0}}, /* its own thread */
    {{RANK(1, 2, 0, 0)}, 1, RANK(1, 2, 1, 0), AKX_SUCCESS, {0}}, /* one device: a sub-communicator */
    {{RANK(1, 2, 0, 0)}, 1, RANK(1, 2, 0, 1), AKX_SUCCESS, {0}}, /* rank 0 twice: two cliques */
    {{RANK(1, 2, 0, 0)}, 1, RANK(1, 4, 1, 1), AKX_SUCCESS, {0}}, /* another size: another clique */
    {{RANK(1, 2, 0, 0)}, 0, RANK(1, 2, 1, 1), AKX_SUCCESS, {0}}, /* nothing held */
};
#undef RANK

Test(dist_nccl_device, one_rank_of_a_clique_per_thread) {
  for (size_t i = 0; i < sizeof clique_rows / sizeof clique_rows[0]; i++) {
    const clique_row *r = &clique_rows[i];
    char why[640] = "(unchanged)";
    const akx_status got = akx__dist_nccl_thread_check(r->held, r->n, &r->mine, why, sizeof why);
    cr_expect_eq(got, r->want, "row %zu: %s, want %s (%s)", i, akx_status_string(got), akx_status_string(r->want),
                 why);
    for (int k = 0; k < 3 && r->says[k]; k++)
      cr_expect(strstr(why, r->says[k]) != NULL, "row %zu: the sentence lacks \"%s\": %s", i, r->says[k], why);
  }
}

/* The process's table as akx_comm_create_nccl uses it: claimed for the calling thread, released
 * by akx_comm_destroy (src/dist/engine_nccl.c: nccl_destroy). */
static int dummy_comms[4];
static void *claim_rank1_elsewhere(void *arg) {
  char why[640];
  *(akx_status *)arg = akx__dist_nccl_claim(&dummy_comms[2], 2, 1, 1, why, sizeof why);
  akx__dist_nccl_release(&dummy_comms[2]);
  return NULL;
}

Test(dist_nccl_device, the_table_claims_per_thread) {
  char why[640];
  cr_assert_neq(akx__dist_thread_id(), 0u);
  cr_assert_eq(akx__dist_nccl_claim(&dummy_comms[0], 2, 0, 0, why, sizeof why), AKX_SUCCESS, "%s", why);
  cr_expect_eq(akx__dist_nccl_claim(&dummy_comms[1], 2, 1, 1, why, sizeof why), AKX_ERROR_INVALID_ARGUMENT,
               "a second rank of the clique on this thread");
  cr_expect(strstr(why, "already holds rank 0 of 2 on CUDA device 0") != NULL, "%s", why);
  akx_status other = AKX_ERROR_INTERNAL;
  pthread_t t;
  cr_assert_eq(pthread_create(&t, NULL, claim_rank1_elsewhere, &other), 0);
  pthread_join(t, NULL);
  cr_expect_eq(other, AKX_SUCCESS, "rank 1 on a thread of its own");
  akx__dist_nccl_release(&dummy_comms[0]);
  cr_expect_eq(akx__dist_nccl_claim(&dummy_comms[1], 2, 1, 1, why, sizeof why), AKX_SUCCESS,
               "rank 1 once rank 0's communicator is destroyed: %s", why);
  akx__dist_nccl_release(&dummy_comms[1]);
  akx__dist_nccl_release(&dummy_comms[3]); /* never claimed: nothing */
}

/* The call site: the context's device is what the device query finds inside the context's
 * akx_context_run (cudaGetDevice in src/dist/engine_nccl.c; a stand-in here, on a sim context),
 * compared with the communicator's. */
static int device_told;
static int runs;
static akx_status tell_device(void *stream, void *workspace, void *arg) {
  (void)stream;
  (void)workspace;
  runs++;
  *(int *)arg = device_told;
  return AKX_SUCCESS;
}

Test(dist_nccl_device, the_context_device_is_asked_inside_its_run) {
  akx_context *ctx = NULL;
  cr_assert_eq(akx_context_create(&ctx, AKX_BACKEND_SIM, 0), AKX_SUCCESS, "%s", akx_last_error());
  akx_context_info_t info;
  cr_assert_eq(akx_context_info(ctx, &info), AKX_SUCCESS);
  char why[512] = "(unchanged)";
  device_told = 2;
  cr_expect_eq(akx__dist_nccl_context_check(ctx, 1, tell_device, why, sizeof why), AKX_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(runs, 1, "the query ran %d times", runs);
  cr_expect(strstr(why, "nccl_comm is on CUDA device 1") != NULL, "%s", why);
  cr_expect(strstr(why, "ctx is on CUDA device 2") != NULL, "%s", why);
  cr_expect(strstr(why, info.device_name) != NULL, "the context's name (%s) not in: %s", info.device_name, why);
  device_told = 1;
  cr_expect_eq(akx__dist_nccl_context_check(ctx, 1, tell_device, why, sizeof why), AKX_SUCCESS, "%s", why);
  cr_expect_eq(why[0], '\0');
  akx_context_destroy(ctx);
}
