/* heat.c (../shared/bench) checkpointed with FTI's API, for
 * scripts/fti-bench.sh: the same source builds against mpcrs (mpcrs-cc -lfti)
 * and against FTI on MPICH. 2-D heat diffusion (Jacobi) split by rows across
 * ranks, halo exchange, a residual Allreduce every 10 iterations, and
 * FTI_Checkpoint every EVERY iterations.
 *
 * Usage: heat_fti KIB ITERATIONS EVERY CONFIG.fti LEVEL
 *   KIB: the size of one grid per rank (two grids are protected).
 *   EVERY = 0: no checkpoints (FTI_Init/FTI_Finalize still called).
 * Protected: the completed-iteration counter (id 0) and both grid buffers
 * (ids 1, 2, halos included). The grids are swapped by pointer every
 * iteration, so the current one follows from the iteration's parity.
 * Prints on rank 0 "recovered at iteration I" after a restart,
 * "checkpoint N level L after iteration I: T s" per checkpoint, then
 * "ranks ..." and "checksum X". */
#include <mpi.h>
#include <fti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#define COLS 512

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    if (argc < 6) {
        int wr;
        MPI_Comm_rank(MPI_COMM_WORLD, &wr);
        if (wr == 0) fprintf(stderr, "usage: heat_fti KIB ITERATIONS EVERY CONFIG.fti LEVEL\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long kib = atol(argv[1]);
    int iters = atoi(argv[2]);
    int every = atoi(argv[3]);
    const char *config = argv[4];
    int level = atoi(argv[5]);

    int fres = FTI_Init(config, MPI_COMM_WORLD);
    if (fres == FTI_HEAD) {  /* only with keep_heads_alive; heads normally exit in FTI_Finalize */
        MPI_Finalize();
        return 0;
    }
    if (fres != FTI_SCES && fres != FTI_NREC) {
        fprintf(stderr, "heat_fti: FTI_Init failed (%d)\n", fres);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }

    int rank, size;
    MPI_Comm_rank(FTI_COMM_WORLD, &rank);
    MPI_Comm_size(FTI_COMM_WORLD, &size);
    int rows = (int)(kib * 1024 / (COLS * sizeof(double)));
    if (rows < 1) rows = 1;
    double *bufA = calloc((size_t)(rows + 2) * COLS, sizeof(double));
    double *bufB = calloc((size_t)(rows + 2) * COLS, sizeof(double));
    double *g = bufA, *h = bufB;
    /* Fixed hot boundary on the top edge of rank 0 and a deterministic interior. */
    for (int i = 1; i <= rows; i++)
        for (int j = 0; j < COLS; j++)
            g[i * COLS + j] = (double)((rank * rows + i) % 17) / 17.0 + (double)(j % 13) / 13.0;
    if (rank == 0) for (int j = 0; j < COLS; j++) g[j] = 100.0;

    int done = 0;  /* completed iterations */
    FTI_Protect(0, &done, 1, FTI_INTG);
    FTI_Protect(1, bufA, (int64_t)(rows + 2) * COLS, FTI_DBLE);
    FTI_Protect(2, bufB, (int64_t)(rows + 2) * COLS, FTI_DBLE);
    if (FTI_Status() != 0) {
        if (FTI_Recover() != FTI_SCES) {
            if (rank == 0) fprintf(stderr, "heat_fti: FTI_Recover failed\n");
            MPI_Abort(MPI_COMM_WORLD, 4);
        }
        /* after an even number of iterations the current grid is bufA */
        g = (done % 2 == 0) ? bufA : bufB;
        h = (done % 2 == 0) ? bufB : bufA;
        if (rank == 0) { printf("recovered at iteration %d\n", done); fflush(stdout); }
    }

    int up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    int nckpt = every > 0 ? done / every : 0;
    double t0 = MPI_Wtime();
    for (int it = done; it < iters; it++) {
        MPI_Request req[4];
        MPI_Irecv(&g[0], COLS, MPI_DOUBLE, up, 0, FTI_COMM_WORLD, &req[0]);
        MPI_Irecv(&g[(rows + 1) * COLS], COLS, MPI_DOUBLE, down, 1, FTI_COMM_WORLD, &req[1]);
        MPI_Isend(&g[1 * COLS], COLS, MPI_DOUBLE, up, 1, FTI_COMM_WORLD, &req[2]);
        MPI_Isend(&g[rows * COLS], COLS, MPI_DOUBLE, down, 0, FTI_COMM_WORLD, &req[3]);
        MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
        if (rank == 0) for (int j = 0; j < COLS; j++) g[j] = 100.0;
        double local = 0;
        for (int i = 1; i <= rows; i++)
            for (int j = 1; j < COLS - 1; j++) {
                int k = i * COLS + j;
                h[k] = 0.25 * (g[k - COLS] + g[k + COLS] + g[k - 1] + g[k + 1]);
                double d = fabs(h[k] - g[k]);
                if (d > local) local = d;
            }
        for (int i = 1; i <= rows; i++) {
            h[i * COLS] = g[i * COLS];
            h[i * COLS + COLS - 1] = g[i * COLS + COLS - 1];
        }
        double *tmp = g; g = h; h = tmp;
        done = it + 1;
        if (it % 10 == 0) {
            double global;
            MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_MAX, FTI_COMM_WORLD);
        }
        if (every > 0 && (it + 1) % every == 0 && it + 1 < iters) {
            nckpt++;
            double c0 = MPI_Wtime();
            int r = FTI_Checkpoint(nckpt, level);
            double ct = MPI_Wtime() - c0;
            if (rank == 0) {
                if (r == FTI_DONE || r == FTI_SCES)
                    printf("checkpoint %d level %d after iteration %d: %.6f s\n", nckpt, level, it + 1, ct);
                else
                    printf("checkpoint %d level %d after iteration %d FAILED (%d): %.6f s\n", nckpt, level, it + 1, r, ct);
                fflush(stdout);
            }
        }
    }
    double t = MPI_Wtime() - t0;
    double sum = 0;
    for (int i = 1; i <= rows; i++)
        for (int j = 0; j < COLS; j++) sum += g[i * COLS + j] * (double)((i + j) % 7 + 1);
    double total;
    MPI_Reduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, FTI_COMM_WORLD);
    if (rank == 0) {
        printf("ranks %d rows_per_rank %d iterations %d seconds %.3f\n", size, rows, iters, t);
        printf("checksum %.12e\n", total);
        fflush(stdout);
    }
    FTI_Finalize();
    free(bufA); free(bufB);
    MPI_Finalize();
    return 0;
}
