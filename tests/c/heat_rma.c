/* Heat diffusion on a ring of ranks whose halo rows travel by one-sided
 * communication: each rank puts its edge rows into its neighbours' windows
 * between fences, and every 10 iterations adds its row sums into rank 0's
 * window under a shared lock (an accumulate). Same arguments and output as
 * ../shared/bench/heat.c with -DWITH_MPIX: checkpoints (MPIX_Checkpoint)
 * every `every` iterations, taken with the windows open between epochs.
 *   heat_rma <kib_per_rank> <iterations> [checkpoint_every] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3) {
        if (rank == 0)
            fprintf(stderr, "usage: heat_rma <kib_per_rank> <iterations> [checkpoint_every]\n");
        MPI_Finalize();
        return 2;
    }
    long kib = atol(argv[1]);
    int iters = atoi(argv[2]);
    int every = argc > 3 ? atoi(argv[3]) : 0;
    const int cols = 64;
    int rows = (int)(kib * 1024 / sizeof(double) / cols);
    if (rows < 2)
        rows = 2;
    /* rows + 2 ghost rows, in memory the window allocated. */
    double *grid, *next = malloc((size_t)(rows + 2) * cols * sizeof(double));
    MPI_Win win;
    MPI_Win_allocate((MPI_Aint)(rows + 2) * cols * sizeof(double), sizeof(double), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &grid, &win);
    for (int i = 0; i < (rows + 2) * cols; i++)
        grid[i] = 0;
    for (int j = 0; j < cols; j++)
        grid[cols + j] = (rank * cols + j) % 7;
    double sums[2] = {0, 0};
    MPI_Win sum_win;
    MPI_Win_create(sums, sizeof sums, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &sum_win);
    int up = (rank + size - 1) % size, down = (rank + 1) % size;
    MPI_Win_fence(0, win);
    for (int it = 0; it < iters; it++) {
        /* My first row into the upper neighbour's bottom ghost, my last into
         * the lower neighbour's top ghost. */
        MPI_Put(&grid[cols], cols, MPI_DOUBLE, up, (MPI_Aint)(rows + 1) * cols, cols, MPI_DOUBLE, win);
        MPI_Put(&grid[(size_t)rows * cols], cols, MPI_DOUBLE, down, 0, cols, MPI_DOUBLE, win);
        MPI_Win_fence(0, win);
        for (int i = 1; i <= rows; i++)
            for (int j = 0; j < cols; j++) {
                double l = grid[i * cols + (j + cols - 1) % cols], r = grid[i * cols + (j + 1) % cols];
                next[i * cols + j] = 0.25 * (grid[(i - 1) * cols + j] + grid[(i + 1) * cols + j] + l + r);
            }
        for (int i = 1; i <= rows; i++)
            for (int j = 0; j < cols; j++)
                grid[i * cols + j] = next[i * cols + j];
        if ((it + 1) % 10 == 0) {
            double mine[2] = {0, 1};
            for (int j = 0; j < cols; j++)
                mine[0] += grid[cols + j];
            MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, sum_win);
            MPI_Accumulate(mine, 2, MPI_DOUBLE, 0, 0, 2, MPI_DOUBLE, MPI_SUM, sum_win);
            MPI_Win_unlock(0, sum_win);
        }
        /* Nobody writes my ghosts before I computed with them. */
        MPI_Win_fence(0, win);
        if (every > 0 && (it + 1) % every == 0 && it + 1 < iters) {
            MPIX_CR_state_t state;
            MPIX_Checkpoint(&state);
            if (rank == 0) {
                if (state == MPIX_CR_STATE_CHECKPOINT)
                    printf("checkpoint after iteration %d\n", it + 1);
                else if (state == MPIX_CR_STATE_RESTART)
                    printf("restarted after iteration %d\n", it + 1);
                else
                    printf("checkpoint state %d after iteration %d\n", (int)state, it + 1);
                fflush(stdout);
            }
        }
    }
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    double local = 0, total = 0;
    for (int i = 1; i <= rows; i++)
        for (int j = 0; j < cols; j++)
            local += grid[i * cols + j] * (1 + (i + j) % 3);
    MPI_Reduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, sum_win);
        printf("ranks %d rows_per_rank %d iterations %d accumulated %.0f\n", size, rows, iters, sums[1]);
        printf("checksum %.12e %.12e\n", total, sums[0]);
        MPI_Win_unlock(0, sum_win);
    }
    MPI_Win_free(&sum_win);
    MPI_Win_free(&win);
    free(next);
    MPI_Finalize();
    return 0;
}
