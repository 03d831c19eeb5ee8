/* The MPI engine: MPI_Allgather of bytes on host buffers (MPI need not be CUDA-aware: the
 * partials come here through host staging, src/dist/comm.c). Built when CMake finds MPI. */
#include <mpi.h>
#include <stdlib.h>
#include "internal.h"

static MPI_Comm *mpi_of(akx_comm *c) { return (MPI_Comm *)c->handle; }

static akx_status mpi_allgather(akx_comm *c, const void *send, void *recv, size_t bytes) {
  if (bytes > (size_t)INT32_MAX)
    return akx__dist_fail(AKX_ERROR_UNSUPPORTED, "libakx_dist: %zu bytes per rank in one exchange "
                          "(MPI counts are int)", bytes);
  const int rc = MPI_Allgather(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE, *mpi_of(c));
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    return akx__dist_fail(AKX_ERROR_DEVICE, "libakx_dist: MPI_Allgather failed: %s", text);
  }
  c->counters.exchanges++;
  c->counters.bytes_sent += bytes;
  c->counters.bytes_received += bytes * (uint64_t)(c->size - 1);
  return AKX_SUCCESS;
}

static void mpi_destroy(akx_comm *c) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Comm_free(mpi_of(c));
  free(c->handle);
}

static const akx__dist_engine mpi_engine = {"mpi", 0, mpi_allgather, mpi_allgather, mpi_destroy};

akx_status akx_comm_create_mpi(akx_context *ctx, const void *mpi_comm, akx_comm **comm) {
  if (!ctx) return akx__dist_fail(AKX_ERROR_INVALID_ARGUMENT, "akx_comm_create_mpi: ctx is NULL");
  if (!mpi_comm)
    return akx__dist_fail(AKX_ERROR_INVALID_ARGUMENT, "akx_comm_create_mpi: mpi_comm is NULL "
                          "(pass the address of an MPI_Comm)");
  if (!comm) return akx__dist_fail(AKX_ERROR_INVALID_ARGUMENT, "akx_comm_create_mpi: comm is NULL");
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized)
    return akx__dist_fail(AKX_ERROR_INVALID_ARGUMENT, "akx_comm_create_mpi: MPI is not initialized "
                          "(call MPI_Init first)");
  MPI_Comm *dup = malloc(sizeof *dup);
  if (!dup) return akx__dist_fail(AKX_ERROR_OUT_OF_MEMORY, "akx_comm_create_mpi: the communicator");
  /* Our own communicator: our collectives never match the caller's messages. */
  int rc = MPI_Comm_dup(*(const MPI_Comm *)mpi_comm, dup);
  if (rc != MPI_SUCCESS) {
    free(dup);
    return akx__dist_fail(AKX_ERROR_DEVICE, "akx_comm_create_mpi: MPI_Comm_dup failed (%d)", rc);
  }
  int rank = 0, size = 0;
  MPI_Comm_rank(*dup, &rank);
  MPI_Comm_size(*dup, &size);
  akx_status s = akx__dist_comm_new(ctx, &mpi_engine, dup, rank, size, comm);
  if (s != AKX_SUCCESS) {
    MPI_Comm_free(dup);
    free(dup);
  }
  return s;
}
