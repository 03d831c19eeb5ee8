/* libakx calls captured into a CUDA graph and replayed (bench/gpu_check.sh, stage capture), with
 * programmatic dependent launch on (AKX_PDL unset or 1: include/akx.h, "Stream capture"; libakx
 * leaves the attribute off while a stream captures). On a stream of its own
 * (akx_context_set_stream), captured with cudaStreamBeginCapture in global mode:
 *   akx_mapreduce ADD and MAX into device memory, a NONZERO count into device memory,
 *   akx_reduce_dims of a matrix's rows, an inclusive akx_scan;
 * and akx_findall, whose count comes back to the host, is refused inside the capture
 * (AKX_ERROR_UNSUPPORTED) without spoiling it. The graph is instantiated and replayed N times,
 * the inputs changed between replays (copies on the stream, outside the graph) and the graph's
 * outputs poisoned; after each replay the same calls run eagerly into other outputs: the
 * graph's results must equal the eager ones bit for bit, and both the exact sums (small
 * integers in float32: exact whatever the order).
 * Modes:
 *   warm  each call made once before the capture (the cached workspace grown), as akx.h asks;
 *   cold  AKX_KERNELS=runtime and an empty AKX_CACHE_DIR (unless the caller set one: a fresh
 *         directory in the working directory, removed at the end), a caller-owned workspace sized with the *_workspace_size queries: the first
 *         call inside a capture would compile with NVRTC and load a module, and must be refused
 *         with a sentence telling to make the call once before capturing, compiling nothing;
 *         the capture then ends cleanly, the calls are made once outside a capture (they
 *         compile), and the capture and replays of warm mode follow.
 * Usage: akx_capture_probe warm|cold [REPLAYS] (default 50). Skipped (77) without a device. */
#define _GNU_SOURCE /* mkdtemp, nftw */
#include <ctype.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "probe.h"
#include "akx_layer.h" /* akx_kernel_cache_counters */

enum { N = (1 << 20) + 17, ROWS = 300, COLS = 777, SETS = 3 };

typedef struct {
  float *x, *m;       /* inputs: the vector and the ROWS x COLS matrix */
  float *sets_x[SETS], *sets_m[SETS]; /* the inputs of the replays, copied into x and m */
} inputs;

typedef struct {
  float *sum, *max;   /* one float each */
  int64_t *count;     /* one int64 */
  float *rows;        /* ROWS floats */
  float *scan;        /* N floats */
} outputs;

typedef struct {
  float sum, max;
  int64_t count;
  float rows[ROWS];
  float *scan; /* N */
} results;

static int failures = 0;
#define CHECK(cond, ...)                        \
  do {                                          \
    if (!(cond)) {                              \
      printf("  FAILED: " __VA_ARGS__);         \
      printf("\n");                             \
      ++failures;                               \
    }                                           \
  } while (0)

/* Input set s: small integers 0..6 (and zeros, for the count), different in every set. */
static float x_value(int s, int64_t i) { return (float)((i * 3 + s * 5) % 7); }
static float m_value(int s, int64_t i) { return (float)((i + 2 * s) % 5); }

static void *dev(akx_context *ctx, size_t bytes) {
  void *p = NULL;
  PROBE_AKX(akx_malloc(ctx, &p, bytes));
  return p;
}

static outputs make_outputs(akx_context *ctx) {
  outputs o;
  o.sum = dev(ctx, sizeof(float));
  o.max = dev(ctx, sizeof(float));
  o.count = dev(ctx, sizeof(int64_t));
  o.rows = dev(ctx, ROWS * sizeof(float));
  o.scan = dev(ctx, (size_t)N * sizeof(float));
  return o;
}

