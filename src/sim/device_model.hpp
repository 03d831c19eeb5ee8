// The device model (kernels/akx/device.cuh, sim side: sim_device.hpp) as the runtime includes
// it: its types and the functions kernels report to, without the names that are macros for
// kernel code (threadIdx, ...) and would replace the runtime's own fields of those names.
#pragma once
#include "akx/device.cuh"

#undef threadIdx
#undef blockIdx
#undef blockDim
#undef gridDim
#undef warpSize
