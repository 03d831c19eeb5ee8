/* NVRTC through dlopen (the contract is in nvrtc.h). The few entry points used are declared
 * here as function pointer types, as CuPy's and CCCL's loaders do, so that neither NVRTC's
 * header nor its library is needed to build libakx. These signatures and values are NVRTC's
 * stable C ABI (unchanged from CUDA 11.2, which added the supported-architecture queries,
 * through 13). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compile_log.h"
#include "embedded.h"
#include "error.h"
#include "nvrtc.h"

/* ---- NVRTC's ABI, declared by hand ---------------------------------------------------------- */
typedef int nvrtc_result;  /* nvrtcResult: an enum, int-sized */
enum {
  NVRTC_OK = 0,
  NVRTC_OUT_OF_MEMORY = 1,
  NVRTC_INVALID_OPTION = 5,
  NVRTC_COMPILATION = 6,
  NVRTC_BUILTIN_OPERATION_FAILURE = 7,
  NVRTC_NAME_EXPRESSION_NOT_VALID = 10,
};
typedef struct nvrtc_program_s *nvrtc_program;  /* nvrtcProgram: an opaque pointer */

typedef const char *(*get_error_string_fn)(nvrtc_result);
typedef nvrtc_result (*version_fn)(int *, int *);
typedef nvrtc_result (*get_num_supported_archs_fn)(int *);
typedef nvrtc_result (*get_supported_archs_fn)(int *);
typedef nvrtc_result (*create_program_fn)(nvrtc_program *, const char *, const char *, int,
                                          const char *const *, const char *const *);
typedef nvrtc_result (*destroy_program_fn)(nvrtc_program *);
typedef nvrtc_result (*compile_program_fn)(nvrtc_program, int, const char *const *);
typedef nvrtc_result (*get_size_fn)(nvrtc_program, size_t *);
typedef nvrtc_result (*get_bytes_fn)(nvrtc_program, char *);
typedef nvrtc_result (*add_name_expression_fn)(nvrtc_program, const char *);
typedef nvrtc_result (*get_lowered_name_fn)(nvrtc_program, const char *, const char **);

/* The architectures one NVRTC knows: 14 for NVRTC 13.0 (sm_75 ... sm_121); room to spare. */
#define MAX_ARCHS 64

typedef struct {
  void *handle;
  char path[512];  /* the name that loaded, for messages */
  get_error_string_fn get_error_string;
  version_fn version;
  get_num_supported_archs_fn get_num_supported_archs;
  get_supported_archs_fn get_supported_archs;
  create_program_fn create_program;
  destroy_program_fn destroy_program;
  compile_program_fn compile_program;
  get_size_fn get_log_size, get_cubin_size, get_ptx_size;
  get_bytes_fn get_log, get_cubin, get_ptx;
  add_name_expression_fn add_name_expression;
  get_lowered_name_fn get_lowered_name;
  int archs[MAX_ARCHS];  /* ascending, as NVRTC lists them */
  int n_archs;
} nvrtc_api;

/* Loaded once per process, under the mutex; a mutex rather than pthread_once so that the
 * tests can forget a load and try again with another $AKX_NVRTC_LIBRARY. The functions are
 * read without it afterwards: every reader took the mutex after they were written. */
static pthread_mutex_t api_mutex = PTHREAD_MUTEX_INITIALIZER;
static int api_tried;
static akx_status api_status;
static char api_error[1024];
static nvrtc_api api;
/* The driver's version as a test told it (akx__nvrtc_driver_version_for_tests), -1: not told. */
static int driver_version_told = -1;

/* The same flags nvcc gets for the built-in kernels, as C string literals: CMakeLists.txt
 * writes AKX_NVRTC_EXACT_OPTIONS from its AKX_CUDA_EXACT_FLAGS list, so there is one list. */
#ifndef AKX_NVRTC_EXACT_OPTIONS
#error "AKX_NVRTC_EXACT_OPTIONS is set by CMakeLists.txt from AKX_CUDA_EXACT_FLAGS: build with CMake or pass -DAKX_NVRTC_EXACT_OPTIONS='\"--fmad=false\", ...'"
#endif
static const char *const exact_options[] = {AKX_NVRTC_EXACT_OPTIONS};
#define N_EXACT_OPTIONS ((int)(sizeof exact_options / sizeof exact_options[0]))

/* ---- loading ---------------------------------------------------------------------------------- */

