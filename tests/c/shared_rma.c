/* Ranks of a node share memory through MPI_Win_allocate_shared: each
 * iteration every rank writes its slots, and after a fence reads its
 * neighbour's slots by plain loads. Same arguments and output as
 * ../shared/bench/heat.c with -DWITH_MPIX (MPIX_Checkpoint every `every`
 * iterations, with the shared window open).
 *   shared_rma <kib_per_rank> <iterations> [checkpoint_every] */
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
            fprintf(stderr, "usage: shared_rma <kib_per_rank> <iterations> [checkpoint_every]\n");
        MPI_Finalize();
        return 2;
    }
    long n = atol(argv[1]) * 1024 / sizeof(long);
    int iters = atoi(argv[2]);
    int every = argc > 3 ? atoi(argv[3]) : 0;
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    int nrank, nsize;
    MPI_Comm_rank(node, &nrank);
    MPI_Comm_size(node, &nsize);
    long *mine;
    MPI_Win win;
    MPI_Win_allocate_shared(n * sizeof(long), sizeof(long), MPI_INFO_NULL, node, &mine, &win);
    MPI_Aint bytes;
    int unit;
    long *theirs;
    MPI_Win_shared_query(win, (nrank + 1) % nsize, &bytes, &unit, &theirs);
    double sum = 0;
    MPI_Win_fence(0, win);
    for (int it = 0; it < iters; it++) {
        for (long i = 0; i < n; i++)
            mine[i] = (long)it * 1000 + rank + i % 7;
        MPI_Win_fence(0, win);
        for (long i = 0; i < n; i += 97)
            sum += theirs[i] % 1013;
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
    double total = 0;
    MPI_Reduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("checksum %.12e\n", total);
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return 0;
}
