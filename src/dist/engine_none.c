/* Stand-ins for an engine this build of libakx_dist was made without (CMake compiles this file
 * with AKX_DIST_NO_MPI and/or AKX_DIST_NO_NCCL). */
#include "internal.h"

#ifdef AKX_DIST_NO_MPI
akx_status akx_comm_create_mpi(akx_context *ctx, const void *mpi_comm, akx_comm **comm) {
  (void)ctx, (void)mpi_comm, (void)comm;
  return akx__dist_fail(AKX_ERROR_UNSUPPORTED,
                        "akx_comm_create_mpi: this libakx_dist was built without MPI");
}
#endif
#ifdef AKX_DIST_NO_NCCL
akx_status akx_comm_create_nccl(akx_context *ctx, void *nccl_comm, akx_comm **comm) {
  (void)ctx, (void)nccl_comm, (void)comm;
  return akx__dist_fail(AKX_ERROR_UNSUPPORTED,
                        "akx_comm_create_nccl: this libakx_dist was built without NCCL");
}
#endif
