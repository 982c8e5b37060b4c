/* exit() from a rank ends that rank as if main returned, after its atexit
 * handlers; a line a rank writes in pieces across MPI calls stays whole, and
 * what it left unterminated comes out at its end. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int rank;

static void handler(void) { printf("rank %d: atexit handler\n", rank); }

static void leave(int code) {
    printf("rank %d: leaving", rank);
    exit(code);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    atexit(handler);
    printf("rank %d: first half", rank);
    MPI_Barrier(MPI_COMM_WORLD);
    printf(", second half\n");
    MPI_Finalize();
    leave(0);
    printf("rank %d: after exit\n", rank);
    return 3;
}