/* Newest major first; libnvrtc.so.11.2 is the soname of every NVRTC 11 (11.2 to 11.8), found
 * so that the sentence can say it is too old; libnvrtc.so, a development symlink, may be any. */
static const char *const library_names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2",
                                            "libnvrtc.so"};
#define N_LIBRARY_NAMES ((int)(sizeof library_names / sizeof library_names[0]))

/* A malloc'd copy of s (strdup is POSIX, not C11). */
static char *copy_string(const char *s) {
  size_t n = strlen(s) + 1;
  char *copy = malloc(n);
  if (copy) memcpy(copy, s, n);
  return copy;
}

/* Appends the formatted text to the buffer, truncating quietly: the sentence is for people. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void appendf(char *buf, size_t cap, const char *fmt, ...) {
  size_t used = strlen(buf);
  if (used + 1 >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + used, cap - used, fmt, ap);
  va_end(ap);
}

/* ---- which NVRTC: the driver decides ---------------------------------------------------------- */

static int below_minimum(const akx__nvrtc_found *f) {
  return f->major < AKX__NVRTC_MIN_MAJOR || (f->major == AKX__NVRTC_MIN_MAJOR && f->minor < AKX__NVRTC_MIN_MINOR);
}

int akx__cuda_driver_version(void) {
  /* Asked once per process (NVRTC is loaded once); the handle is kept, as the CUDA runtime
   * keeps its own. */
  void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (!cuda) cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!cuda) return 0;
  int (*get)(int *) = NULL;
  *(void **)&get = dlsym(cuda, "cuDriverGetVersion");
  int version = 0;
  if (!get || get(&version) != 0) version = 0;
  return version;
}

int akx__nvrtc_choose(int driver_version, const akx__nvrtc_found *found, int n, int from_env,
                      char *why, size_t cap) {
  const int driver_major = driver_version / 1000, driver_minor = driver_version % 1000 / 10;
  int best = -1;
  for (int i = 0; i < n; i++) {
    const akx__nvrtc_found *f = &found[i];
    if (below_minimum(f) || (driver_version > 0 && f->major > driver_major)) continue;
    if (best < 0) {
      best = i;
      continue;
    }
    const akx__nvrtc_found *b = &found[best];
    /* The driver's own major first, then the newest. */
    const int f_own = driver_version > 0 && f->major == driver_major;
    const int b_own = driver_version > 0 && b->major == driver_major;
    if (f_own != b_own ? f_own : (f->major != b->major ? f->major > b->major : f->minor > b->minor)) best = i;
  }
  if (best >= 0) return best;

  if (!why || cap == 0) return -1;
  why[0] = '\0';
  if (n <= 0) {
    appendf(why, cap, "no libnvrtc was found");
    return -1;
  }
  for (int i = 0; i < n; i++) {
    const akx__nvrtc_found *f = &found[i];
    appendf(why, cap, "%s%s%s is NVRTC %d.%d, ", i ? "; " : "", from_env ? "AKX_NVRTC_LIBRARY=" : "",
            f->path, f->major, f->minor);
    if (below_minimum(f))
      appendf(why, cap, "older than %d.%d, the oldest that compiles libakx's kernel headers", AKX__NVRTC_MIN_MAJOR,
              AKX__NVRTC_MIN_MINOR);
    else
      appendf(why, cap,
              "newer than the driver (CUDA %d.%d), which can load neither its cubins nor its PTX "
              "(a driver runs the code of its own CUDA major and older ones)",
              driver_major, driver_minor);
  }
  if (driver_version > 0 && driver_major >= AKX__NVRTC_MIN_MAJOR) {
    const int oldest_minor = driver_major == AKX__NVRTC_MIN_MAJOR ? AKX__NVRTC_MIN_MINOR : 0;
    appendf(why, cap, "; %s an NVRTC of CUDA %d (%d.%d or newer)%s", from_env ? "set AKX_NVRTC_LIBRARY to" : "install",
            driver_major, driver_major, oldest_minor, from_env ? "" : ", or set AKX_NVRTC_LIBRARY to its path");
  }
  else if (driver_version > 0)
    appendf(why, cap, "; libakx needs NVRTC %d.%d or newer, and so a CUDA %d driver or newer", AKX__NVRTC_MIN_MAJOR,
            AKX__NVRTC_MIN_MINOR, AKX__NVRTC_MIN_MAJOR);
  else
    appendf(why, cap, "; %s NVRTC %d.%d or newer", from_env ? "set AKX_NVRTC_LIBRARY to" : "install",
            AKX__NVRTC_MIN_MAJOR, AKX__NVRTC_MIN_MINOR);
  return -1;
}

