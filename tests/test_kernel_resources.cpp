// src/sim/kernel_resources.inc (ptxas's sm_90 registers and static shared memory of every
// built-in kernel instance, checked against each CUDA build by the kernel_resources ctest) as
// the sim reads it: every row is found by the launchers' lookup (the generator's order is the
// search's), a launch takes its instance's figures, and a kernel the table does not hold keeps
// its declaration.
#include <criterion/criterion.h>
#include <string.h>

#include "akx/reduce_dims.cuh"
#include "akx/reduce_whole.cuh"
#include "akx/scan.cuh"

namespace {
struct user_op {};  // not a built-in op: no row
}  // namespace

Test(kernel_resources, every_row_is_found) {
  const size_t n = akx::kernel_resources_count;
  cr_assert_gt(n, 1000u, "%zu rows", n);
  for (size_t i = 0; i < n; i++) {
    const akx::kernel_resources_row &r = akx::kernel_resources_table[i];
    const akx::kernel_resources_row *f = akx::sim::find_kernel_resources(r.function, r.src, r.dst, r.acc, r.op);
    cr_expect_eq(f, &r, "row %zu (%s, %d, %d, %d, %d) not found", i, r.function, r.src, r.dst, r.acc, r.op);
    cr_expect(r.registers > 0 && r.registers <= 255 && r.static_smem >= 0, "row %zu: %d registers", i,
              r.registers);
  }
}

Test(kernel_resources, launches_take_their_instances_figures) {
  const akx::kernel_resources_row *r =
      akx::sim::find_kernel_resources("reduce_whole_contiguous", AKX_FLOAT32, -1, AKX_FLOAT32, AKX_OP_ADD);
  cr_assert(r != nullptr, "no row for the float32 sum");
  const akx::kernel_info k =
      akx::resourced<float, void, float, akx::op_add>(akx::reduce_whole_contiguous_info);
  cr_expect_eq(k.registers, r->registers);
  cr_expect_eq(k.static_smem, r->static_smem);
  cr_expect_str_eq(k.name, "reduce_whole_contiguous");
  // A kernel launched under another name than its function's: the function's row.
  const akx::kernel_resources_row *t =
      akx::sim::find_kernel_resources("reduce_dims_tile", AKX_COMPLEX128, -1, AKX_COMPLEX128, AKX_OP_ADD);
  cr_assert(t != nullptr, "no row for reduce_dims_tile<complex128>");
  const akx::kernel_info c = akx::resourced<akx::c128, void, akx::c128, akx::op_add>(
      akx::reduce_dims_columns_info);
  cr_expect_eq(c.registers, t->registers);
  cr_expect_eq(c.static_smem, t->static_smem);
  cr_expect_str_eq(c.name, "reduce_dims_columns");
  // Static shared memory as the kernel declares it: 32 partials of the block reduction and the
  // int that tells the block it was the last to finish (kernels/akx/reduce_whole.cuh).
  cr_expect_eq(r->static_smem, 32 * (int)sizeof(float) + (int)sizeof(int));
}

Test(kernel_resources, kernels_without_a_row_keep_their_declaration) {
  const akx::kernel_info k = akx::resourced<float, void, float, user_op>(akx::scan_tile_info);
  cr_expect_eq(k.registers, akx::scan_tile_info.registers);
  cr_expect_eq(k.static_smem, -1);
}
