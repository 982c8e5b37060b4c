/* Rank 2 writes through a null pointer inside a function of its own name;
 * the others wait at a barrier it never reaches. The pointer is read from a
 * volatile global so that the compiler keeps the store (a literal NULL store
 * would become a trap instruction). */
#include <mpi.h>
#include <stdio.h>

int *volatile nowhere = NULL;

__attribute__((noinline)) void crash_here(int value) { *nowhere = value; }

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 2)
    crash_here(42);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
