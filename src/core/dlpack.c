/* akx_array_from_dlpack: a DLPack tensor's descriptor as an akx_array (include/akx_dlpack.h).
 * Everything is checked on a local descriptor; *out is written last, on success only. */
#include <inttypes.h>
#include <stdint.h>
#include <string.h>
#include "akx_dlpack.h"
#include "internal.h"

/* DLPack's codes by value: DLPack 0.6 (Debian 12's header) has no kDLBool and no device
 * types past kDLCUDAManaged, and these values are DLPack's ABI. */
enum { DL_INT = 0, DL_UINT = 1, DL_FLOAT = 2, DL_OPAQUE = 3, DL_BFLOAT = 4, DL_COMPLEX = 5,
       DL_BOOL = 6 };
enum { DL_CPU = 1, DL_CUDA = 2, DL_CUDA_MANAGED = 13 };

/* The akx_dtype of a DLPack (code, bits), or AKX_DTYPE_AUTO for none. */
static akx_dtype dtype_of(uint8_t code, uint8_t bits) {
  static const struct {
    uint8_t code, bits;
    akx_dtype t;
  } table[] = {
      {DL_BOOL, 8, AKX_BOOL},        {DL_INT, 8, AKX_INT8},         {DL_UINT, 8, AKX_UINT8},
      {DL_INT, 16, AKX_INT16},       {DL_UINT, 16, AKX_UINT16},     {DL_INT, 32, AKX_INT32},
      {DL_UINT, 32, AKX_UINT32},     {DL_INT, 64, AKX_INT64},       {DL_UINT, 64, AKX_UINT64},
      {DL_FLOAT, 16, AKX_FLOAT16},   {DL_BFLOAT, 16, AKX_BFLOAT16}, {DL_FLOAT, 32, AKX_FLOAT32},
      {DL_FLOAT, 64, AKX_FLOAT64},   {DL_COMPLEX, 64, AKX_COMPLEX64},
      {DL_COMPLEX, 128, AKX_COMPLEX128}};
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (table[i].code == code && table[i].bits == bits) return table[i].t;
  return AKX_DTYPE_AUTO;
}

static const char *code_name(uint8_t code) {
  static const char *const names[] = {"int", "uint", "float", "opaque handle", "bfloat",
                                      "complex", "bool"};
  return code < sizeof names / sizeof names[0] ? names[code] : "unknown";
}

static const char *device_name(int type) {
  switch (type) {
    case 1: return "CPU";
    case 2: return "CUDA";
    case 3: return "CUDA host (pinned)";
    case 4: return "OpenCL";
    case 7: return "Vulkan";
    case 8: return "Metal";
    case 9: return "VPI";
    case 10: return "ROCm";
    case 11: return "ROCm host";
    case 12: return "ext_dev";
    case 13: return "CUDA managed";
    case 14: return "oneAPI";
    case 15: return "WebGPU";
    case 16: return "Hexagon";
  }
  return "unknown";
}

akx_status akx_array_from_dlpack(const DLTensor *t, akx_array *out) {
  if (!t) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "t is NULL: pass the DLTensor to convert");
  if (!out) return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "out is NULL: nowhere to write the akx_array");
  if (t->ndim < 0)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "t->ndim is %d; it must be >= 0", (int)t->ndim);
  if (t->ndim > AKX_MAX_DIMS)
    return akx__fail(AKX_ERROR_UNSUPPORTED, "t->ndim is %d; libakx takes at most %d dimensions",
                     (int)t->ndim, AKX_MAX_DIMS);
  if (t->dtype.lanes != 1)
    return akx__fail(AKX_ERROR_UNSUPPORTED,
                     "t->dtype.lanes is %u; libakx takes scalar elements only (lanes = 1)",
                     (unsigned)t->dtype.lanes);
  const akx_dtype dtype = dtype_of(t->dtype.code, t->dtype.bits);
  if (dtype == AKX_DTYPE_AUTO)
    return akx__fail(AKX_ERROR_UNSUPPORTED,
                     "t->dtype is code %u (%s) with %u bits, which is no libakx dtype (it takes "
                     "bool 8, int and uint 8..64, float 16/32/64, bfloat 16, complex 64/128)",
                     (unsigned)t->dtype.code, code_name(t->dtype.code), (unsigned)t->dtype.bits);
  const int dev = (int)t->device.device_type;
  if (dev != DL_CPU && dev != DL_CUDA && dev != DL_CUDA_MANAGED)
    return akx__fail(AKX_ERROR_UNSUPPORTED,
                     "t->device.device_type is %d (%s): libakx reads CUDA (2) or CUDA managed (13) "
                     "memory, or CPU (1) memory on the sim",
                     dev, device_name(dev));
  if ((int)t->device.device_id < 0)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "t->device.device_id is %d; it must be >= 0",
                     (int)t->device.device_id);
  if (t->ndim > 0 && !t->shape)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "t->shape is NULL with t->ndim = %d",
                     (int)t->ndim);
  if ((uintptr_t)t->byte_offset != t->byte_offset ||
      (uintptr_t)t->byte_offset > UINTPTR_MAX - (uintptr_t)t->data)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "t->byte_offset = %" PRIu64 " from t->data = %p is past the address space",
                     t->byte_offset, t->data);

  akx_array a;
  memset(&a, 0, sizeof a);
  a.data = (void *)((uintptr_t)t->data + (uintptr_t)t->byte_offset);
  a.dtype = dtype;
  a.ndim = t->ndim;
  int64_t stride = 1; /* compact row-major, for NULL strides */
  for (int32_t d = t->ndim - 1; d >= 0; --d) {
    if (t->shape[d] < 0)
      return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "t->shape[%d] is %" PRId64 "; shapes must be >= 0",
                       (int)d, t->shape[d]);
    a.shape[d] = t->shape[d];
    a.strides[d] = t->strides ? t->strides[d] : stride;
    /* as akx_array_c: a product past int64 leaves a stride the extent check refuses */
    if (__builtin_mul_overflow(stride, t->shape[d] > 0 ? t->shape[d] : 1, &stride))
      stride = INT64_MAX;
  }
  /* counts and offsets in int64 (the sentence names t->shape / t->strides) */
  akx__extent ext;
  AKX_TRY(akx__check_array(NULL, &a, "t", AKX__ARRAY_SOURCE, &ext));
  if (ext.count > 0 && !t->data)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT, "t->data is NULL but t has %" PRId64 " elements",
                     ext.count);
  if ((uintptr_t)a.data % akx__dtype_alignment(dtype) != 0)
    return akx__fail(AKX_ERROR_INVALID_ARGUMENT,
                     "t->data + t->byte_offset = %p is not aligned to its %s elements (%zu bytes)",
                     a.data, akx_dtype_name(dtype), akx__dtype_alignment(dtype));
  *out = a;
  return AKX_SUCCESS;
}