/* The captured sequence; the first failing call's status is returned, its name in *failed. */
static akx_status sequence(akx_context *ctx, const inputs *in, const outputs *o,
                           const char **failed) {
  const akx_array x = akx_vector(in->x, AKX_FLOAT32, N);
  const int64_t mshape[2] = {ROWS, COLS}, rshape[2] = {ROWS, 1};
  const akx_array m = akx_array_c(in->m, AKX_FLOAT32, 2, mshape);
  const akx_array r = akx_array_c(o->rows, AKX_FLOAT32, 2, rshape);
  const akx_array sc = akx_vector(o->scan, AKX_FLOAT32, N);
  akx_status s;
#define STEP(name, call)       \
  if ((s = (call)) != AKX_SUCCESS) { \
    *failed = name;            \
    return s;                  \
  }
  STEP("akx_mapreduce ADD", akx_mapreduce(ctx, &x, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, o->sum, AKX_DEVICE));
  STEP("akx_mapreduce MAX", akx_mapreduce(ctx, &x, AKX_MAP_IDENTITY, AKX_OP_MAX, NULL, o->max, AKX_DEVICE));
  STEP("akx_mapreduce NONZERO ADD",
       akx_mapreduce(ctx, &x, AKX_MAP_NONZERO, AKX_OP_ADD, NULL, o->count, AKX_DEVICE));
  STEP("akx_reduce_dims", akx_reduce_dims(ctx, &r, &m, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL));
  STEP("akx_scan", akx_scan(ctx, &sc, &x, AKX_OP_ADD, 0, NULL));
#undef STEP
  *failed = NULL;
  return AKX_SUCCESS;
}

static size_t workspace_needed(akx_context *ctx, const inputs *in, const outputs *o) {
  const akx_array x = akx_vector(in->x, AKX_FLOAT32, N);
  const int64_t mshape[2] = {ROWS, COLS}, rshape[2] = {ROWS, 1};
  const akx_array m = akx_array_c(in->m, AKX_FLOAT32, 2, mshape);
  const akx_array r = akx_array_c(o->rows, AKX_FLOAT32, 2, rshape);
  const akx_array sc = akx_vector(o->scan, AKX_FLOAT32, N);
  size_t most = 0, b = 0;
  PROBE_AKX(akx_mapreduce_workspace_size(ctx, &x, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &b));
  most = b > most ? b : most;
  PROBE_AKX(akx_mapreduce_workspace_size(ctx, &x, AKX_MAP_IDENTITY, AKX_OP_MAX, NULL, &b));
  most = b > most ? b : most;
  PROBE_AKX(akx_mapreduce_workspace_size(ctx, &x, AKX_MAP_NONZERO, AKX_OP_ADD, NULL, &b));
  most = b > most ? b : most;
  PROBE_AKX(akx_reduce_dims_workspace_size(ctx, &r, &m, AKX_MAP_IDENTITY, AKX_OP_ADD, NULL, &b));
  most = b > most ? b : most;
  PROBE_AKX(akx_scan_workspace_size(ctx, &sc, &x, AKX_OP_ADD, 0, NULL, &b));
  most = b > most ? b : most;
  return most;
}

static void fetch(akx_context *ctx, const outputs *o, results *r) {
  PROBE_AKX(akx_memcpy(ctx, &r->sum, o->sum, sizeof r->sum, AKX_COPY_DEVICE_TO_HOST));
  PROBE_AKX(akx_memcpy(ctx, &r->max, o->max, sizeof r->max, AKX_COPY_DEVICE_TO_HOST));
  PROBE_AKX(akx_memcpy(ctx, &r->count, o->count, sizeof r->count, AKX_COPY_DEVICE_TO_HOST));
  PROBE_AKX(akx_memcpy(ctx, r->rows, o->rows, sizeof r->rows, AKX_COPY_DEVICE_TO_HOST));
  PROBE_AKX(akx_memcpy(ctx, r->scan, o->scan, (size_t)N * sizeof(float), AKX_COPY_DEVICE_TO_HOST));
}

/* The exact results of input set s. */
static void exact(int s, results *e) {
  double sum = 0;
  e->max = 0;
  e->count = 0;
  for (int64_t i = 0; i < N; i++) {
    const float v = x_value(s, i);
    sum += v;
    e->scan[i] = (float)sum;
    if (v > e->max) e->max = v;
    e->count += v != 0;
  }
  e->sum = (float)sum;
  for (int64_t i = 0; i < ROWS; i++) {
    double row = 0;
    for (int64_t j = 0; j < COLS; j++) row += m_value(s, i * COLS + j);
    e->rows[i] = (float)row;
  }
}

