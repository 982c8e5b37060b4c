/* Each rank prints what its environment says of its place in the job, under
 * Open MPI's and MPICH's names, beside its MPI rank and size. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static const char *var(const char *name) {
  const char *v = getenv(name);
  return v ? v : "unset";
}

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  printf("rank %d of %d: PMI_RANK=%s PMI_SIZE=%s OMPI_COMM_WORLD_RANK=%s "
         "OMPI_COMM_WORLD_SIZE=%s OMPI_COMM_WORLD_LOCAL_RANK=%s "
         "OMPI_COMM_WORLD_LOCAL_SIZE=%s MPI_LOCALRANKID=%s MPI_LOCALNRANKS=%s\n",
         rank, size, var("PMI_RANK"), var("PMI_SIZE"),
         var("OMPI_COMM_WORLD_RANK"), var("OMPI_COMM_WORLD_SIZE"),
         var("OMPI_COMM_WORLD_LOCAL_RANK"), var("OMPI_COMM_WORLD_LOCAL_SIZE"),
         var("MPI_LOCALRANKID"), var("MPI_LOCALNRANKS"));
  MPI_Finalize();
  return 0;
}
