// Failed checks: one sentence in akx_last_error() naming the check, the kernel, the block,
// the thread and the source line; then the launch stops. A failing fiber is abandoned
// (never resumed: its stack is reused by the next block), the scheduler sees the launch
// marked failed and runs no further thread or block.
#include <stdarg.h>
#include <stdio.h>

#include "error.h"
#include "sim/runtime.hpp"

namespace akx::sim {
namespace {
void vrecord_failure(runtime &rt, const thread_slot &th, const char *check, const site &where,
                     const char *fmt, va_list ap) {
  if (rt.launch.failed) return;  // the first failure is the one to fix
  rt.launch.failed = true;
  char detail[1024];
  vsnprintf(detail, sizeof detail, fmt, ap);
  const thread_view &v = th.view;
  akx__fail(AKX_ERROR_SIM_CHECK,
            "sim check failed (%s) in kernel '%s', block (%u,%u,%u), thread (%u,%u,%u), at "
            "%s:%u: %s",
            check, rt.launch.name, v.blockIdx.x, v.blockIdx.y, v.blockIdx.z, v.threadIdx.x,
            v.threadIdx.y, v.threadIdx.z, file_basename(where.file_name()),
            unsigned(where.line()), detail);
}
}  // namespace

void record_failure(runtime &rt, const thread_slot &th, const char *check, const site &where,
                    const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vrecord_failure(rt, th, check, where, fmt, ap);
  va_end(ap);
}

void fail_thread(runtime &rt, thread_slot &th, const char *check, const site &where,
                 const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vrecord_failure(rt, th, check, where, fmt, ap);
  va_end(ap);
  abandon_thread(rt, th);
}

void abandon_thread(runtime &rt, thread_slot &th) {
  rt.launch.failed = true;
  lane_now = nullptr;
  switch_fiber(&th.fib, &rt.scheduler);
  __builtin_unreachable();  // nobody resumes an abandoned fiber
}
}  // namespace akx::sim
