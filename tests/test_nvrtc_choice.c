/* Which NVRTC libakx takes (src/jit/nvrtc.h, akx__nvrtc_choose): a table of (the CUDA driver's
 * version, the libraries the loader found with the versions they report) -> the library
 * chosen, or the sentence that refuses them all. No GPU, no driver and no NVRTC are needed:
 * the rule is a pure function, and the loader's own check is shown with a stand-in library
 * (tests/fake_nvrtc/fake_nvrtc.c) that reports an NVRTC below the minimum. Built in every
 * configuration: the loader is compiled into the sim-only build too. */
/* setenv and unsetenv are POSIX, outside strict C11. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "akx.h"
#include "jit/nvrtc.h"

#define MAX_FOUND 4
typedef struct {
  const char *what;
  int driver;                       /* cudaDriverGetVersion's value; 0: no driver */
  int n;
  akx__nvrtc_found found[MAX_FOUND];
  int from_env;
  int want;                         /* the index chosen, -1: refused */
  const char *says[3];              /* what a refusal's sentence must hold */
} choice_row;

static const choice_row rows[] = {
    {"no driver: the newest, as the soname order gave before",
     0, 3, {{"libnvrtc.so.13", 13, 0}, {"libnvrtc.so.12", 12, 8}, {"libnvrtc.so.11.2", 11, 8}}, 0, 0, {0}},
    {"no driver, found in another order: still the newest",
     0, 2, {{"libnvrtc.so.12", 12, 4}, {"libnvrtc.so", 13, 1}}, 0, 1, {0}},
    {"a 12.4 driver with NVRTC 13 on the path: NVRTC 12, never the newer major",
     12040, 2, {{"libnvrtc.so.13", 13, 0}, {"libnvrtc.so.12", 12, 8}}, 0, 1, {0}},
    {"a 12.4 driver: NVRTC 12.8 (newer minor, same major) over an older 12.3",
     12040, 3, {{"/opt/a/libnvrtc.so.12", 12, 3}, {"libnvrtc.so.12", 12, 8}, {"libnvrtc.so.13", 13, 0}}, 0, 1, {0}},
    {"a 13.0 driver: NVRTC 13.1 (newer minor) over NVRTC 12.9 (older major)",
     13000, 2, {{"libnvrtc.so.12", 12, 9}, {"libnvrtc.so", 13, 1}}, 0, 1, {0}},
    {"a 12.4 driver: NVRTC 12.2 is below the minimum, NVRTC 12.4 is taken",
     12040, 2, {{"libnvrtc.so.12", 12, 2}, {"/usr/local/cuda/lib64/libnvrtc.so.12", 12, 4}}, 0, 1, {0}},
    {"a 13.0 driver: NVRTC 13",
     13000, 2, {{"libnvrtc.so.13", 13, 0}, {"libnvrtc.so.12", 12, 9}}, 0, 0, {0}},
    {"a 13.1 driver with NVRTC 12 only: the older major (backward compatibility)",
     13010, 1, {{"libnvrtc.so.12", 12, 9}}, 0, 0, {0}},
    {"an unversioned libnvrtc.so that is NVRTC 13, on a 12.4 driver: refused, both named",
     12040, 1, {{"libnvrtc.so", 13, 0}}, 0, -1, {"libnvrtc.so is NVRTC 13.0", "driver (CUDA 12.4)", "CUDA 12"}},
    {"a 12.2 driver with NVRTC 13 only: refused",
     12020, 2, {{"libnvrtc.so.13", 13, 0}, {"/usr/local/cuda/lib64/libnvrtc.so.13", 13, 0}}, 0, -1,
     {"libnvrtc.so.13 is NVRTC 13.0", "newer than the driver (CUDA 12.2)", "/usr/local/cuda/lib64/libnvrtc.so.13"}},
    {"NVRTC 11.8 only: below the minimum whatever the driver",
     12040, 1, {{"libnvrtc.so.11.2", 11, 8}}, 0, -1, {"libnvrtc.so.11.2 is NVRTC 11.8", "older than 12.3"}},
    {"NVRTC 11.8 only, no driver: below the minimum",
     0, 1, {{"libnvrtc.so.11.2", 11, 8}}, 0, -1, {"NVRTC 11.8", "older than 12.3"}},
    {"an 11.8 driver: NVRTC 11 is too old and NVRTC 12 too new, so nothing",
     11080, 2, {{"libnvrtc.so.12", 12, 4}, {"libnvrtc.so.11.2", 11, 8}}, 0, -1,
     {"libnvrtc.so.12 is NVRTC 12.4, newer than the driver (CUDA 11.8)", "libnvrtc.so.11.2 is NVRTC 11.8",
      "older than 12.3"}},
    {"AKX_NVRTC_LIBRARY of a newer major than the driver: refused, the variable named",
     12040, 1, {{"/opt/cuda-13/lib64/libnvrtc.so.13", 13, 0}}, 1, -1,
     {"AKX_NVRTC_LIBRARY=/opt/cuda-13/lib64/libnvrtc.so.13 is NVRTC 13.0", "driver (CUDA 12.4)", "CUDA 12"}},
    {"AKX_NVRTC_LIBRARY of the driver's major: taken",
     12040, 1, {{"/opt/cuda-12.6/lib64/libnvrtc.so.12", 12, 6}}, 1, 0, {0}},
    {"AKX_NVRTC_LIBRARY of an older major on a newer driver: taken",
     13000, 1, {{"/opt/cuda-12.6/lib64/libnvrtc.so.12", 12, 6}}, 1, 0, {0}},
};

