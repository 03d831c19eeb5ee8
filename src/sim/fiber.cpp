// The stack pool behind the sim's fibers: one mapping of guard page + stack per thread
// slot, committed by the kernel only as far as a thread's stack really grows.
#include "sim/fiber.hpp"

#include <sys/mman.h>
#include <unistd.h>

#ifdef AKX_SIM_ASAN_FIBERS
#include <sanitizer/asan_interface.h>
#endif

namespace akx::sim {
namespace {
size_t page_bytes() {
  static const size_t bytes = size_t(sysconf(_SC_PAGESIZE));
  return bytes;
}
size_t slot_bytes() { return page_bytes() + stack_pool::stack_bytes; }

// Under ASan: clears the shadow of [p, p + bytes) (a stack about to be reused, a region of
// stacks mapped or unmapped), so that no poison of frames that never returned is left for
// whatever runs there next.
void unpoison(void *p, size_t bytes) {
#ifdef AKX_SIM_ASAN_FIBERS
  ASAN_UNPOISON_MEMORY_REGION(p, bytes);
#else
  (void)p;
  (void)bytes;
#endif
}
}  // namespace

stack_pool::~stack_pool() {
  if (region_ != nullptr) {
    unpoison(region_, region_bytes_);
    munmap(region_, region_bytes_);
  }
}

bool stack_pool::reserve(size_t count) {
  if (count <= count_) return true;
  // Grow in steps of 256 slots so that a few launches of growing blocks map only once.
  size_t want = (count + 255) / 256 * 256;
  size_t bytes = want * slot_bytes();
  void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return false;
  char *region = static_cast<char *>(p);
  for (size_t i = 0; i < want; ++i)  // the guard page sits below each stack (stacks grow down)
    if (mprotect(region + i * slot_bytes(), page_bytes(), PROT_NONE) != 0) {
      munmap(region, bytes);
      return false;
    }
  unpoison(region, bytes);
  if (region_ != nullptr) {
    unpoison(region_, region_bytes_);
    munmap(region_, region_bytes_);
  }
  region_ = region;
  region_bytes_ = bytes;
  count_ = want;
  return true;
}

void stack_pool::start(fiber &f, size_t i, void (*entry)(fctx::transfer_t)) const {
  char *top = region_ + (i + 1) * slot_bytes();
  // Under ASan: the fiber that ran on this stack before never returned from its last frames
  // (a returned thread's switch away, an abandoned one's failed check), and their redzone
  // and out-of-scope poison is still in the shadow. A function's prologue poisons only its
  // own redzones and takes its variables' shadow as clean, so the new fiber's frames at those
  // addresses would read as stack-use-after-scope: clear the stack's shadow first (8 KiB).
  unpoison(top - stack_bytes, stack_bytes);
  f.ctx = fctx::make_fcontext(top, stack_bytes, entry);
  f.stack_bottom = top - stack_bytes;
  f.stack_size = stack_bytes;
}
}  // namespace akx::sim
