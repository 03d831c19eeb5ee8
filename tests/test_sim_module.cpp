// Kernels the sim compiles at run time (src/jit/sim_module.h, AKX_KERNELS=runtime), one unit
// per combination (src/jit/builtin_instance.h):
// - a unit's entry calls the family's launcher (the family list, src/core/families.h) after
//   the kernels the instance generator instantiates;
// - a run-time kernel gives the prebuilt one's bits and the same sim counters (launches,
//   blocks, requests, sectors, wavefronts) on a strided 3-d reduction along dims, a whole
//   reduction and a scan along the middle dim;
// - it is compiled once per process (a second context hits memory), once per machine (a new
//   process, played by a cache reset, hits the disk), again when the file is truncated;
// - a missing compiler and a misspelt AKX_KERNELS are refused with a sentence.
// Criterion runs each test in its own process, so the environment each sets is its own.
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "akx.h"
#include "akx_sim.h"
extern "C" {
#include "src/jit/builtin_instance.h"
#include "src/jit/cache.h"
#include "src/jit/sim_module.h"
}

namespace {

std::string fresh_cache_dir() {
  char dir[] = "/tmp/akx-sim-module-test.XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  setenv("AKX_CACHE_DIR", dir, 1);
  akx__jit_cache_reset_for_tests();
  return dir;
}

void remove_dir(const std::string &dir) {
  if (DIR *d = opendir(dir.c_str())) {
    for (dirent *e; (e = readdir(d));)
      if (e->d_name[0] != '.') unlink((dir + "/" + e->d_name).c_str());
    closedir(d);
  }
  rmdir(dir.c_str());
}

akx_context *open_sim(const char *kernels) {
  setenv("AKX_KERNELS", kernels, 1);
  akx_context *ctx = nullptr;
  cr_assert_eq(akx_context_create(&ctx, AKX_BACKEND_SIM, 0), AKX_SUCCESS, "%s", akx_last_error());
  return ctx;
}

akx_array view(void *data, akx_dtype t, std::vector<int64_t> shape, std::vector<int64_t> strides) {
  akx_array a{};
  a.data = data;
  a.dtype = t;
  a.ndim = (int32_t)shape.size();
  for (size_t d = 0; d < shape.size(); ++d) {
    a.shape[d] = shape[d];
    a.strides[d] = strides[d];
  }
  return a;
}

// What one context computes and counts: a float32 sum along dims 0 and 2 of a 7 x 33 x 20
// view with a gap (strides 1000, 30, 1), the whole view's sum as float64, and a MUL scan
// (float32) along dim 1; the outputs' bytes and the totals of the sim's counters.
struct outcome {
  std::vector<unsigned char> dims, whole, scan;
  akx_sim_kernel_counters counters;
};

outcome run_families(akx_context *ctx) {
  const int64_t n = 7 * 1000;
  std::vector<float> host((size_t)n);
  for (int64_t i = 0; i < n; ++i) host[(size_t)i] = (float)((i * 37) % 101 - 50) / 8.0f + (i % 3 == 0 ? 1e-3f : 0);
  void *src = nullptr, *dims = nullptr, *whole = nullptr, *scan = nullptr;
  cr_assert_eq(akx_malloc(ctx, &src, n * sizeof(float)), AKX_SUCCESS);
  cr_assert_eq(akx_malloc(ctx, &dims, 33 * sizeof(float)), AKX_SUCCESS);
  cr_assert_eq(akx_malloc(ctx, &whole, sizeof(double)), AKX_SUCCESS);
  cr_assert_eq(akx_malloc(ctx, &scan, 7 * 33 * 20 * sizeof(float)), AKX_SUCCESS);
  cr_assert_eq(akx_memcpy(ctx, src, host.data(), n * sizeof(float), AKX_COPY_HOST_TO_DEVICE), AKX_SUCCESS);
  cr_assert_eq(akx_sim_counters_reset(ctx), AKX_SUCCESS);
  const akx_array s = view(src, AKX_FLOAT32, {7, 33, 20}, {1000, 30, 1});
  const akx_array d = view(dims, AKX_FLOAT32, {1, 33, 1}, {33, 1, 1});
  cr_assert_eq(akx_reduce_dims(ctx, &d, &s, AKX_MAP_IDENTITY, AKX_OP_ADD, nullptr), AKX_SUCCESS, "%s",
               akx_last_error());
  akx_reduce_opts ro{};
  ro.acc = AKX_FLOAT64;
  cr_assert_eq(akx_mapreduce(ctx, &s, AKX_MAP_IDENTITY, AKX_OP_ADD, &ro, whole, AKX_DEVICE), AKX_SUCCESS,
               "%s", akx_last_error());
  const akx_array o = view(scan, AKX_FLOAT32, {7, 33, 20}, {660, 20, 1});
  cr_assert_eq(akx_scan(ctx, &o, &s, AKX_OP_MUL, 1, nullptr), AKX_SUCCESS, "%s", akx_last_error());
  outcome r;
  cr_assert_eq(akx_sim_counters_get(ctx, &r.counters, nullptr, 0, nullptr), AKX_SUCCESS);
  r.dims.resize(33 * sizeof(float));
  r.whole.resize(sizeof(double));
  r.scan.resize(7 * 33 * 20 * sizeof(float));
  cr_assert_eq(akx_memcpy(ctx, r.dims.data(), dims, r.dims.size(), AKX_COPY_DEVICE_TO_HOST), AKX_SUCCESS);
  cr_assert_eq(akx_memcpy(ctx, r.whole.data(), whole, r.whole.size(), AKX_COPY_DEVICE_TO_HOST), AKX_SUCCESS);
  cr_assert_eq(akx_memcpy(ctx, r.scan.data(), scan, r.scan.size(), AKX_COPY_DEVICE_TO_HOST), AKX_SUCCESS);
  for (void *p : {src, dims, whole, scan}) akx_free(ctx, p);
  return r;
}

void same_traffic(const akx_sim_traffic &a, const akx_sim_traffic &b, const char *what) {
  cr_assert_eq(a.requests, b.requests, "%s requests: %llu prebuilt, %llu run-time", what,
               (unsigned long long)a.requests, (unsigned long long)b.requests);
  cr_assert_eq(a.units, b.units, "%s units", what);
  cr_assert_eq(a.ideal, b.ideal, "%s ideal", what);
  cr_assert_eq(a.bytes, b.bytes, "%s bytes", what);
}

}  // namespace