Test(nvrtc_choice, the_table) {
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    const choice_row *r = &rows[i];
    char why[1024] = "(unchanged)";
    int got = akx__nvrtc_choose(r->driver, r->found, r->n, r->from_env, why, sizeof why);
    cr_expect_eq(got, r->want, "%s: chose %d, want %d (%s)", r->what, got, r->want, why);
    if (r->want >= 0) continue;
    for (int k = 0; k < 3 && r->says[k]; k++)
      cr_expect(strstr(why, r->says[k]) != NULL, "%s: the sentence lacks \"%s\": %s", r->what, r->says[k], why);
  }
}

Test(nvrtc_choice, nothing_found_is_refused_with_a_sentence) {
  char why[256] = "";
  cr_assert_eq(akx__nvrtc_choose(12040, NULL, 0, 0, why, sizeof why), -1);
  cr_assert(why[0] != '\0');
}

/* The loader asks the library its version and refuses one below the minimum, naming it. */
Test(nvrtc_choice, loader_refuses_an_nvrtc_below_the_minimum) {
  setenv("AKX_TEST_FAKE_NVRTC_VERSION", "11.8", 1);
  setenv("AKX_NVRTC_LIBRARY", AKX_TEST_FAKE_NVRTC, 1);
  akx__nvrtc_reset_for_tests();
  akx_status s = akx__nvrtc_available();
  const char *why = akx_last_error();
  cr_assert_eq(s, AKX_ERROR_UNSUPPORTED, "%s", akx_status_string(s));
  cr_assert(strstr(why, AKX_TEST_FAKE_NVRTC) != NULL, "%s", why);
  cr_assert(strstr(why, "NVRTC 11.8") != NULL, "%s", why);
  cr_assert(strstr(why, "older than 12.3") != NULL, "%s", why);
  /* The outcome is kept: a second call gives the same sentence without loading again. */
  cr_assert_eq(akx__nvrtc_available(), AKX_ERROR_UNSUPPORTED);
  cr_assert(strstr(akx_last_error(), "NVRTC 11.8") != NULL, "%s", akx_last_error());
  unsetenv("AKX_NVRTC_LIBRARY");
  akx__nvrtc_reset_for_tests();
}

/* At the minimum, the version check passes and the loader goes on to NVRTC's entry points
 * (which the stand-in lacks): the refusal is about the symbols, not the version. */
Test(nvrtc_choice, loader_accepts_the_minimum_version) {
  setenv("AKX_TEST_FAKE_NVRTC_VERSION", "12.3", 1);
  setenv("AKX_NVRTC_LIBRARY", AKX_TEST_FAKE_NVRTC, 1);
  akx__nvrtc_reset_for_tests();
  cr_assert_eq(akx__nvrtc_available(), AKX_ERROR_UNSUPPORTED);
  const char *why = akx_last_error();
  cr_assert(strstr(why, "has no nvrtcGetErrorString") != NULL, "%s", why);
  cr_assert(strstr(why, "older than") == NULL, "%s", why);
  unsetenv("AKX_NVRTC_LIBRARY");
  akx__nvrtc_reset_for_tests();
}

/* The loader hands the driver's version to the choice (akx__cuda_driver_version's answer; told
 * here, as there is no driver): one NVRTC 13.0 is refused under a 12.4 driver, naming both, and
 * taken under a 13.0 driver (the stand-in then lacks the entry points: refused for those). */
Test(nvrtc_choice, loader_chooses_by_the_drivers_version) {
  setenv("AKX_TEST_FAKE_NVRTC_VERSION", "13.0", 1);
  setenv("AKX_NVRTC_LIBRARY", AKX_TEST_FAKE_NVRTC, 1);
  akx__nvrtc_driver_version_for_tests(12040);
  akx__nvrtc_reset_for_tests();
  cr_assert_eq(akx__nvrtc_available(), AKX_ERROR_UNSUPPORTED);
  const char *why = akx_last_error();
  cr_expect(strstr(why, "is NVRTC 13.0") != NULL, "%s", why);
  cr_expect(strstr(why, "newer than the driver (CUDA 12.4)") != NULL, "%s", why);
  akx__nvrtc_driver_version_for_tests(13000);
  akx__nvrtc_reset_for_tests();
  cr_assert_eq(akx__nvrtc_available(), AKX_ERROR_UNSUPPORTED);
  why = akx_last_error();
  cr_expect(strstr(why, "has no nvrtcGetErrorString") != NULL, "under a 13.0 driver: %s", why);
  akx__nvrtc_driver_version_for_tests(-1);
  unsetenv("AKX_NVRTC_LIBRARY");
  akx__nvrtc_reset_for_tests();
}