/* ---- loading ---------------------------------------------------------------------------------- */

/* Resolves every entry point of api.handle; 0 with api_error set when one is missing. */
static int resolve(void) {
  static const struct { const char *name; size_t offset; } symbols[] = {
#define SYM(field, name) {name, offsetof(nvrtc_api, field)}
    SYM(get_error_string, "nvrtcGetErrorString"),
    SYM(version, "nvrtcVersion"),
    SYM(get_num_supported_archs, "nvrtcGetNumSupportedArchs"),
    SYM(get_supported_archs, "nvrtcGetSupportedArchs"),
    SYM(create_program, "nvrtcCreateProgram"),
    SYM(destroy_program, "nvrtcDestroyProgram"),
    SYM(compile_program, "nvrtcCompileProgram"),
    SYM(get_log_size, "nvrtcGetProgramLogSize"),
    SYM(get_log, "nvrtcGetProgramLog"),
    SYM(get_cubin_size, "nvrtcGetCUBINSize"),
    SYM(get_cubin, "nvrtcGetCUBIN"),
    SYM(get_ptx_size, "nvrtcGetPTXSize"),
    SYM(get_ptx, "nvrtcGetPTX"),
    SYM(add_name_expression, "nvrtcAddNameExpression"),
    SYM(get_lowered_name, "nvrtcGetLoweredName"),
#undef SYM
  };
  for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
    void *f = dlsym(api.handle, symbols[i].name);
    if (!f) {
      snprintf(api_error, sizeof api_error,
               "NVRTC is not available: %s has no %s (NVRTC %d.%d or newer is needed); set "
               "AKX_NVRTC_LIBRARY to the path of a newer libnvrtc",
               api.path, symbols[i].name, AKX__NVRTC_MIN_MAJOR, AKX__NVRTC_MIN_MINOR);
      return 0;
    }
    /* POSIX guarantees a function pointer survives the trip through void *. */
    memcpy((char *)&api + symbols[i].offset, &f, sizeof f);
  }
  int n = 0;
  if (api.get_num_supported_archs(&n) != NVRTC_OK || n <= 0 || n > MAX_ARCHS ||
      api.get_supported_archs(api.archs) != NVRTC_OK) {
    snprintf(api_error, sizeof api_error,
             "NVRTC is not available: %s did not list the architectures it supports (%d)",
             api.path, n);
    return 0;
  }
  api.n_archs = n;
  return 1;
}

/* A library that loaded, and what it said its version is. */
#define MAX_CANDIDATES (2 * N_LIBRARY_NAMES)
typedef struct {
  void *handle;
  char path[512];
  akx__nvrtc_found found;
} candidate;

/* Opens path and asks its version; 0 with *why (cap bytes) saying why not. A library loaded
 * already under another name (libnvrtc.so -> libnvrtc.so.13, or the same file through the
 * loader's search and the toolkit's directory) is the same handle: closed again, it counts once. */
static int open_candidate(const char *path, candidate *cands, int *n, char *why, size_t cap) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    snprintf(why, cap, "%s", e ? e : "no reason given");
    return 0;
  }
  for (int i = 0; i < *n; i++)
    if (cands[i].handle == h) {
      dlclose(h);
      return 1;
    }
  version_fn version = NULL;
  void *f = dlsym(h, "nvrtcVersion");
  memcpy(&version, &f, sizeof f);
  int major = 0, minor = 0;
  if (!version || version(&major, &minor) != NVRTC_OK) {
    snprintf(why, cap, "%s has no working nvrtcVersion", path);
    dlclose(h);
    return 0;
  }
  if (*n >= MAX_CANDIDATES) { /* (the names and directories make at most this many) */
    dlclose(h);
    return 1;
  }
  candidate *c = &cands[(*n)++];
  c->handle = h;
  snprintf(c->path, sizeof c->path, "%s", path);
  c->found.major = major;
  c->found.minor = minor;
  return 1;
}