Test(sim_module, a_units_entry_calls_its_familys_launcher) {
  struct {
    int family;
    akx_dtype src, dst, acc;
    akx_op op;
    const char *call, *kernel;
  } cases[] = {
      {AKX__FAMILY_REDUCE_WHOLE, AKX_INT16, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO, AKX_OP_ADD,
       "return ::akx::reduce_whole_launch<int16_t, int64_t, ::akx::op_add>(*p, stream);",
       "akx::reduce_whole_partials<int64_t, ::akx::op_add>"},
      {AKX__FAMILY_REDUCE_DIMS, AKX_FLOAT32, AKX_DTYPE_AUTO, AKX_FLOAT64, AKX_OP_MAX,
       "return ::akx::reduce_dims_launch<float, double, ::akx::op_max>(*p, stream);",
       "akx::reduce_dims_tile_kernel<float, double, ::akx::op_max>"},
      {AKX__FAMILY_SCAN, AKX_UINT8, AKX_FLOAT32, AKX_DTYPE_AUTO, AKX_OP_MUL,
       "return ::akx::scan_launch<uint8_t, float, uint64_t, ::akx::op_mul>(*p, stream);",
       "akx::scan_columns_carry<::akx::op_mul, uint64_t>"},
      {AKX__FAMILY_FINDALL, AKX_BOOL, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO, AKX_OP_ADD,
       "return ::akx::findall_launch<bool>(*p, stream);", "akx::findall_kernel<bool>"},
  };
  for (auto &c : cases) {
    char *text = nullptr;
    cr_assert_eq(akx__builtin_unit_text(c.family, c.src, c.dst, c.acc, c.op, &text), AKX_SUCCESS, "%s",
                 akx_last_error());
    cr_assert(strstr(text, c.call), "%s: no \"%s\" in\n%s", akx__family_name(c.family), c.call, text);
    cr_assert(strstr(text, c.kernel), "%s: no %s in\n%s", akx__family_name(c.family), c.kernel, text);
    cr_assert(strstr(text, "AKX_MODULE_EXPORT akx_status akx_unit_entry(const void *plan, void *stream)"), "%s", text);
    free(text);
  }
  char *text = nullptr;
  cr_assert_eq(akx__builtin_unit_text(AKX__FAMILY_COUNT, AKX_FLOAT32, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO, AKX_OP_ADD, &text),
               AKX_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(akx__builtin_unit_text(AKX__FAMILY_SCAN, (akx_dtype)AKX_DTYPE_COUNT, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO, AKX_OP_ADD, &text),
               AKX_ERROR_INVALID_ARGUMENT);
}

Test(sim_module, run_time_kernels_are_the_prebuilt_ones) {
  if (!AKX_PREBUILT) cr_skip("built with AKX_PREBUILT=OFF: there is no prebuilt kernel to compare");
  const std::string dir = fresh_cache_dir();
  akx_context *pre = open_sim("prebuilt");
  const outcome a = run_families(pre);
  akx_context_destroy(pre);
  akx__jit_counters before;
  akx__jit_cache_counters(&before);
  akx_context *jit = open_sim("runtime");
  const outcome b = run_families(jit);
  akx_context_destroy(jit);
  akx__jit_counters after;
  akx__jit_cache_counters(&after);
  // float32 reduce_whole, reduce_dims and scan: three modules.
  cr_assert_eq(after.compiles - before.compiles, 3, "%llu compiles",
               (unsigned long long)(after.compiles - before.compiles));
  cr_assert(a.dims == b.dims, "reduce_dims: the run-time kernel's bits differ");
  cr_assert(a.whole == b.whole, "mapreduce: the run-time kernel's bits differ");
  cr_assert(a.scan == b.scan, "scan: the run-time kernel's bits differ");
  cr_assert_eq(a.counters.launches, b.counters.launches);
  cr_assert_eq(a.counters.blocks, b.counters.blocks);
  cr_assert_eq(a.counters.threads, b.counters.threads);
  cr_assert_eq(a.counters.barriers, b.counters.barriers);
  same_traffic(a.counters.global_load, b.counters.global_load, "global loads");
  same_traffic(a.counters.global_store, b.counters.global_store, "global stores");
  same_traffic(a.counters.shared_load, b.counters.shared_load, "shared loads");
  same_traffic(a.counters.shared_store, b.counters.shared_store, "shared stores");
  remove_dir(dir);
}

Test(sim_module, compiled_once_per_process_and_once_per_machine) {
  const std::string dir = fresh_cache_dir();
  akx__jit_counters c0, c1, c2, c3;
  void *entry = nullptr, *again = nullptr;
  akx_context *ctx = open_sim("runtime");
  akx__jit_cache_counters(&c0);
  cr_assert_eq(akx__builtin_entry(ctx, AKX__FAMILY_REDUCE_WHOLE, AKX_INT16, AKX_DTYPE_AUTO, AKX_INT64, AKX_OP_ADD, &entry),
               AKX_SUCCESS, "%s", akx_last_error());
  akx__jit_cache_counters(&c1);
  cr_assert_eq(c1.compiles - c0.compiles, 1);
  cr_assert_eq(c1.disk_writes - c0.disk_writes, 1);
  cr_assert_eq(akx__builtin_entry(ctx, AKX__FAMILY_REDUCE_WHOLE, AKX_INT16, AKX_DTYPE_AUTO, AKX_INT64, AKX_OP_ADD, &again),
               AKX_SUCCESS, "%s", akx_last_error());
  akx__jit_cache_counters(&c2);
  cr_assert_eq(again, entry);
  cr_assert_eq(c2.compiles, c1.compiles, "a second ask compiled again");
  cr_assert_eq(c2.memory_hits - c1.memory_hits, 1);
  // A new process: the memory cache is gone, the file is there.
  akx__jit_cache_reset_for_tests();
  cr_assert_eq(akx__builtin_entry(ctx, AKX__FAMILY_REDUCE_WHOLE, AKX_INT16, AKX_DTYPE_AUTO, AKX_INT64, AKX_OP_ADD, &again),
               AKX_SUCCESS, "%s", akx_last_error());
  akx__jit_cache_counters(&c3);
  cr_assert_eq(c3.compiles, 0);
  cr_assert_eq(c3.disk_hits, 1);
  // The entry computes: an int16 sum through the module (AKX_KERNELS=runtime).
  int16_t host[300];
  int64_t want = 0;
  for (int i = 0; i < 300; ++i) want += host[i] = (int16_t)(i * 113 % 2001 - 1000);
  void *src = nullptr;
  cr_assert_eq(akx_malloc(ctx, &src, sizeof host), AKX_SUCCESS);
  cr_assert_eq(akx_memcpy(ctx, src, host, sizeof host, AKX_COPY_HOST_TO_DEVICE), AKX_SUCCESS);
  const akx_array a = view(src, AKX_INT16, {300}, {1});
  int64_t got = 0;
  cr_assert_eq(akx_mapreduce(ctx, &a, AKX_MAP_IDENTITY, AKX_OP_ADD, nullptr, &got, AKX_HOST), AKX_SUCCESS,
               "%s", akx_last_error());
  cr_assert_eq(got, want);
  akx_free(ctx, src);
  akx_context_destroy(ctx);
  remove_dir(dir);
}

Test(sim_module, a_truncated_file_is_compiled_again) {
  const std::string dir = fresh_cache_dir();
  void *entry = nullptr;
  akx_context *ctx = open_sim("runtime");
  cr_assert_eq(akx__builtin_entry(ctx, AKX__FAMILY_FINDALL, AKX_BOOL, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO, AKX_OP_ADD, &entry),
               AKX_SUCCESS, "%s", akx_last_error());
  DIR *d = opendir(dir.c_str());
  std::string file;
  for (dirent *e; (e = readdir(d));)
    if (strstr(e->d_name, ".so")) file = dir + "/" + e->d_name;
  closedir(d);
  cr_assert(!file.empty(), "no module file in %s", dir.c_str());
  cr_assert_eq(truncate(file.c_str(), 1000), 0);
  akx__jit_cache_reset_for_tests();
  cr_assert_eq(akx__builtin_entry(ctx, AKX__FAMILY_FINDALL, AKX_BOOL, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO, AKX_OP_ADD, &entry),
               AKX_SUCCESS, "%s", akx_last_error());
  akx_context_destroy(ctx);
  akx__jit_counters c;
  akx__jit_cache_counters(&c);
  cr_assert_eq(c.disk_rejects, 1);
  cr_assert_eq(c.compiles, 1);
  cr_assert_eq(c.disk_hits, 0);
  remove_dir(dir);
}

Test(sim_module, a_missing_compiler_is_a_sentence) {
  const std::string dir = fresh_cache_dir();
  setenv("AKX_SIM_CXX", "/nonexistent/c++", 1);
  void *entry = nullptr;
  akx_context *ctx = open_sim("runtime");
  cr_assert_eq(akx__builtin_entry(ctx, AKX__FAMILY_SCAN, AKX_FLOAT64, AKX_DTYPE_AUTO, AKX_DTYPE_AUTO, AKX_OP_ADD, &entry),
               AKX_ERROR_UNSUPPORTED);
  cr_assert(strstr(akx_last_error(), "/nonexistent/c++") && strstr(akx_last_error(), "AKX_SIM_CXX"), "%s",
            akx_last_error());
  // Through the API: the call is refused, nothing launched.
  double host[4] = {1, 2, 3, 4}, got = 0;
  void *src = nullptr;
  cr_assert_eq(akx_malloc(ctx, &src, sizeof host), AKX_SUCCESS);
  cr_assert_eq(akx_memcpy(ctx, src, host, sizeof host, AKX_COPY_HOST_TO_DEVICE), AKX_SUCCESS);
  const akx_array a = view(src, AKX_FLOAT64, {4}, {1});
  cr_assert_eq(akx_mapreduce(ctx, &a, AKX_MAP_IDENTITY, AKX_OP_ADD, nullptr, &got, AKX_HOST), AKX_ERROR_UNSUPPORTED);
  cr_assert(strstr(akx_last_error(), "AKX_SIM_CXX"), "%s", akx_last_error());
  akx_sim_kernel_counters c;
  cr_assert_eq(akx_sim_counters_get(ctx, &c, nullptr, 0, nullptr), AKX_SUCCESS);
  cr_assert_eq(c.launches, 0);
  akx_free(ctx, src);
  akx_context_destroy(ctx);
  remove_dir(dir);
}

Test(sim_module, a_misspelt_setting_is_refused) {
  setenv("AKX_KERNELS", "jit", 1);
  akx_context *ctx = nullptr;
  cr_assert_eq(akx_context_create(&ctx, AKX_BACKEND_SIM, 0), AKX_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(akx_last_error(), "AKX_KERNELS=\"jit\"") && strstr(akx_last_error(), "prebuilt or runtime"),
            "%s", akx_last_error());
}
