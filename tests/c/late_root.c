/* Ranks waiting in a collective for a late root: rank 0 computes for
 * argv[1] seconds before MPI_Bcast; every other rank prints the CPU time its
 * process used while it waited, and how long it waited. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double late = argc > 1 ? atof(argv[1]) : 2.0;
    MPI_Barrier(MPI_COMM_WORLD);
    int value = 0;
    double t0 = MPI_Wtime(), c0 = cpu_seconds();
    if (rank == 0) {
        volatile double x = 0;
        while (MPI_Wtime() - t0 < late)
            x += 1.0;
        value = 42;
    }
    MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);
    double waited = MPI_Wtime() - t0, cpu = cpu_seconds() - c0;
    if (rank != 0)
        printf("rank %d waited %.3f s using %.3f s of CPU, got %d\n", rank, waited, cpu, value);
    MPI_Finalize();
    return 0;
}