/* Sets api_status and api_error; called once under the mutex. */
static void load(void) {
  memset(&api, 0, sizeof api);
  api_error[0] = '\0';
  api_status = AKX_ERROR_UNSUPPORTED;
  candidate cands[MAX_CANDIDATES];
  int n = 0;
  char reason[512] = "";
  const char *env = getenv("AKX_NVRTC_LIBRARY");
  const int from_env = env && *env;
  if (from_env) {
    if (!open_candidate(env, cands, &n, reason, sizeof reason)) {
      snprintf(api_error, sizeof api_error,
               "NVRTC is not available: dlopen of AKX_NVRTC_LIBRARY=%s failed: %s", env, reason);
      return;
    }
  } else {
    char tried[768] = "";
    const char *dirs[] = {
        NULL, /* the loader's own search: LD_LIBRARY_PATH, the ld.so cache, RUNPATH */
#ifdef AKX_CUDA_LIB_DIR
        AKX_CUDA_LIB_DIR, /* the toolkit this build was configured with */
#endif
    };
    /* Every name is tried, not the first that loads: the driver chooses among them. */
    for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++)
      for (int i = 0; i < N_LIBRARY_NAMES; i++) {
        char path[512];
        if (dirs[d])
          snprintf(path, sizeof path, "%s/%s", dirs[d], library_names[i]);
        else
          snprintf(path, sizeof path, "%s", library_names[i]);
        if (open_candidate(path, cands, &n, reason, sizeof reason)) continue;
        appendf(tried, sizeof tried, "%s%s", tried[0] ? ", " : "", path);
      }
    if (n == 0) {
      snprintf(api_error, sizeof api_error,
               "NVRTC is not available: dlopen of %s failed: %s; set AKX_NVRTC_LIBRARY to its path",
               tried, reason[0] ? reason : "no reason given");
      return;
    }
  }
  akx__nvrtc_found found[MAX_CANDIDATES];
  for (int i = 0; i < n; i++) {
    found[i] = cands[i].found;
    found[i].path = cands[i].path;
  }
  char why[768];
  const int driver = driver_version_told >= 0 ? driver_version_told : akx__cuda_driver_version();
  const int chosen = akx__nvrtc_choose(driver, found, n, from_env, why, sizeof why);
  for (int i = 0; i < n; i++)
    if (i != chosen) dlclose(cands[i].handle);
  if (chosen < 0) {
    snprintf(api_error, sizeof api_error, "NVRTC is not usable: %s", why);
    return;
  }
  api.handle = cands[chosen].handle;
  snprintf(api.path, sizeof api.path, "%s", cands[chosen].path);
  if (!resolve()) {
    dlclose(api.handle);
    memset(&api, 0, sizeof api);
    return;
  }
  api_status = AKX_SUCCESS;
}

static akx_status ensure_loaded(void) {
  pthread_mutex_lock(&api_mutex);
  if (!api_tried) {
    load();
    api_tried = 1;
  }
  akx_status s = api_status;
  pthread_mutex_unlock(&api_mutex);
  if (s != AKX_SUCCESS) return akx__fail(s, "%s", api_error);
  return AKX_SUCCESS;
}

void akx__nvrtc_reset_for_tests(void) {
  pthread_mutex_lock(&api_mutex);
  if (api.handle) dlclose(api.handle);
  memset(&api, 0, sizeof api);
  api_tried = 0;
  api_status = AKX_SUCCESS;
  api_error[0] = '\0';
  pthread_mutex_unlock(&api_mutex);
}

void akx__nvrtc_driver_version_for_tests(int version) {
  pthread_mutex_lock(&api_mutex);
  driver_version_told = version < 0 ? -1 : version;
  pthread_mutex_unlock(&api_mutex);
}

akx_status akx__nvrtc_available(void) { return ensure_loaded(); }

akx_status akx__nvrtc_unit_key(const char *what, int arch, int n_options, const char *const *options,
                               const char *text, akx__jit_key *key) {
  int major = 0, minor = 0;
  AKX_TRY(akx__nvrtc_version(&major, &minor));
  akx__jit_hasher h;
  akx__jit_key_begin(&h);
  akx__jit_key_add_str(&h, what);
  akx__jit_key_add_str(&h, akx_version());
  akx__jit_key_add(&h, &major, sizeof major);
  akx__jit_key_add(&h, &minor, sizeof minor);
  akx__jit_key_add(&h, &arch, sizeof arch);
  for (size_t i = 0; i < sizeof exact_options / sizeof exact_options[0]; ++i) akx__jit_key_add_str(&h, exact_options[i]);
  for (int i = 0; i < n_options; ++i) akx__jit_key_add_str(&h, options[i]);
  akx__jit_key_add_str(&h, text);
  akx__jit_key_add_headers(&h);
  akx__jit_key_end(&h, key);
  return AKX_SUCCESS;
}

