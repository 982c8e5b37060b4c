/* Per-call cost of barrier, allreduce 8 B and bcast 8 B at many ranks, for
 * any MPI (mpcrs thread-based, AMPI's virtual ranks): each operation is timed
 * over ITERS calls after one warm-up, and the slowest rank's time is printed.
 *
 * Usage: scale [iters]   (default 20) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double slowest(double t)
{
    double max;
    MPI_Allreduce(&t, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return max;
}

int main(int argc, char **argv)
{
    int rank, size, iters = argc > 1 ? atoi(argv[1]) : 20;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double in = rank, sum = 0, word = 0, t;

    MPI_Barrier(MPI_COMM_WORLD);
    t = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        MPI_Barrier(MPI_COMM_WORLD);
    double barrier = slowest(MPI_Wtime() - t) / iters;

    MPI_Allreduce(&in, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    t = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        MPI_Allreduce(&in, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double allreduce = slowest(MPI_Wtime() - t) / iters;
    int sum_ok = sum == (double) size * (size - 1) / 2;

    t = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        word = rank == 0 ? 42 : 0;
        MPI_Bcast(&word, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    }
    double bcast = slowest(MPI_Wtime() - t) / iters;

    if (rank == 0)
        printf("ranks=%d barrier_us=%.1f allreduce_us=%.1f bcast_us=%.1f %s\n", size,
               barrier * 1e6, allreduce * 1e6, bcast * 1e6,
               sum_ok && word == 42 ? "ok" : "WRONG");
    MPI_Finalize();
    return 0;
}
