#include <mpi.h>
#include <stdio.h>
int rank_sum(void);
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, s = rank_sum();
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("sum %d\n", s);
  MPI_Finalize();
  return 0;
}
