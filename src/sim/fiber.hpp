// Fibers: the CUDA threads of a block, each on a stack of a pool that lives as long as the
// runtime, switched with Boost.Context's fcontext (a few instructions, no syscall).
//
// A fiber is only a saved context. Starting a thread puts a fresh context on its pooled
// stack (make_fcontext: no allocation), so blocks and launches reuse the same stacks; a
// fresh stack per thread per block was measured 70x slower. A fiber that is abandoned
// (after a failed check) is simply never resumed: its stack is reused by the next block.
#pragma once
#include <stddef.h>

#include <boost/context/detail/fcontext.hpp>

// AddressSanitizer must be told of every stack switch (it keeps the bounds of the running
// stack, for __asan_handle_no_return and its reports, and a fake stack per fiber when
// detect_stack_use_after_return is on); without ASan the annotations compile to nothing.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AKX_SIM_ASAN_FIBERS 1
#endif
#endif
#if !defined(AKX_SIM_ASAN_FIBERS) && defined(__SANITIZE_ADDRESS__)
#define AKX_SIM_ASAN_FIBERS 1
#endif
#ifdef AKX_SIM_ASAN_FIBERS
#include <sanitizer/common_interface_defs.h>
#endif

namespace akx::sim {
namespace fctx = boost::context::detail;

struct fiber {
  fctx::fcontext_t ctx = nullptr;
  // The stack the fiber runs on, for ASan's switch annotations (kept in every build, so
  // that the layout does not depend on the flags): a pooled stack's are set by
  // stack_pool::start; the scheduler's (the OS thread's own stack) are learned at the
  // first switch away from it, from __sanitizer_finish_switch_fiber on the other side.
  const void *stack_bottom = nullptr;
  size_t stack_size = 0;
};

#ifdef AKX_SIM_ASAN_FIBERS
// After a jump, on the side that is resumed: tells ASan the switch is complete (restoring
// this fiber's fake stack, if it has one) and records the bounds of the stack it came from
// in `prev`, which is how the scheduler's stack becomes known.
inline void asan_switch_finished(void *fake_stack_save, fiber *prev) {
  const void *bottom = nullptr;
  size_t size = 0;
  __sanitizer_finish_switch_fiber(fake_stack_save, &bottom, &size);
  prev->stack_bottom = bottom;
  prev->stack_size = size;
}
#endif

// Suspends `from` (the caller's own fiber, or the scheduler's) and resumes `to`. Every
// jump carries the suspended side's fiber, so whoever is resumed stores the context it
// was jumped from: fibers hand over to each other directly, one jump per switch.
inline void switch_fiber(fiber *from, fiber *to) {
#ifdef AKX_SIM_ASAN_FIBERS
  // Every switch saves the suspended side's fake stack, also the last switch of a fiber that
  // has returned or been abandoned: such a fiber's fake stack (ASan's use-after-return
  // frames, ~1 MiB each) would never be freed. Run with detect_stack_use_after_return=0
  // (the asan preset does): then no fiber has one.
  void *fake_stack_save = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack_save, to->stack_bottom, to->stack_size);
  fctx::transfer_t t = fctx::jump_fcontext(to->ctx, from);
  static_cast<fiber *>(t.data)->ctx = t.fctx;
  asan_switch_finished(fake_stack_save, static_cast<fiber *>(t.data));
#else
  fctx::transfer_t t = fctx::jump_fcontext(to->ctx, from);
  static_cast<fiber *>(t.data)->ctx = t.fctx;
#endif
}

// Call first thing in a fiber's entry function: completes the jump that started it.
inline void fiber_started(fctx::transfer_t t) {
#ifdef AKX_SIM_ASAN_FIBERS
  asan_switch_finished(nullptr, static_cast<fiber *>(t.data));  // a new fiber: no fake stack yet
#endif
  static_cast<fiber *>(t.data)->ctx = t.fctx;
}

class stack_pool {
 public:
  // 64 KiB: kernels keep small arrays of loads in flight, and an error sentence is
  // formatted on the fiber's stack; a guard page below each stack turns an overflow into
  // a crash instead of corruption.
  static constexpr size_t stack_bytes = size_t(64) << 10;

  stack_pool() = default;
  stack_pool(const stack_pool &) = delete;
  stack_pool &operator=(const stack_pool &) = delete;
  ~stack_pool();

  // Makes sure `count` stacks exist (never while fibers run on them). False when the
  // memory cannot be mapped.
  bool reserve(size_t count);
  // Gives `f` a fresh context on stack `i` that runs `entry` when first switched to.
  void start(fiber &f, size_t i, void (*entry)(fctx::transfer_t)) const;

 private:
  char *region_ = nullptr;
  size_t region_bytes_ = 0;
  size_t count_ = 0;
};
}  // namespace akx::sim
