/* How many CUDA runtime and driver API calls libakx made on the calling thread (every cuda* and
 * cu* call of src/cuda/, and each launch of kernels/akx/device.cuh's and src/cuda/'s launch
 * code), since the thread started. The library's small-size goal is one launch per call: a CUDA test reads this before
 * and after a call and asserts the host work per call. 0 in a build without the CUDA backend. */
#ifndef AKX_CUDA_API_CALLS_H
#define AKX_CUDA_API_CALLS_H
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
uint64_t akx__cuda_api_calls(void);
/* Counts n more (src/cuda/ files other than the backend's). */
void akx__cuda_api_calls_add(uint64_t n);
#ifdef __cplusplus
}
#endif
#endif
