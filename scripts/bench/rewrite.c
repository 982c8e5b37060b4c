/* Memory rewritten between checkpoints, for incremental images: each rank
 * holds MIB MiB of doubles (a smooth field, as a solver's), then before each
 * of EPOCHS checkpoints rewrites PCT percent of it (a block that moves on
 * every epoch: x = 0.999 x + 0.001 y, y the value beside it); then, with
 * AFTER > 0, rewrites the whole field AFTER times with no checkpoint (what
 * tracking written pages costs a program between checkpoints).
 * Usage: rewrite MIB PCT EPOCHS [AFTER]
 * Prints (rank 0) the compute time summed over the epochs (without the
 * checkpoints), the time of the passes after them, and a checksum. Built
 * with -DWITH_MPIX to checkpoint. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    if (argc < 4) {
        fprintf(stderr, "usage: rewrite MIB PCT EPOCHS [AFTER]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long n = atol(argv[1]) * 1048576L / 8;
    int pct = atoi(argv[2]), epochs = atoi(argv[3]), after = argc > 4 ? atoi(argv[4]) : 0, rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double *x = malloc(n * sizeof(double));
    if (!x) MPI_Abort(MPI_COMM_WORLD, 3);
    for (long i = 0; i < n; i++) x[i] = sin(i * 1e-4 + rank) * 100.0;
    long block = n / 100 * pct;
    double compute = 0;
    for (int e = 0; e < epochs; e++) {
        double t0 = MPI_Wtime();
        long from = (long)e * block % n;
        for (long k = 0; k < block; k++) {
            long i = (from + k) % n;
            x[i] = 0.999 * x[i] + 0.001 * x[(i + 1) % n];
        }
        compute += MPI_Wtime() - t0;
#ifdef WITH_MPIX
        MPIX_CR_state_t state;
        MPIX_Checkpoint(&state);
        if (rank == 0 && state == MPIX_CR_STATE_RESTART) printf("restarted at %d\n", e + 1);
#endif
    }
    /* The first pass pays each page's first write since the last
     * checkpoint (a fault, tracked or copy-on-write alike); the others
     * write pages already written since. */
    double first = 0, rest = 0;
    for (int a = 0; a < after; a++) {
        double t = MPI_Wtime();
        for (long i = 0; i < n; i++) x[i] = 0.999 * x[i] + 0.001 * x[(i + 1) % n];
        t = MPI_Wtime() - t;
        if (a == 0) first = t; else rest += t;
    }
    double local = 0, sum = 0, worst = 0, worst_first = 0, worst_rest = 0;
    for (long i = 0; i < n; i += 64) local += x[i];
    MPI_Reduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&compute, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&first, &worst_first, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&rest, &worst_rest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("compute %.3f s\n", worst);
        if (after > 0) printf("after: first pass %.3f s, %d more %.3f s\n", worst_first, after - 1, worst_rest);
        printf("checksum %.6f\n", sum);
    }
    MPI_Finalize();
    return 0;
}
