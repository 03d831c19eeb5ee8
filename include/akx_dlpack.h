/* libakx: arrays from DLPack tensors (https://dmlc.github.io/dlpack/).
 *
 * DLPack's own header is used when the compiler finds <dlpack/dlpack.h> (Debian:
 * libdlpack-dev). Without it this file declares the part of DLPack that libakx reads
 * (DLDeviceType, DLDevice, DLDataTypeCode, DLDataType, DLTensor) with DLPack's names, values
 * and layout, under DLPack's include guard, so that a program including the real header
 * after this one gets no second definition (include the real one first to have all of it).
 * The layout is DLPack's ABI, unchanged from 0.6 to 1.x. Define AKX_DLPACK_OWN_DEFINITIONS
 * to use this file's declarations even where the real header exists. */
#ifndef AKX_DLPACK_H
#define AKX_DLPACK_H

#include "akx.h"

#if !defined(DLPACK_DLPACK_H_) && !defined(AKX_DLPACK_OWN_DEFINITIONS) && defined(__has_include)
#if __has_include(<dlpack/dlpack.h>)
#include <dlpack/dlpack.h>
#endif
#endif

#ifndef DLPACK_DLPACK_H_
#define DLPACK_DLPACK_H_
#define AKX_DLPACK_DECLARED_HERE 1
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
typedef enum {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,
  kDLOpenCL = 4,
  kDLVulkan = 7,
  kDLMetal = 8,
  kDLVPI = 9,
  kDLROCM = 10,
  kDLROCMHost = 11,
  kDLExtDev = 12,
  kDLCUDAManaged = 13,
  kDLOneAPI = 14,
  kDLWebGPU = 15,
  kDLHexagon = 16
} DLDeviceType;
typedef struct {
  DLDeviceType device_type;
  int32_t device_id;
} DLDevice;
typedef enum {
  kDLInt = 0U,
  kDLUInt = 1U,
  kDLFloat = 2U,
  kDLOpaqueHandle = 3U,
  kDLBfloat = 4U,
  kDLComplex = 5U,
  kDLBool = 6U
} DLDataTypeCode;
typedef struct {
  uint8_t code;  /* a DLDataTypeCode */
  uint8_t bits;
  uint16_t lanes;
} DLDataType;
typedef struct {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape;
  int64_t *strides;      /* in elements; NULL: compact row-major */
  uint64_t byte_offset;
} DLTensor;
#ifdef __cplusplus
}
#endif
#endif /* DLPACK_DLPACK_H_ */

#ifdef __cplusplus
extern "C" {
#endif

/* The akx_array of a DLPack tensor: *out describes the same elements, written on success
 * only. Nothing is copied and nothing is kept: t and its shape and strides may go once the
 * call returns (the memory at t->data must live as long as *out is used).
 *  - data: t->data + t->byte_offset.
 *  - dtype: (code, bits) kDLBool 8; kDLInt and kDLUInt 8, 16, 32, 64; kDLFloat 16, 32, 64;
 *    kDLBfloat 16; kDLComplex 64, 128 (complex64, complex128).
 *  - shape and strides: copied; strides are in elements as in akx_array, any sign, 0 allowed
 *    (a source). NULL strides mean compact row-major, as DLPack defines them (a Julia array
 *    handed over through DLPack carries its column-major strides, so it is not transposed).
 *  - device: kDLCUDA and kDLCUDAManaged (for the CUDA backend) or kDLCPU (for the sim, whose
 *    device memory is host memory). Which context may read the memory is checked by the call
 *    that takes the array (the sim reads only memory from akx_malloc, CUDA only memory its
 *    device can address); the device ordinal is not compared here.
 * Refused, with a sentence naming the field: AKX_ERROR_INVALID_ARGUMENT for t or out NULL,
 * ndim < 0, a NULL shape (ndim > 0), a negative shape, a negative device_id, NULL data with
 * elements, data + byte_offset past the address space or not aligned to the element, offsets
 * past int64; AKX_ERROR_UNSUPPORTED for a dtype libakx does not have (float8, opaque handles,
 * bits that match no dtype), lanes != 1 (vector elements), ndim > AKX_MAX_DIMS, and a device
 * it cannot read (device mismatch: kDLCUDAHost, ROCm, OpenCL, Vulkan, Metal, ...). */
akx_status akx_array_from_dlpack(const DLTensor *t, akx_array *out);

#ifdef __cplusplus
}
#endif
#endif /* AKX_DLPACK_H */
