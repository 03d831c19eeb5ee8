/* The launch decisions that need a GPU to be seen (src/core/launch_rules.h), as tables checked
 * on the CPU: when a launch is a programmatic dependent one, what the dynamic shared memory
 * attribute is set to, which pointers a device can address, how a stream's device is found.
 * And the process-wide table of kernel attributes: filled once per (kernel, device), also
 * when threads ask at once. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>

#include "launch_rules.h"

Test(launch_rules, pdl_is_decided_by_the_kernel_image) {
  static const struct {
    int setting, cc_major, ptx_version, capturing, pdl;
  } rows[] = {
      {1, 9, 90, 0, 1},   /* sm_90 image on an H200 */
      {1, 10, 100, 0, 1}, /* sm_100 image on a B200 */
      {1, 10, 90, 0, 1},  /* compute_90 PTX JIT-compiled for a B200: has griddepcontrol */
      {1, 9, 80, 0, 0},   /* CMAKE_CUDA_ARCHITECTURES=80 on an H200: no wait in the kernel */
      {1, 9, 87, 0, 0},   /* NVRTC without sm_90 gave compute_87 PTX */
      {1, 12, 86, 0, 0},
      {1, 8, 80, 0, 0},   /* an A100 has no programmatic launches */
      {1, 8, 90, 0, 0},   /* impossible image, device decides too */
      {0, 9, 90, 0, 0},   /* AKX_PDL=0 */
      {1, 9, 90, 1, 0},   /* a capturing stream: plain launches */
      {0, 9, 80, 1, 0},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i)
    cr_expect_eq(akx__launch_pdl(rows[i].setting, rows[i].cc_major, rows[i].ptx_version, rows[i].capturing),
                 rows[i].pdl, "row %zu: setting %d, cc %d, ptx %d, capturing %d", i, rows[i].setting,
                 rows[i].cc_major, rows[i].ptx_version, rows[i].capturing);
}

Test(launch_rules, dynamic_smem_attribute_is_the_opt_in_maximum_less_static) {
  static const struct {
    int optin;
    int64_t max, statics, attr;
  } rows[] = {
      {1, 232448, 0, 232448},      /* H200: 227 KiB opt-in */
      {1, 232448, 1024, 231424},   /* less the kernel's static shared memory */
      {1, 166912, 16, 166896},     /* A100 */
      {1, 49152, 49152, 0},
      {1, 49152, 60000, 0},        /* never negative */
      {0, 232448, 0, -1},          /* no opt-in: left alone (48 KiB) */
      {0, 232448, 1024, -1},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i)
    cr_expect_eq(akx__dynamic_smem_attribute(rows[i].optin, rows[i].max, rows[i].statics), rows[i].attr,
                 "row %zu", i);
}

