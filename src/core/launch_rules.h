/* The decisions a launch makes from facts only a GPU has (the kernel image's PTX version, the
 * device's shared-memory opt-in limit, what the driver says of a pointer), as pure functions:
 * both backends follow them, and tests/test_launch_rules.c checks each with a table on the
 * CPU, since no GPU runs the tests. Also the process-wide record of each kernel's attributes
 * per device, filled once (src/core/launch_rules.c). */
#ifndef AKX_LAUNCH_RULES_H
#define AKX_LAUNCH_RULES_H
#include <stddef.h>
#include <stdint.h>
#include "akx.h"
#ifdef __cplusplus
extern "C" {
#endif

/* Whether a launch carries programmatic stream serialization (a programmatic dependent
 * launch, PDL): AKX_PDL is on (setting), the device is sm_90+ (cc_major >= 9), the kernel's
 * image was compiled from PTX of compute_90 or newer (ptx_version, cudaFuncAttributes'
 * ptxVersion, 10 * major + minor), and the stream is not capturing a graph.
 * The image decides, not the device: grid_dependency_wait() (kernels/akx/device.cuh) is
 * griddepcontrol.wait only where __CUDA_ARCH__ >= 900, so a kernel built for compute_80 (a
 * library built with CMAKE_CUDA_ARCHITECTURES=80 running on an H200, or an NVRTC that knows no
 * sm_90 compiling PTX of an older architecture) has no wait: launched as a programmatic
 * dependent it could read its input before the kernel before it wrote it. Capture: capturing
 * programmatic launches into a graph needs a recent runtime and driver, and a graph's nodes
 * gain nothing from the overlap that PDL buys an eager stream, so a captured launch is plain. */
int akx__launch_pdl(int setting, int cc_major, int ptx_version, int capturing);

/* The value of cudaFuncAttributeMaxDynamicSharedMemorySize libakx sets for a kernel, once per
 * (kernel, device): the device's opt-in maximum per block less the kernel's static shared
 * memory, for a kernel declared with the opt-in (smem_optin); -1 (leave the attribute alone)
 * for one without. The attribute belongs to the function in the whole process: set per
 * launch to that launch's own size, two threads whose tiles differ would undo each other
 * between the set and the launch, and one launch would fail ("invalid argument"). */
int64_t akx__dynamic_smem_attribute(int smem_optin, int64_t optin_max, int64_t static_bytes);

/* What the driver says of a pointer (cuPointerGetAttributes, one call for all of these). */
typedef struct {
  int memory_type;      /* CU_MEMORYTYPE_*: 0 unknown to CUDA, 1 host, 2 device, 3 array, 4 unified */
  int device_ordinal;   /* the device of device memory, -2 when the driver gave none */
  int is_managed;       /* managed (cudaMallocManaged) memory */
  uintptr_t device_pointer; /* the device's address of a mapped host allocation, 0 if none */
  uintptr_t range_start;    /* the allocation holding the pointer, 0 and 0 if unknown */
  size_t range_size;
} akx__pointer_facts;

/* Whether [p, p + bytes) (bytes > 0) lies in memory a kernel on `device` can read and write,
 * from the facts of its first byte: device memory of that device and within its allocation's
 * range, managed memory, pinned host memory mapped at the same address (UVA), or any host
 * memory where the device reads pageable memory (pageable_access: HMM, ATS). One driver call
 * per array instead of one per end: the allocation's range covers the last byte. */
int akx__device_range_ok(const akx__pointer_facts *f, int device, int pageable_access, uintptr_t p,
                         size_t bytes);

/* Which way akx_context_set_stream learns a stream's device, from what cudaStreamGetDevice
 * returned (a cudaError_t as int): 0 use its answer (cudaSuccess), 1 ask the driver for the
 * stream's context and that context's device instead (the runtime is newer than the driver:
 * cudaStreamGetDevice, a late 12.x entry point, answers cudaErrorCallRequiresNewerDriver or
 * cudaErrorNotSupported under minor-version compatibility), 2 the stream is refused. */
int akx__stream_device_way(int cuda_error);

/* A kernel's attributes on one device, as libakx launches it (the table in src/core/launch_rules.c). */
typedef struct {
  int ptx_version;          /* cudaFuncAttributes::ptxVersion; the sim: its profile's cc */
  int64_t static_bytes;     /* its static shared memory */
  int64_t max_dynamic;      /* the dynamic shared memory its launches may ask for: the
                               attribute set once (akx__dynamic_smem_attribute), else the
                               static limit less static_bytes */
} akx__kernel_attributes;

/* AKX_SUCCESS when a launch asking for smem_bytes of dynamic shared memory fits the kernel's
 * attributes (max_dynamic); else AKX_ERROR_INVALID_ARGUMENT naming the kernel and the limit, the
 * sentence both backends give (the driver's own refusal names neither). */
akx_status akx__check_dynamic_smem(const char *kernel_name, int smem_optin, size_t smem_bytes,
                                   const akx__kernel_attributes *a);

/* Fills *out for (kernel, device) once; called under the table's process-wide lock, so that
 * an attribute it sets on the device is set once, before any launch reads it. */
typedef akx_status (*akx__kernel_attributes_fill)(const void *kernel, const void *device, void *arg,
                                                  akx__kernel_attributes *out);

/* The attributes of (kernel, device): from the table, or filled by `fill` on first use (a
 * failed fill is not kept). device: any value that tells devices apart (a CUDA ordinal, a sim
 * profile). Thread-safe. */
akx_status akx__kernel_attributes_get(const void *kernel, const void *device, akx__kernel_attributes_fill fill,
                                      void *arg, akx__kernel_attributes *out);

#ifdef __cplusplus
}
#endif
#endif