static void compare(const char *what, int replay, const results *got, const results *want) {
  CHECK(memcmp(&got->sum, &want->sum, sizeof got->sum) == 0, "%s, replay %d: sum %.9g, expected %.9g",
        what, replay, (double)got->sum, (double)want->sum);
  CHECK(memcmp(&got->max, &want->max, sizeof got->max) == 0, "%s, replay %d: max %.9g, expected %.9g",
        what, replay, (double)got->max, (double)want->max);
  CHECK(got->count == want->count, "%s, replay %d: count %lld, expected %lld", what, replay,
        (long long)got->count, (long long)want->count);
  for (int i = 0; i < ROWS; i++)
    if (memcmp(&got->rows[i], &want->rows[i], sizeof(float)) != 0) {
      CHECK(0, "%s, replay %d: row %d's sum %.9g, expected %.9g", what, replay, i,
            (double)got->rows[i], (double)want->rows[i]);
      break;
    }
  for (int64_t i = 0; i < N; i++)
    if (memcmp(&got->scan[i], &want->scan[i], sizeof(float)) != 0) {
      CHECK(0, "%s, replay %d: scan element %lld %.9g, expected %.9g", what, replay, (long long)i,
            (double)got->scan[i], (double)want->scan[i]);
      break;
    }
}

static int contains_ci(const char *s, const char *word) {
  for (; *s; ++s) {
    size_t k = 0;
    while (word[k] && tolower((unsigned char)s[k]) == tolower((unsigned char)word[k])) ++k;
    if (!word[k]) return 1;
  }
  return 0;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(path);
}

/* Captures the sequence (and the refused findall), replays it, compares with eager calls. */
static void capture_and_replay(akx_context *ctx, cudaStream_t stream, const inputs *in,
                               const outputs *graph_out, const outputs *eager_out, int replays) {
  const char *failed = NULL;
  int64_t *idx = dev(ctx, 16 * sizeof(int64_t));
  const akx_array x = akx_vector(in->x, AKX_FLOAT32, N), vi = akx_vector(idx, AKX_INT64, 16);
  PROBE_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  akx_status s = sequence(ctx, in, graph_out, &failed);
  CHECK(s == AKX_SUCCESS, "%s inside the capture: %s: %s", failed ? failed : "?",
        akx_status_string(s), akx_last_error());
  int64_t count = -7;
  const akx_status sf = akx_findall(ctx, &x, &vi, &count);
  CHECK(sf == AKX_ERROR_UNSUPPORTED && count == -7,
        "akx_findall inside the capture: %s (count %lld), expected AKX_ERROR_UNSUPPORTED and no "
        "count", akx_status_string(sf), (long long)count);
  cudaGraph_t graph = NULL;
  const cudaError_t ee = cudaStreamEndCapture(stream, &graph);
  CHECK(ee == cudaSuccess, "cudaStreamEndCapture: %s (%s): a call invalidated the capture",
        cudaGetErrorString(ee), cudaGetErrorName(ee));
  if (ee != cudaSuccess || s != AKX_SUCCESS) {
    (void)cudaGetLastError();
    if (graph) cudaGraphDestroy(graph);
    PROBE_AKX(akx_free(ctx, idx));
    return;
  }
  size_t nodes = 0;
  PROBE_CUDA(cudaGraphGetNodes(graph, NULL, &nodes));
  cudaGraphExec_t exec;
  PROBE_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  printf("  captured %zu nodes; replaying %d times\n", nodes, replays);

  results g, e;
  g.scan = malloc((size_t)N * sizeof(float));
  e.scan = malloc((size_t)N * sizeof(float));
  if (!g.scan || !e.scan) exit(1);
  results exact_of[SETS];
  for (int k = 0; k < SETS; k++) {
    exact_of[k].scan = malloc((size_t)N * sizeof(float));
    if (!exact_of[k].scan) exit(1);
    exact(k, &exact_of[k]);
  }
  for (int rep = 0; rep < replays; rep++) {
    const int k = (rep + 1) % SETS; /* the first replay's inputs are not the capture's */
    PROBE_CUDA(cudaMemcpyAsync(in->x, in->sets_x[k], (size_t)N * sizeof(float),
                               cudaMemcpyDeviceToDevice, stream));
    PROBE_CUDA(cudaMemcpyAsync(in->m, in->sets_m[k], (size_t)ROWS * COLS * sizeof(float),
                               cudaMemcpyDeviceToDevice, stream));
    /* 0xff bytes: NaN floats and -1 counts, so that an output the replay left alone shows */
    PROBE_CUDA(cudaMemsetAsync(graph_out->sum, 0xff, sizeof(float), stream));
    PROBE_CUDA(cudaMemsetAsync(graph_out->max, 0xff, sizeof(float), stream));
    PROBE_CUDA(cudaMemsetAsync(graph_out->count, 0xff, sizeof(int64_t), stream));
    PROBE_CUDA(cudaMemsetAsync(graph_out->rows, 0xff, ROWS * sizeof(float), stream));
    PROBE_CUDA(cudaMemsetAsync(graph_out->scan, 0xff, (size_t)N * sizeof(float), stream));
    PROBE_CUDA(cudaGraphLaunch(exec, stream));
    s = sequence(ctx, in, eager_out, &failed);
    CHECK(s == AKX_SUCCESS, "eager %s after replay %d: %s: %s", failed ? failed : "?", rep,
          akx_status_string(s), akx_last_error());
    fetch(ctx, graph_out, &g);
    fetch(ctx, eager_out, &e);
    compare("the graph against the eager calls", rep, &g, &e);
    compare("the graph against the exact results", rep, &g, &exact_of[k]);
    if (failures > 20) break;
  }
  PROBE_CUDA(cudaGraphExecDestroy(exec));
  PROBE_CUDA(cudaGraphDestroy(graph));
  for (int k = 0; k < SETS; k++) free(exact_of[k].scan);
  free(g.scan);
  free(e.scan);
  PROBE_AKX(akx_free(ctx, idx));
}