Test(launch_rules, device_ranges) {
  const uintptr_t base = 0x7f0000000000u;
  static const size_t MiB = 1u << 20;
  const struct {
    akx__pointer_facts f;
    int device, pageable;
    uintptr_t p;
    size_t bytes;
    int ok;
    const char *why;
  } rows[] = {
      {{2, 0, 0, base, base, MiB}, 0, 0, base, MiB, 1, "a whole allocation of this device"},
      {{2, 0, 0, base + 64, base, MiB}, 0, 0, base + 64, MiB - 64, 1, "a view ending at its end"},
      {{2, 0, 0, base + 64, base, MiB}, 0, 0, base + 64, MiB - 63, 0, "one byte past its end"},
      {{2, 0, 0, base, base, MiB}, 0, 0, base, 2 * MiB, 0, "twice its size"},
      {{2, 1, 0, base, base, MiB}, 0, 0, base, 16, 0, "another device's memory"},
      {{2, 0, 0, base, 0, 0}, 0, 0, base, 16, 0, "device memory whose range is unknown"},
      {{1, -2, 0, base, base, MiB}, 0, 0, base, 4096, 1, "pinned host memory mapped at its address"},
      {{1, -2, 0, 0, base, MiB}, 0, 0, base, 4096, 0, "pinned host memory, not mapped"},
      {{1, -2, 0, base + 4096, base, MiB}, 0, 0, base, 4096, 0, "mapped at another address"},
      {{2, 0, 1, base, base, MiB}, 3, 0, base, MiB, 1, "managed memory, any device"},
      {{2, 0, 1, base, base, MiB}, 3, 0, base, MiB + 1, 0, "managed, past its end"},
      {{0, -2, 0, 0, 0, 0}, 0, 0, base, 16, 0, "pageable host memory"},
      {{0, -2, 0, 0, 0, 0}, 0, 1, base, 16, 1, "pageable memory on an HMM/ATS system"},
      {{3, 0, 0, base, base, MiB}, 0, 1, base, 16, 0, "a CUDA array"},
      {{2, 0, 0, base, base, MiB}, 0, 0, base, 0, 1, "no bytes"},
      {{2, 0, 0, UINTPTR_MAX - 8, UINTPTR_MAX - 8, 8}, 0, 0, UINTPTR_MAX - 8, 16, 0, "wraps"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i)
    cr_expect_eq(akx__device_range_ok(&rows[i].f, rows[i].device, rows[i].pageable, rows[i].p, rows[i].bytes),
                 rows[i].ok, "row %zu: %s", i, rows[i].why);
}

Test(launch_rules, stream_device_way) {
  cr_expect_eq(akx__stream_device_way(0), 0, "cudaSuccess: the runtime's answer");
  cr_expect_eq(akx__stream_device_way(36), 1, "cudaErrorCallRequiresNewerDriver: ask the driver");
  cr_expect_eq(akx__stream_device_way(801), 1, "cudaErrorNotSupported: ask the driver");
  cr_expect_eq(akx__stream_device_way(400), 2, "cudaErrorInvalidResourceHandle: refused");
  cr_expect_eq(akx__stream_device_way(709), 2, "cudaErrorContextIsDestroyed: refused");
}

/* ---- the table ---- */
static int fills;
static pthread_mutex_t fills_lock = PTHREAD_MUTEX_INITIALIZER;

static akx_status fill(const void *kernel, const void *device, void *arg, akx__kernel_attributes *out) {
  (void)arg;
  pthread_mutex_lock(&fills_lock);
  fills++;
  pthread_mutex_unlock(&fills_lock);
  out->ptx_version = (int)((uintptr_t)kernel % 1000);
  out->static_bytes = (int64_t)(uintptr_t)device;
  out->max_dynamic = (int64_t)((uintptr_t)kernel + (uintptr_t)device);
  return AKX_SUCCESS;
}

static akx_status failing_fill(const void *kernel, const void *device, void *arg, akx__kernel_attributes *out) {
  (void)kernel, (void)device, (void)out;
  ++*(int *)arg;
  return AKX_ERROR_DEVICE;
}

static void *ask_all(void *arg) {
  (void)arg;
  for (uintptr_t k = 1; k <= 3000; ++k)
    for (uintptr_t d = 1; d <= 2; ++d) {
      akx__kernel_attributes a;
      cr_assert_eq(akx__kernel_attributes_get((const void *)(k * 16), (const void *)d, fill, NULL, &a), AKX_SUCCESS);
      cr_assert_eq(a.ptx_version, (int)((k * 16) % 1000));
      cr_assert_eq(a.static_bytes, (int64_t)d);
      cr_assert_eq(a.max_dynamic, (int64_t)(k * 16 + d));
    }
  return NULL;
}

Test(launch_rules, attributes_are_filled_once_per_kernel_and_device) {
  pthread_t t[4];
  for (int i = 0; i < 4; ++i) pthread_create(&t[i], NULL, ask_all, NULL);
  for (int i = 0; i < 4; ++i) pthread_join(t[i], NULL);
  cr_expect_eq(fills, 6000, "3000 kernels on 2 devices, asked by 4 threads: one fill each");
  int failures = 0;
  akx__kernel_attributes a;
  cr_expect_eq(akx__kernel_attributes_get((const void *)7, (const void *)1, failing_fill, &failures, &a),
               AKX_ERROR_DEVICE);
  cr_expect_eq(akx__kernel_attributes_get((const void *)7, (const void *)1, failing_fill, &failures, &a),
               AKX_ERROR_DEVICE);
  cr_expect_eq(failures, 2, "a failed fill is not kept: the next launch tries again");
}
