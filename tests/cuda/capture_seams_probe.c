/* What src/cuda/launch_calls.c decides from a stream's capture status, on a GPU
 * (bench/gpu_check.sh, stage capture-seams; tests/test_cuda_seams.c runs the same code on fake
 * CUDA calls):
 *   legacy  a context on the legacy default stream (NULL) while another thread captures a
 *           blocking stream of the same device in global mode: akx_mapreduce is refused
 *           (AKX_ERROR_UNSUPPORTED, the sentence naming the legacy stream and
 *           akx_context_set_stream), and that capture is not invalidated: it ends into a graph
 *           that instantiates and replays;
 *   cold    a context on its own stream, a caller-owned workspace sized by the query, kernels
 *           never launched in this process: akx_scan inside a global-mode capture is refused
 *           with "once before capturing" and no cudaFuncGetAttributes in the capture (the
 *           capture still ends cleanly); made once outside, the same call is captured, and the
 *           graph's replay writes the scan.
 * Run each mode in a fresh process (the kernels must be cold): akx_capture_seams_probe
 * legacy|cold. Exit 0 when every check held, 1 when one did not, 77 without a device. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "probe.h"

enum { N = 1 << 16 };

static int failures = 0;
#define CHECK(cond, ...)              \
  do {                                \
    if (!(cond)) {                    \
      printf("FAILED: " __VA_ARGS__); \
      printf("\n");                   \
      failures++;                     \
    }                                 \
  } while (0)

static float *upload_ones(akx_context *ctx) {
  float *host = malloc(N * sizeof(float)), *dev = NULL;
  for (int i = 0; i < N; i++) host[i] = 1.0f;
  PROBE_AKX(akx_malloc(ctx, (void **)&dev, N * sizeof(float)));
  PROBE_AKX(akx_memcpy(ctx, dev, host, N * sizeof(float), AKX_COPY_HOST_TO_DEVICE));
  free(host);
  return dev;
}

/* ---- legacy: another thread captures in global mode ------------------------------------------- */
typedef struct {
  pthread_mutex_t m;
  pthread_cond_t c;
  int stage; /* 1: capturing, 2: the other thread's call is done */
  cudaStream_t s;
  void *scratch;
  cudaError_t end_error;
  cudaGraph_t graph;
} capturer;

static void wait_stage(capturer *k, int stage) {
  pthread_mutex_lock(&k->m);
  while (k->stage < stage) pthread_cond_wait(&k->c, &k->m);
  pthread_mutex_unlock(&k->m);
}
static void set_stage(capturer *k, int stage) {
  pthread_mutex_lock(&k->m);
  k->stage = stage;
  pthread_cond_broadcast(&k->c);
  pthread_mutex_unlock(&k->m);
}

static void *capture_thread(void *arg) {
  capturer *k = arg;
  PROBE_CUDA(cudaSetDevice(0));
  PROBE_CUDA(cudaStreamBeginCapture(k->s, cudaStreamCaptureModeGlobal));
  PROBE_CUDA(cudaMemsetAsync(k->scratch, 7, 256, k->s));
  set_stage(k, 1);
  wait_stage(k, 2);
  k->end_error = cudaStreamEndCapture(k->s, &k->graph);
  return NULL;
}

static void legacy(void) {
  akx_context *ctx = NULL;
  PROBE_AKX(akx_context_create(&ctx, AKX_BACKEND_CUDA, 0));
  float *x = upload_ones(ctx), *result = NULL;
  PROBE_AKX(akx_malloc(ctx, (void **)&result, sizeof(float)));
  const akx_array v = akx_vector(x, AKX_FLOAT32, N);
  capturer k = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, NULL, NULL, cudaSuccess, NULL};
  PROBE_CUDA(cudaStreamCreate(&k.s)); /* blocking: the legacy stream waits for it */
  PROBE_CUDA(cudaMalloc(&k.scratch, 256));
  pthread_t t;
  if (pthread_create(&t, NULL, capture_thread, &k) != 0) {
    printf("FAILED: pthread_create\n");
    exit(1);
  }
  wait_stage(&k, 1);
  const akx_status s = akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, result, AKX_DEVICE);
  const char *why = akx_last_error();
  CHECK(s == AKX_ERROR_UNSUPPORTED, "akx_mapreduce on the legacy stream during another thread's capture: %s (%s)",
        akx_status_string(s), why);
  CHECK(strstr(why, "legacy default stream") != NULL && strstr(why, "akx_context_set_stream") != NULL,
        "the sentence: %s", why);
  printf("legacy: refused: %s\n", why);
  set_stage(&k, 2);
  pthread_join(t, NULL);
  CHECK(k.end_error == cudaSuccess, "the other thread's capture ended with %s", cudaGetErrorName(k.end_error));
  if (k.end_error == cudaSuccess) {
    cudaGraphExec_t exec;
    PROBE_CUDA(cudaGraphInstantiate(&exec, k.graph, 0));
    PROBE_CUDA(cudaGraphLaunch(exec, k.s));
    PROBE_CUDA(cudaStreamSynchronize(k.s));
    PROBE_CUDA(cudaGraphExecDestroy(exec));
    PROBE_CUDA(cudaGraphDestroy(k.graph));
  }
  /* After the capture the context's calls run again. */
  PROBE_AKX(akx_mapreduce(ctx, &v, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, result, AKX_DEVICE));
  float sum = 0;
  PROBE_AKX(akx_memcpy(ctx, &sum, result, sizeof sum, AKX_COPY_DEVICE_TO_HOST));
  CHECK(sum == (float)N, "the sum after the capture: %g, expected %d", (double)sum, N);
  PROBE_CUDA(cudaFree(k.scratch));
  PROBE_CUDA(cudaStreamDestroy(k.s));
  akx_free(ctx, x);
  akx_free(ctx, result);
  akx_context_destroy(ctx);
}