int main(int argc, char **argv) {
  const int cold = argc > 1 && strcmp(argv[1], "cold") == 0;
  if (argc < 2 || (!cold && strcmp(argv[1], "warm") != 0)) {
    fprintf(stderr, "usage: akx_capture_probe warm|cold [REPLAYS]\n");
    return 2;
  }
  const int replays = argc > 2 ? atoi(argv[2]) : 50;
  probe_need_device("capture_probe");
  char cache_dir[4096] = "";
  if (cold) {
    /* Settings are read when a context is created: set them before. */
    setenv("AKX_KERNELS", "runtime", 1);
    if (!getenv("AKX_CACHE_DIR") || !*getenv("AKX_CACHE_DIR")) {
      /* In the working directory (ctest's: the build tree), not in /tmp: a cache directory
       * inside one that others may write is refused (docs/runtime_kernels.md). */
      char cwd[3072];
      if (!getcwd(cwd, sizeof cwd)) {
        perror("getcwd");
        return 1;
      }
      snprintf(cache_dir, sizeof cache_dir, "%s/akx-capture-probe.XXXXXX", cwd);
      if (!mkdtemp(cache_dir)) {
        perror("mkdtemp");
        return 1;
      }
      setenv("AKX_CACHE_DIR", cache_dir, 1);
    }
  }
  const char *pdl = getenv("AKX_PDL");
  printf("capture_probe %s: AKX_PDL=%s, AKX_KERNELS=%s, AKX_CACHE_DIR=%s\n", argv[1],
         pdl ? pdl : "(unset: on)", getenv("AKX_KERNELS") ? getenv("AKX_KERNELS") : "(unset)",
         getenv("AKX_CACHE_DIR") ? getenv("AKX_CACHE_DIR") : "(unset)");

  akx_context *ctx = NULL;
  PROBE_AKX(akx_context_create(&ctx, AKX_BACKEND_CUDA, 0));
  cudaStream_t stream;
  PROBE_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  PROBE_AKX(akx_context_set_stream(ctx, stream));

  inputs in;
  in.x = dev(ctx, (size_t)N * sizeof(float));
  in.m = dev(ctx, (size_t)ROWS * COLS * sizeof(float));
  float *host = malloc((size_t)N * sizeof(float));
  if (!host) return 1;
  for (int k = 0; k < SETS; k++) {
    in.sets_x[k] = dev(ctx, (size_t)N * sizeof(float));
    in.sets_m[k] = dev(ctx, (size_t)ROWS * COLS * sizeof(float));
    for (int64_t i = 0; i < N; i++) host[i] = x_value(k, i);
    PROBE_AKX(akx_memcpy(ctx, in.sets_x[k], host, (size_t)N * sizeof(float), AKX_COPY_HOST_TO_DEVICE));
    for (int64_t i = 0; i < ROWS * COLS; i++) host[i] = m_value(k, i);
    PROBE_AKX(akx_memcpy(ctx, in.sets_m[k], host, (size_t)ROWS * COLS * sizeof(float),
                         AKX_COPY_HOST_TO_DEVICE));
  }
  free(host);
  PROBE_CUDA(cudaMemcpy(in.x, in.sets_x[0], (size_t)N * sizeof(float), cudaMemcpyDeviceToDevice));
  PROBE_CUDA(cudaMemcpy(in.m, in.sets_m[0], (size_t)ROWS * COLS * sizeof(float),
                        cudaMemcpyDeviceToDevice));
  const outputs graph_out = make_outputs(ctx), eager_out = make_outputs(ctx);
  const char *failed = NULL;
  void *workspace = NULL;

  if (cold) {
    const size_t bytes = workspace_needed(ctx, &in, &graph_out);
    workspace = dev(ctx, bytes ? bytes : 16);
    PROBE_AKX(akx_context_set_workspace(ctx, workspace, bytes ? bytes : 16));
    akx_kernel_cache_counters_t before, after;
    akx_kernel_cache_counters(&before);
    PROBE_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    const akx_status s = sequence(ctx, &in, &graph_out, &failed);
    const char *said = akx_last_error();
    printf("  first call inside a capture, cold: %s: %s: %s\n", failed ? failed : "(all ran)",
           akx_status_string(s), s == AKX_SUCCESS ? "" : said);
    CHECK(s == AKX_ERROR_UNSUPPORTED && failed && strcmp(failed, "akx_mapreduce ADD") == 0,
          "the first call that would compile inside a capture was not refused with "
          "AKX_ERROR_UNSUPPORTED (%s at %s)", akx_status_string(s), failed ? failed : "none");
    CHECK(s == AKX_SUCCESS || (contains_ci(said, "captur") && contains_ci(said, "before")),
          "the refusal does not tell to make the call once before capturing: \"%s\"", said);
    akx_kernel_cache_counters(&after);
    CHECK(after.compiles == before.compiles && after.disk_hits == before.disk_hits,
          "the refused call compiled (%llu compiles, %llu disk hits during the capture)",
          (unsigned long long)(after.compiles - before.compiles),
          (unsigned long long)(after.disk_hits - before.disk_hits));
    cudaGraph_t graph = NULL;
    const cudaError_t ee = cudaStreamEndCapture(stream, &graph);
    CHECK(ee == cudaSuccess, "cudaStreamEndCapture after the refusal: %s (%s)",
          cudaGetErrorString(ee), cudaGetErrorName(ee));
    if (ee != cudaSuccess) (void)cudaGetLastError();
    if (graph) PROBE_CUDA(cudaGraphDestroy(graph));
    akx_kernel_cache_counters(&before);
    const akx_status w = sequence(ctx, &in, &graph_out, &failed);
    CHECK(w == AKX_SUCCESS, "the warm-up outside the capture: %s: %s: %s", failed ? failed : "?",
          akx_status_string(w), akx_last_error());
    akx_kernel_cache_counters(&after);
    printf("  warm-up outside the capture: %llu compiles, %llu disk hits\n",
           (unsigned long long)(after.compiles - before.compiles),
           (unsigned long long)(after.disk_hits - before.disk_hits));
    CHECK(after.compiles > before.compiles,
          "the warm-up compiled nothing: the cache was not cold, the refusal above proved nothing");
  } else {
    const akx_status w = sequence(ctx, &in, &graph_out, &failed);
    CHECK(w == AKX_SUCCESS, "the warm-up: %s: %s: %s", failed ? failed : "?", akx_status_string(w),
          akx_last_error());
  }
  PROBE_AKX(akx_synchronize(ctx));
  capture_and_replay(ctx, stream, &in, &graph_out, &eager_out, replays);

  PROBE_AKX(akx_synchronize(ctx));
  if (workspace) {
    PROBE_AKX(akx_context_set_workspace(ctx, NULL, 0));
    PROBE_AKX(akx_free(ctx, workspace));
  }
  PROBE_AKX(akx_context_set_stream(ctx, NULL));
  akx_context_destroy(ctx);
  PROBE_CUDA(cudaStreamDestroy(stream));
  if (cache_dir[0]) nftw(cache_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  printf("capture_probe %s: %s\n", argv[1], failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
