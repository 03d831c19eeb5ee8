// The look-back header's fields the host reads, as byte offsets taken from the struct the
// kernels write (kernels/akx/lookback.cuh, lookback_header): named once, there, for device and
// host alike; the tile layer's count-back (src/tile/tile.c) reads the count at this offset.
#include <cstddef>

#include "internal.h"
#include "tile/tile.h"
#include "akx/lookback.cuh"

extern "C" const size_t akx__lookback_count_offset = offsetof(akx::lookback_header, count);
static_assert(sizeof(((akx::lookback_header *)nullptr)->count) == sizeof(int64_t) &&
                  offsetof(akx::lookback_header, second_count) == offsetof(akx::lookback_header, count) + sizeof(int64_t),
              "the count-back copies one int64, or two: count and second_count side by side");
