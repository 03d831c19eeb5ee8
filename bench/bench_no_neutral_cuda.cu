// The CUDA instance of akx-bench's no-neutral-element scan (bench_no_neutral.cpp dispatches).
#include "bench_no_neutral.h"
#define AKX_NN_ENTRY akx_bench_no_neutral_scan_cuda
#include "no_neutral_scan.inl"
