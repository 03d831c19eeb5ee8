// The CUDA driver's version, for choosing the NVRTC whose output the driver can load
// (src/jit/nvrtc.h, akx__nvrtc_choose). A file of its own so that src/jit stays host C.
#include <cuda_runtime.h>

extern "C" int akx__cuda_driver_version(void) {
  int version = 0;
  // 0 with cudaSuccess when no driver is installed (the CUDA runtime API reference); an error
  // is read as no driver too, and taken back out of the thread's last-error slot, which
  // belongs to the caller's own CUDA calls.
  if (cudaDriverGetVersion(&version) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return version;
}