akx_status akx__nvrtc_version(int *major, int *minor) {
  if (!major || !minor) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "akx__nvrtc_version: null output");
  AKX_TRY(ensure_loaded());
  nvrtc_result r = api.version(major, minor);
  if (r != NVRTC_OK)
    return akx__fail(AKX_ERROR_DEVICE, "nvrtcVersion failed: %s", api.get_error_string(r));
  return AKX_SUCCESS;
}

akx_status akx__nvrtc_supported_archs(int *archs, int capacity, int *count) {
  if (!count || capacity < 0 || (capacity > 0 && !archs))
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "akx__nvrtc_supported_archs: null output");
  AKX_TRY(ensure_loaded());
  for (int i = 0; i < api.n_archs && i < capacity; i++) archs[i] = api.archs[i];
  *count = api.n_archs;
  return AKX_SUCCESS;
}

/* ---- compiling -------------------------------------------------------------------------------- */

/* The target for arch: sm_<arch> when NVRTC knows it (compute_<arch> if PTX is asked for),
 * else compute_ of the newest it knows below arch. 0 when arch is below them all. */
static int choose_arch(int arch, int want_ptx, int *is_ptx) {
  int best = 0;
  for (int i = 0; i < api.n_archs; i++) {
    if (api.archs[i] == arch) {
      *is_ptx = want_ptx != 0;
      return arch;
    }
    if (api.archs[i] < arch && api.archs[i] > best) best = api.archs[i];
  }
  *is_ptx = 1;
  return best;
}

/* The log's first line that reports an error, else its first non-empty line, copied into
 * buf. NVRTC heads a diagnostic "prog(3): error: ...", "prog(1): catastrophic error: ..." or
 * "nvrtc: error: ..." (a bad option); the kind follows the location, because a warning's
 * text may hold "error" too ("prog(2): warning #1105-D: #warning directive: error: ..."). */
static void first_error_line(const char *log, char *buf, size_t cap) {
  const char *pick = NULL, *first = NULL;
  for (const char *line = log; *line;) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    if (len > 0 && !first) first = line;
    const char *hit = strstr(line, "): error");
    if (!hit) hit = strstr(line, "): catastrophic error");
    if (!hit && strncmp(line, "nvrtc: error", 12) == 0) hit = line;
    if (hit && hit < line + len) {
      pick = line;
      break;
    }
    line += len + (end ? 1 : 0);
  }
  if (!pick) pick = first;
  buf[0] = '\0';
  if (!pick) return;
  size_t len = strcspn(pick, "\n");
  if (len >= cap) len = cap - 1;
  memcpy(buf, pick, len);
  buf[len] = '\0';
}

static int is_arch_option(const char *opt) {
  return strncmp(opt, "-arch", 5) == 0 || strncmp(opt, "--gpu-architecture", 18) == 0;
}

static akx_status check_request(const akx__nvrtc_request *rq, akx__nvrtc_result *out) {
  if (!rq || !out) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "akx__nvrtc_compile: null request or result");
  if (!rq->source) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "akx__nvrtc_compile: no source");
  if (rq->n_headers < 0 || rq->n_options < 0 || rq->n_names < 0)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "akx__nvrtc_compile: a negative count");
  if (rq->n_headers > 0 && (!rq->header_sources || !rq->header_names))
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "akx__nvrtc_compile: %d headers but no arrays", rq->n_headers);
  if (rq->n_options > 0 && !rq->options)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "akx__nvrtc_compile: %d options but no array", rq->n_options);
  if (rq->n_names > 0 && !rq->name_expressions)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "akx__nvrtc_compile: %d name expressions but no array", rq->n_names);
  for (int i = 0; i < rq->n_headers; i++)
    if (!rq->header_sources[i] || !rq->header_names[i])
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "akx__nvrtc_compile: header %d is null", i);
  for (int i = 0; i < rq->n_options; i++) {
    if (!rq->options[i]) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "akx__nvrtc_compile: option %d is null", i);
    if (is_arch_option(rq->options[i]))
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                       "akx__nvrtc_compile: option '%s' chooses the architecture, which the "
                       "request's arch (and want_ptx) does",
                       rq->options[i]);
  }
  for (int i = 0; i < rq->n_names; i++)
    if (!rq->name_expressions[i])
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "akx__nvrtc_compile: name expression %d is null", i);
  if (rq->arch < 10 || rq->arch > 9999)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "akx__nvrtc_compile: arch %d is not a compute capability as 10*major+minor (90 for sm_90)",
                     rq->arch);
  return AKX_SUCCESS;
}

