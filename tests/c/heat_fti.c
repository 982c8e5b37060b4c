/* Heat diffusion checkpointed in FTI's style: the grid and the iteration are
 * protected, FTI_Checkpoint every EVERY iterations at LEVEL, FTI_Recover
 * after a restart. Usage: heat_fti CONFIG LEVEL ITERATIONS EVERY [DIE_AT]
 * With DIE_AT, rank 1 kills its own process (SIGKILL) once iteration DIE_AT
 * is done, in a run that recovered nothing (LEVEL 5: mpcrs's memory level).
 * Prints "recovered at iteration I" after a restart, then "checksum X"
 * (rank 0). */
#include <fti.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#define COLS 64
#define ROWS 32

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    if (argc < 5) {
        fprintf(stderr, "usage: heat_fti CONFIG LEVEL ITERATIONS EVERY [DIE_AT]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int level = atoi(argv[2]), iterations = atoi(argv[3]), every = atoi(argv[4]);
    int die_at = argc > 5 ? atoi(argv[5]) : -1;
    if (FTI_Init(argv[1], MPI_COMM_WORLD) != FTI_SCES) MPI_Abort(MPI_COMM_WORLD, 3);
    int rank, size;
    MPI_Comm_rank(FTI_COMM_WORLD, &rank);
    MPI_Comm_size(FTI_COMM_WORLD, &size);
    double *g = calloc((ROWS + 2) * COLS, sizeof(double));
    double *h = calloc((ROWS + 2) * COLS, sizeof(double));
    for (int i = 1; i <= ROWS; i++)
        for (int j = 0; j < COLS; j++) g[i * COLS + j] = (double)((rank * ROWS + i + j) % 11);
    int done = 0;
    FTI_Protect(0, &done, 1, FTI_INTG);
    FTI_Protect(1, g, (ROWS + 2) * COLS, FTI_DBLE);
    int recovered = FTI_Status() != 0;
    if (recovered) {
        if (FTI_Recover() != FTI_SCES) MPI_Abort(MPI_COMM_WORLD, 4);
        if (rank == 0) printf("recovered at iteration %d\n", done);
    }
    int up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    for (; done < iterations;) {
        MPI_Sendrecv(&g[COLS], COLS, MPI_DOUBLE, up, 0, &g[(ROWS + 1) * COLS], COLS, MPI_DOUBLE,
                     down, 0, FTI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(&g[ROWS * COLS], COLS, MPI_DOUBLE, down, 1, &g[0], COLS, MPI_DOUBLE, up, 1,
                     FTI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rank == 0) for (int j = 0; j < COLS; j++) g[j] = 100.0;
        for (int i = 1; i <= ROWS; i++)
            for (int j = 1; j < COLS - 1; j++)
                h[i * COLS + j] = 0.25 * (g[(i - 1) * COLS + j] + g[(i + 1) * COLS + j] +
                                          g[i * COLS + j - 1] + g[i * COLS + j + 1]);
        for (int i = 1; i <= ROWS; i++)
            for (int j = 1; j < COLS - 1; j++) g[i * COLS + j] = h[i * COLS + j];
        done++;
        if (done % every == 0 && done < iterations) {
            int r = FTI_Checkpoint(done / every, level);
            if (r != FTI_DONE) {
                fprintf(stderr, "rank %d: FTI_Checkpoint failed (%d)\n", rank, r);
                MPI_Abort(MPI_COMM_WORLD, 5);
            }
            if (rank == 0) printf("checkpoint after iteration %d\n", done);
            fflush(stdout);
        }
        if (done == die_at && rank == 1 && !recovered) raise(SIGKILL);
    }
    double local = 0, sum = 0;
    for (int i = 1; i <= ROWS; i++)
        for (int j = 0; j < COLS; j++) local += g[i * COLS + j] * (1 + (rank * ROWS + i) % 7);
    MPI_Reduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, FTI_COMM_WORLD);
    if (rank == 0) printf("checksum %.12e\n", sum);
    FTI_Finalize();
    MPI_Finalize();
    return 0;
}
