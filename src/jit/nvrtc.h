/* Run-time compilation of CUDA C++ through NVRTC, for kernels built for the device's own
 * architecture. libnvrtc is opened with dlopen on the first call that needs it, never linked:
 * a program that never compiles at run time runs where no CUDA toolkit is installed.
 *
 * Where libnvrtc is looked for: $AKX_NVRTC_LIBRARY alone when it is set (a path; a setting
 * that does not load is an error, not a cue to pick some other NVRTC), else libnvrtc.so.13,
 * libnvrtc.so.12, libnvrtc.so.11.2 (every NVRTC 11's soname) and libnvrtc.so through the
 * loader's search, then the same names in the toolkit library directory this build was
 * configured with (CMake's CUDAToolkit_LIBRARY_DIR). Each library that loads is asked its
 * version (nvrtcVersion: an unversioned libnvrtc.so may be any major), and one is chosen by
 * the CUDA driver's version (akx__nvrtc_choose, below); the others are closed again. The
 * library named by $AKX_NVRTC_LIBRARY is checked by the same rule. The outcome is kept for the
 * life of the process; every call after a failed load returns AKX_ERROR_UNSUPPORTED with the
 * sentence naming what was tried and why each library was passed over.
 *
 * Every compile passes the library's exact-arithmetic flags first (no FMA contraction, IEEE
 * division and square root, no flush to zero: the list AKX_CUDA_EXACT_FLAGS in CMakeLists.txt,
 * which nvcc gets for the built-in kernels), then the caller's options. */
#ifndef AKX_JIT_NVRTC_H
#define AKX_JIT_NVRTC_H
#include <stddef.h>
#include "akx.h"
#include "cache.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  const char *source;                 /* the program's text */
  const char *name;                   /* its file name in the log's messages; NULL: "akx_jit.cu" */
  int n_headers;                      /* headers the program may #include, given as text */
  const char *const *header_sources;
  const char *const *header_names;    /* the name an #include uses, e.g. "scan_tile.cuh" */
  int n_options;                      /* extra NVRTC options, e.g. "-DNT=256", "-std=c++17"; */
  const char *const *options;         /* not -arch / --gpu-architecture: `arch` chooses it */
  int n_names;                        /* expressions whose mangled names the caller wants, */
  const char *const *name_expressions;/* e.g. "akx::scan_tile_kernel<float, 256>" */
  int arch;                           /* the device's compute capability, 10*major+minor: 90 */
  int want_ptx;                       /* nonzero: PTX for compute_<arch> even where NVRTC could
                                         build a cubin for it */
} akx__nvrtc_request;

typedef struct {
  void *image;          /* a cubin (ELF) or PTX text (NUL-terminated; size counts the NUL) */
  size_t size;
  int is_ptx;
  int n_lowered_names;  /* = the request's n_names */
  char **lowered_names; /* the mangled name of each name expression, in the request's order */
  char *log;            /* NVRTC's whole log, warnings included; "" when it said nothing */
  int arch_compiled;    /* the architecture of the image, 10*major+minor */
} akx__nvrtc_result;

/* The oldest NVRTC libakx takes: the oldest that compiles the embedded kernel headers. NVRTC
 * 11.8 to 12.2 refuse kernels/akx/std.cuh's __builtin_bit_cast ("type name is not allowed");
 * 12.3 compiles every family (bench/RESULTS.md, "The oldest NVRTC"). sm_90 alone would need
 * 11.8. */
#define AKX__NVRTC_MIN_MAJOR 12
#define AKX__NVRTC_MIN_MINOR 3

/* A library the loader opened, and the version its nvrtcVersion reported. */
typedef struct {
  const char *path;
  int major, minor;
} akx__nvrtc_found;

/* Which NVRTC to use, given the CUDA driver's version (cudaDriverGetVersion's 1000 * major +
 * 10 * minor, 12040 for 12.4; 0 when there is no driver) and the n libraries found: the index
 * of the chosen one, or -1 with a sentence in why (cap bytes) saying why each was passed over.
 * The rule, from NVIDIA's CUDA Compatibility guide:
 *  - never an NVRTC below AKX__NVRTC_MIN_MAJOR.AKX__NVRTC_MIN_MINOR;
 *  - never one of a newer major than the driver: a driver runs what toolkits of its own major
 *    and older build (minor version compatibility reaches within a major only; a newer major
 *    needs the forward-compatibility package of data-center GPUs), so a 12.x driver cannot
 *    load NVRTC 13's cubins, nor JIT-compile its PTX (ISA 9.0);
 *  - the driver's own major first, the newest minor of it: its cubins load under minor version
 *    compatibility even when the minor is newer than the driver's; its PTX (made only for a
 *    device newer than every architecture that NVRTC knows, hence from an NVRTC older than
 *    the driver) the driver compiles;
 *  - else the newest of an older major: drivers run older toolkits' cubins and PTX (backward
 *    compatibility), and the architecture ladder of akx__nvrtc_compile gives a device that NVRTC
 *    does not know the PTX of the newest architecture it does;
 *  - with no driver (the sim, CI), the newest.
 * from_env: the one library is $AKX_NVRTC_LIBRARY (the sentence says so). */
