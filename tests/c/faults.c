/* A fault in one rank of a C program: after a barrier, rank 2 writes through
 * a bad pointer ("segv"), or recurses without end with 2 KiB frames
 * ("overflow"). The others wait at a second barrier. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int deep(int n) {
  volatile char frame[2048];
  memset((char *)frame, n, sizeof frame);
  return n == 0 ? 0 : frame[7] + deep(n - 1);
}

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 2 && argc > 1 && strcmp(argv[1], "overflow") == 0)
    printf("%d\n", deep(1 << 30));
  if (rank == 2 && argc > 1 && strcmp(argv[1], "segv") == 0)
    *(volatile int *)16 = 1;
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
