/* The program's own shared library is private per rank: each rank bumps
 * libfoo's global counter rank+1 times and finds it at rank+1. */
#include <mpi.h>
#include <stdio.h>

extern int foo_counter;
int foo_bump(void);

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i <= rank; i++) foo_bump();
    MPI_Barrier(MPI_COMM_WORLD);
    int counter = foo_counter;
    printf("rank %d: counter %d bump %d\n", rank, counter, foo_bump());
    MPI_Finalize();
    return 0;
}
