/* Output of every rank for the launcher's labels and files: two lines on
 * stdout (printf, then puts), one on stderr, and a last stdout line without
 * its newline. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  printf("first line of rank %d\n", rank);
  char second[64];
  snprintf(second, sizeof second, "second line of rank %d", rank);
  puts(second);
  fprintf(stderr, "error line of rank %d\n", rank);
  MPI_Barrier(MPI_COMM_WORLD);
  printf("unfinished line of rank %d", rank);
  MPI_Finalize();
  return 0;
}
