// The start of every kernel module the sim compiles at run time (src/jit/sim_module.cpp),
// included after AKX_SIM_MODULE is defined: the module's half of the runtime table
// (kernels/akx/sim_device.hpp, AKX_SIM_RUNTIME), its own akx__fail, and the one symbol
// libakx looks up before any entry, akx_sim_module_init.
#pragma once
#include <stdarg.h>
#include <stdio.h>

#include "akx/device.cuh"
#include "akx/fail.h"

namespace akx::sim {
const runtime_api *module_runtime = nullptr;
}  // namespace akx::sim

// The launchers' sentences: formatted here (varargs do not cross the table), kept by libakx.
extern "C" __attribute__((visibility("hidden"))) akx_status akx__fail(akx_status s, const char *fmt, ...) {
  char text[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  return ::akx::sim::module_runtime->fail_text(s, text);
}

// 0 when the table is the one this module was compiled against, else 1 (libakx refuses it).
AKX_MODULE_EXPORT int akx_sim_module_init(const ::akx::sim::runtime_api *api) {
  if (!api || api->version != AKX_SIM_RUNTIME_VERSION || api->size != sizeof(::akx::sim::runtime_api))
    return 1;
  ::akx::sim::module_runtime = api;
  return 0;
}