/* NVRTC's status after a call other than the compile itself. */
static akx_status nvrtc_fail(nvrtc_result r, const char *call, const char *name) {
  akx_status s = r == NVRTC_OUT_OF_MEMORY ? AKX_ERROR_OUT_OF_MEMORY : AKX_ERROR_DEVICE;
  return akx__fail(s, "%s failed for %s: %s", call, name, api.get_error_string(r));
}

/* Copies the program's log into out->log ("" when NVRTC wrote none). */
static akx_status take_log(nvrtc_program prog, const char *name, akx__nvrtc_result *out) {
  size_t size = 0;
  nvrtc_result r = api.get_log_size(prog, &size);
  if (r != NVRTC_OK) return nvrtc_fail(r, "nvrtcGetProgramLogSize", name);
  out->log = malloc(size + 1);
  if (!out->log) return akx__fail(AKX_ERROR_OUT_OF_MEMORY, "no memory for the %zu-byte log of %s", size, name);
  out->log[0] = '\0';
  if (size > 0) {
    r = api.get_log(prog, out->log);
    if (r != NVRTC_OK) return nvrtc_fail(r, "nvrtcGetProgramLog", name);
  }
  out->log[size] = '\0';
  return AKX_SUCCESS;
}

static akx_status take_image(nvrtc_program prog, const char *name, akx__nvrtc_result *out) {
  get_size_fn get_size = out->is_ptx ? api.get_ptx_size : api.get_cubin_size;
  get_bytes_fn get = out->is_ptx ? api.get_ptx : api.get_cubin;
  const char *what = out->is_ptx ? "nvrtcGetPTX" : "nvrtcGetCUBIN";
  size_t size = 0;
  nvrtc_result r = get_size(prog, &size);
  if (r != NVRTC_OK) return nvrtc_fail(r, what, name);
  if (size == 0) return akx__fail(AKX_ERROR_DEVICE, "%s gave an empty image for %s", what, name);
  out->image = malloc(size);
  if (!out->image) return akx__fail(AKX_ERROR_OUT_OF_MEMORY, "no memory for the %zu-byte image of %s", size, name);
  r = get(prog, out->image);
  if (r != NVRTC_OK) return nvrtc_fail(r, what, name);
  out->size = size;
  return AKX_SUCCESS;
}

static akx_status take_lowered_names(nvrtc_program prog, const akx__nvrtc_request *rq,
                                     const char *name, akx__nvrtc_result *out) {
  if (rq->n_names == 0) return AKX_SUCCESS;
  out->lowered_names = calloc((size_t)rq->n_names, sizeof *out->lowered_names);
  if (!out->lowered_names) return akx__fail(AKX_ERROR_OUT_OF_MEMORY, "no memory for %d lowered names", rq->n_names);
  out->n_lowered_names = rq->n_names;
  for (int i = 0; i < rq->n_names; i++) {
    const char *lowered = NULL;
    nvrtc_result r = api.get_lowered_name(prog, rq->name_expressions[i], &lowered);
    if (r == NVRTC_NAME_EXPRESSION_NOT_VALID || (r == NVRTC_OK && !lowered))
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "name expression '%s' names nothing %s defines",
                       rq->name_expressions[i], name);
    if (r != NVRTC_OK) return nvrtc_fail(r, "nvrtcGetLoweredName", name);
    out->lowered_names[i] = copy_string(lowered);
    if (!out->lowered_names[i]) return akx__fail(AKX_ERROR_OUT_OF_MEMORY, "no memory for a lowered name");
  }
  return AKX_SUCCESS;
}

