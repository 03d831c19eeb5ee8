/* The launch decisions of src/core/launch_rules.h, and the process-wide table of kernel
 * attributes. */
#include "launch_rules.h"

#include <pthread.h>
#include <stdlib.h>

#include "device_profile.h"
#include "error.h"

int akx__launch_pdl(int setting, int cc_major, int ptx_version, int capturing) {
  return setting && cc_major >= 9 && ptx_version >= 90 && !capturing;
}

int64_t akx__dynamic_smem_attribute(int smem_optin, int64_t optin_max, int64_t static_bytes) {
  if (!smem_optin) return -1;
  return optin_max > static_bytes ? optin_max - static_bytes : 0;
}

akx_status akx__check_dynamic_smem(const char *kernel_name, int smem_optin, size_t smem_bytes,
                                   const akx__kernel_attributes *a) {
  if ((int64_t)smem_bytes <= a->max_dynamic) return AKX_SUCCESS;
  if (!smem_optin)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "kernel '%s': %zu bytes of dynamic and %lld of static shared memory without the "
                     "opt-in: above %d bytes together a kernel must be declared with smem_optin (the "
                     "CUDA backend then sets cudaFuncAttributeMaxDynamicSharedMemorySize)",
                     kernel_name, smem_bytes, (long long)a->static_bytes, akx__static_shared_limit);
  return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                   "kernel '%s': %zu bytes of dynamic shared memory, more than its "
                   "cudaFuncAttributeMaxDynamicSharedMemorySize (%lld bytes: the device's opt-in maximum "
                   "less its %lld bytes of static shared memory, set once per kernel and device for the "
                   "whole process)",
                   kernel_name, smem_bytes, (long long)a->max_dynamic, (long long)a->static_bytes);
}

/* CUmemorytype's values (CUDA's cuda.h; the driver's ABI). */
enum { MEMORY_HOST = 1, MEMORY_DEVICE = 2, MEMORY_UNIFIED = 4 };

int akx__device_range_ok(const akx__pointer_facts *f, int device, int pageable_access, uintptr_t p,
                         size_t bytes) {
  if (bytes == 0) return 1;
  if (p + (bytes - 1) < p) return 0; /* wraps */
  /* Within the allocation the driver named: a range that starts in one allocation and runs on
   * past its end (into host memory, or another device's) is refused too. */
  const int in_range = f->range_size > 0 && p >= f->range_start &&
                       bytes <= f->range_size && p - f->range_start <= f->range_size - bytes;
  if (f->is_managed || f->memory_type == MEMORY_UNIFIED) return f->range_size == 0 || in_range;
  switch (f->memory_type) {
    case MEMORY_DEVICE: return f->device_ordinal == device && in_range;
    case MEMORY_HOST: return f->device_pointer == p && in_range; /* pinned and mapped (UVA) */
    case 0: return pageable_access != 0;                         /* not CUDA's: pageable memory */
    default: return 0;                                           /* arrays: not addressable */
  }
}

/* cudaError_t values (driver_types.h): cudaSuccess, cudaErrorCallRequiresNewerDriver,
 * cudaErrorNotSupported. */
int akx__stream_device_way(int cuda_error) {
  if (cuda_error == 0) return 0;
  if (cuda_error == 36 || cuda_error == 801) return 1;
  return 2;
}

/* ---- the table ------------------------------------------------------------------------------
 * An open-addressing hash of (kernel, device), grown at 3/4 full. A launch takes the mutex
 * once to look its kernel up (uncontended: tens of nanoseconds, beside the launch's
 * microseconds); a miss fills the entry under the same lock, so that an attribute the fill
 * sets on the device (cudaFuncSetAttribute) is set once per (kernel, device) in the process
 * and is never changed while another thread is between its check and its launch. */
typedef struct {
  const void *kernel, *device;
  akx__kernel_attributes a;
} slot;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static slot *table;
static size_t table_cap, table_used;

static size_t hash(const void *kernel, const void *device, size_t cap) {
  uint64_t h = (uint64_t)(uintptr_t)kernel * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uintptr_t)device * 0xC2B2AE3D27D4EB4Full;
  h ^= h >> 29;
  return (size_t)h & (cap - 1);
}

static slot *find(const void *kernel, const void *device) {
  if (!table_cap) return NULL;
  for (size_t i = hash(kernel, device, table_cap);; i = (i + 1) & (table_cap - 1)) {
    if (!table[i].kernel) return NULL;
    if (table[i].kernel == kernel && table[i].device == device) return &table[i];
  }
}

static int grow(void) {
  const size_t cap = table_cap ? 2 * table_cap : 256;
  slot *t = calloc(cap, sizeof *t);
  if (!t) return 0;
  for (size_t i = 0; i < table_cap; ++i)
    if (table[i].kernel) {
      size_t j = hash(table[i].kernel, table[i].device, cap);
      while (t[j].kernel) j = (j + 1) & (cap - 1);
      t[j] = table[i];
    }
  free(table);
  table = t;
  table_cap = cap;
  return 1;
}

akx_status akx__kernel_attributes_get(const void *kernel, const void *device, akx__kernel_attributes_fill fill,
                                      void *arg, akx__kernel_attributes *out) {
  pthread_mutex_lock(&table_lock);
  const slot *s = find(kernel, device);
  akx_status st = AKX_SUCCESS;
  if (s) {
    *out = s->a;
  } else if ((table_used + 1) * 4 > table_cap * 3 && !grow()) {
    st = akx__fail(AKX_ERROR_OUT_OF_MEMORY, "out of host memory");
  } else if ((st = fill(kernel, device, arg, out)) == AKX_SUCCESS) {
    size_t i = hash(kernel, device, table_cap);
    while (table[i].kernel) i = (i + 1) & (table_cap - 1);
    table[i].kernel = kernel;
    table[i].device = device;
    table[i].a = *out;
    table_used++;
  }
  pthread_mutex_unlock(&table_lock);
  return st;
}
