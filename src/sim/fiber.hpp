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

namespace akx::sim {
namespace fctx = boost::context::detail;

struct fiber {
  fctx::fcontext_t ctx = nullptr;
};

// Suspends `from` (the caller's own fiber, or the scheduler's) and resumes `to`. Every
// jump carries the suspended side's fiber, so whoever is resumed stores the context it
// was jumped from: fibers hand over to each other directly, one jump per switch.
inline void switch_fiber(fiber *from, fiber *to) {
  fctx::transfer_t t = fctx::jump_fcontext(to->ctx, from);
  static_cast<fiber *>(t.data)->ctx = t.fctx;
}

// Call first thing in a fiber's entry function: completes the jump that started it.
inline void fiber_started(fctx::transfer_t t) { static_cast<fiber *>(t.data)->ctx = t.fctx; }

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