int akx__nvrtc_choose(int driver_version, const akx__nvrtc_found *found, int n, int from_env,
                      char *why, size_t cap);

/* The CUDA driver's version as cuDriverGetVersion gives it (12040 for 12.4), 0 when there is no
 * driver: asked of libcuda.so.1 through dlopen, as libnvrtc is opened, so that src/jit needs
 * neither a CUDA header nor the CUDA backend (a sim-only build has none). */
int akx__cuda_driver_version(void);

/* AKX_SUCCESS when libnvrtc loads (loading it on the first call), else AKX_ERROR_UNSUPPORTED
 * with akx_last_error() naming every library tried and the loader's last complaint. */
akx_status akx__nvrtc_available(void);

/* The loaded NVRTC's version, e.g. 13 and 0. */
akx_status akx__nvrtc_version(int *major, int *minor);

/* The architectures the loaded NVRTC can build a cubin for, ascending (75, 80, ... for NVRTC
 * 13). Writes at most `capacity` of them and their total count into *count. */
akx_status akx__nvrtc_supported_archs(int *archs, int capacity, int *count);

/* Compiles rq into *out (zeroed first; freed with akx__nvrtc_result_free on success; on
 * failure nothing is left to free). The image is
 *   - a cubin for sm_<arch> when NVRTC supports that architecture and want_ptx is zero;
 *   - PTX for compute_<arch> when want_ptx is set (and NVRTC supports arch);
 *   - PTX for the newest architecture NVRTC supports below arch, for a device NVRTC does not
 *     know (newer than it, or between two it knows): the driver compiles that PTX for the
 *     device when it loads it;
 * and arch_compiled says which. An architecture below every one NVRTC supports is
 * AKX_ERROR_UNSUPPORTED. A program that does not compile is AKX_ERROR_INVALID_ARGUMENT with
 * akx_last_error() holding the log's first error line (file and line number: "prog(3): error:
 * ..."); the whole log is then in akx__compile_log_get(). Every compile, failed or not, leaves
 * its log there. NVRTC out of memory is AKX_ERROR_OUT_OF_MEMORY, NVRTC without its builtins
 * library AKX_ERROR_UNSUPPORTED, and its other failures AKX_ERROR_DEVICE with its error
 * string. Compiles on different threads run concurrently, each program its own. */
akx_status akx__nvrtc_compile(const akx__nvrtc_request *rq, akx__nvrtc_result *out);

/* The kernel cache's key (src/jit/cache.h) of a unit that NVRTC compiles against the
 * embedded kernel headers: `what` (the kind of unit, so that two kinds never share a key),
 * libakx's version, the loaded NVRTC's version (NVRTC is loaded for it), the architecture,
 * the exact-arithmetic flags and the caller's options, the text, and every embedded header. */
akx_status akx__nvrtc_unit_key(const char *what, int arch, int n_options, const char *const *options,
                               const char *text, akx__jit_key *key);

/* akx__nvrtc_compile of a unit that includes the embedded kernel headers (src/jit/embedded.h):
 * rq's n_headers, header_sources and header_names are set to them, the rest is the caller's. */
akx_status akx__nvrtc_compile_unit(akx__nvrtc_request *rq, akx__nvrtc_result *out);

/* Frees what a successful compile put in *r and zeroes it; a zeroed result is a no-op. */
void akx__nvrtc_result_free(akx__nvrtc_result *r);

/* Tests only, with no compile in flight: closes libnvrtc and forgets the outcome of loading
 * it, so that the next call reads $AKX_NVRTC_LIBRARY again. */
void akx__nvrtc_reset_for_tests(void);
/* Tests only: the loader's next load takes `version` as the CUDA driver's (what
 * akx__cuda_driver_version answers: 12040 for 12.4, 0 for no driver); -1 asks the driver again.
 * So that tests/test_nvrtc_choice.c shows the loader choosing by the driver's version on a
 * machine with no driver. Not reset by akx__nvrtc_reset_for_tests. */
void akx__nvrtc_driver_version_for_tests(int version);

#ifdef __cplusplus
}
#endif
#endif