/* ---- cold: a kernel's first launch inside a capture ------------------------------------------- */
static void cold(void) {
  akx_context *ctx = NULL;
  PROBE_AKX(akx_context_create(&ctx, AKX_BACKEND_CUDA, 0));
  cudaStream_t s;
  PROBE_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  PROBE_AKX(akx_context_set_stream(ctx, s));
  float *x = upload_ones(ctx), *out = NULL;
  PROBE_AKX(akx_malloc(ctx, (void **)&out, N * sizeof(float)));
  const akx_array v = akx_vector(x, AKX_FLOAT32, N), o = akx_vector(out, AKX_FLOAT32, N);
  size_t need = 0;
  PROBE_AKX(akx_scan_workspace_size(ctx, &o, &v, AKX_OP_ADD, 0, NULL, &need));
  void *ws = NULL;
  PROBE_AKX(akx_malloc(ctx, &ws, need));
  PROBE_AKX(akx_context_set_workspace(ctx, ws, need));

  cudaGraph_t g = NULL;
  PROBE_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  akx_status st = akx_scan(ctx, &o, &v, AKX_OP_ADD, 0, NULL);
  const char *why = akx_last_error();
  CHECK(st == AKX_ERROR_UNSUPPORTED && strstr(why, "once before capturing") != NULL,
        "a cold akx_scan inside a capture: %s (%s)", akx_status_string(st), why);
  printf("cold: refused: %s\n", why);
  cudaError_t e = cudaStreamEndCapture(s, &g);
  CHECK(e == cudaSuccess, "the capture after the refusal ended with %s", cudaGetErrorName(e));
  if (g) PROBE_CUDA(cudaGraphDestroy(g));

  PROBE_AKX(akx_scan(ctx, &o, &v, AKX_OP_ADD, 0, NULL)); /* once outside */
  PROBE_AKX(akx_synchronize(ctx));
  PROBE_CUDA(cudaMemsetAsync(out, 0, N * sizeof(float), s));
  PROBE_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  st = akx_scan(ctx, &o, &v, AKX_OP_ADD, 0, NULL);
  CHECK(st == AKX_SUCCESS, "a warm akx_scan inside a capture: %s (%s)", akx_status_string(st), akx_last_error());
  g = NULL;
  PROBE_CUDA(cudaStreamEndCapture(s, &g));
  cudaGraphExec_t exec;
  PROBE_CUDA(cudaGraphInstantiate(&exec, g, 0));
  PROBE_CUDA(cudaGraphLaunch(exec, s));
  PROBE_CUDA(cudaStreamSynchronize(s));
  float last = 0;
  PROBE_CUDA(cudaMemcpy(&last, out + N - 1, sizeof last, cudaMemcpyDeviceToHost));
  CHECK(last == (float)N, "the replayed scan's last element: %g, expected %d", (double)last, N);
  PROBE_CUDA(cudaGraphExecDestroy(exec));
  PROBE_CUDA(cudaGraphDestroy(g));
  PROBE_AKX(akx_context_set_workspace(ctx, NULL, 0));
  akx_free(ctx, ws);
  akx_free(ctx, x);
  akx_free(ctx, out);
  akx_context_destroy(ctx);
  PROBE_CUDA(cudaStreamDestroy(s));
}

int main(int argc, char **argv) {
  probe_need_device("akx_capture_seams_probe");
  const char *mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "legacy") == 0)
    legacy();
  else if (strcmp(mode, "cold") == 0)
    cold();
  else {
    fprintf(stderr, "usage: akx_capture_seams_probe legacy|cold\n");
    return 2;
  }
  printf("akx_capture_seams_probe %s: %s\n", mode, failures ? "FAILED" : "every check held");
  return failures ? 1 : 0;
}