/* Everything between creating the program and destroying it; *out is partly filled on failure. */
static akx_status compile_program(nvrtc_program prog, const akx__nvrtc_request *rq, const char *name,
                                  const char *arch_option, akx__nvrtc_result *out) {
  for (int i = 0; i < rq->n_names; i++) {
    nvrtc_result r = api.add_name_expression(prog, rq->name_expressions[i]);
    if (r != NVRTC_OK) return nvrtc_fail(r, "nvrtcAddNameExpression", name);
  }

  int n_options = 1 + N_EXACT_OPTIONS + rq->n_options;
  const char **options = malloc((size_t)n_options * sizeof *options);
  if (!options) return akx__fail(AKX_ERROR_OUT_OF_MEMORY, "no memory for %d options", n_options);
  options[0] = arch_option;
  for (int i = 0; i < N_EXACT_OPTIONS; i++) options[1 + i] = exact_options[i];
  for (int i = 0; i < rq->n_options; i++) options[1 + N_EXACT_OPTIONS + i] = rq->options[i];
  nvrtc_result compiled = api.compile_program(prog, n_options, options);
  free(options);

  /* The log first: it is wanted whether or not the compile worked. */
  AKX_TRY(take_log(prog, name, out));
  akx__compile_log_set(out->log);
  if (compiled == NVRTC_COMPILATION || compiled == NVRTC_INVALID_OPTION) {
    char line[768];
    first_error_line(out->log, line, sizeof line);
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "NVRTC could not compile %s for %s: %s", name,
                     arch_option + strlen("-arch="), line[0] ? line : api.get_error_string(compiled));
  }
  if (compiled == NVRTC_BUILTIN_OPERATION_FAILURE)
    return akx__fail(AKX_ERROR_UNSUPPORTED,
                     "NVRTC (%s) could not compile %s: %s (is libnvrtc-builtins beside it?)",
                     api.path, name, api.get_error_string(compiled));
  if (compiled != NVRTC_OK) return nvrtc_fail(compiled, "nvrtcCompileProgram", name);

  AKX_TRY(take_image(prog, name, out));
  return take_lowered_names(prog, rq, name, out);
}

akx_status akx__nvrtc_compile(const akx__nvrtc_request *rq, akx__nvrtc_result *out) {
  if (out) memset(out, 0, sizeof *out);
  AKX_TRY(check_request(rq, out));
  /* A log from an earlier compile must not pass for this one's. */
  akx__compile_log_set(NULL);
  AKX_TRY(ensure_loaded());

  const char *name = rq->name ? rq->name : "akx_jit.cu";
  int is_ptx = 0;
  int arch = choose_arch(rq->arch, rq->want_ptx, &is_ptx);
  if (arch == 0)
    return akx__fail(AKX_ERROR_UNSUPPORTED,
                     "NVRTC %s builds for sm_%d to sm_%d; the device is sm_%d, older than all of them",
                     api.path, api.archs[0], api.archs[api.n_archs - 1], rq->arch);
  char arch_option[32];
  snprintf(arch_option, sizeof arch_option, "-arch=%s_%d", is_ptx ? "compute" : "sm", arch);
  out->is_ptx = is_ptx;
  out->arch_compiled = arch;

  nvrtc_program prog = NULL;
  nvrtc_result r = api.create_program(&prog, rq->source, name, rq->n_headers, rq->header_sources,
                                      rq->header_names);
  if (r != NVRTC_OK) return nvrtc_fail(r, "nvrtcCreateProgram", name);
  akx_status s = compile_program(prog, rq, name, arch_option, out);
  api.destroy_program(&prog);
  if (s != AKX_SUCCESS) akx__nvrtc_result_free(out);
  return s;
}

void akx__nvrtc_result_free(akx__nvrtc_result *r) {
  if (!r) return;
  free(r->image);
  if (r->lowered_names)
    for (int i = 0; i < r->n_lowered_names; i++) free(r->lowered_names[i]);
  free(r->lowered_names);
  free(r->log);
  memset(r, 0, sizeof *r);
}

akx_status akx__nvrtc_compile_unit(akx__nvrtc_request *rq, akx__nvrtc_result *out) {
  const char **names, **texts;
  if (!akx__embedded_arrays(&names, &texts)) return akx__fail(AKX_ERROR_OUT_OF_MEMORY, "out of host memory");
  rq->n_headers = akx__embedded_file_count;
  rq->header_sources = texts;
  rq->header_names = names;
  const akx_status s = akx__nvrtc_compile(rq, out);
  free((void *)names);
  free((void *)texts);
  rq->n_headers = 0;
  rq->header_sources = rq->header_names = NULL;
  return s;
}
