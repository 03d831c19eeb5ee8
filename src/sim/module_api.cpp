// The sim runtime's entries as a table (kernels/akx/sim_device.hpp, AKX_SIM_RUNTIME): what a
// kernel module compiled at run time (src/jit/sim_module.cpp) calls, handed to it at load,
// since libakx exports nothing but akx_*.
#include "akx/device.cuh"
#include "akx/fail.h"

namespace akx::sim {

akx_status fail_text(akx_status status, const char *text) { return akx__fail(status, "%s", text); }

const runtime_api *runtime_table() {
#define AKX_SIM_RUNTIME_ENTRY_(R, name, params, args) &name,
  static const runtime_api table{AKX_SIM_RUNTIME_VERSION, (uint32_t)sizeof(runtime_api),
                                 AKX_SIM_RUNTIME(AKX_SIM_RUNTIME_ENTRY_)};
#undef AKX_SIM_RUNTIME_ENTRY_
  return &table;
}

}  // namespace akx::sim
