// What one warp request costs, as Nsight Compute counts it (definitions: include/akx_sim.h).
#pragma once
#include <stdint.h>

namespace akx::sim {

struct request_cost {
  uint64_t requests;  // instructions: an access wider than 16 bytes is several
  uint64_t units;     // wavefronts (shared) or sectors (global)
  uint64_t ideal;
  uint64_t bytes;     // bytes moved by the lanes
};

// The bytes a lane moves per instruction when it accesses `bytes` of a type aligned to
// `alignment` (0: a scalar of `bytes`): the largest power of two <= 16 that divides both
// (a float4: one 16-byte access; a struct of two doubles: two 8-byte ones; a 12-byte struct
// of floats: three 4-byte ones).
uint32_t instruction_bytes(uint32_t bytes, uint32_t alignment);

// addr[lane] for each lane in `mask` (shared: offsets in the block's arena); each lane moves
// `bytes` in instructions of `width` bytes (instruction_bytes), each instruction a request.
request_cost shared_request_cost(const uint64_t *addr, uint32_t mask, uint32_t bytes,
                                 uint32_t width);
request_cost global_request_cost(const uint64_t *addr, uint32_t mask, uint32_t bytes,
                                 uint32_t width);
}  // namespace akx::sim
