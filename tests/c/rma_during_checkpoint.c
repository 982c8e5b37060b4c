/* Large one-sided transfers answered by a process whose ranks are all inside
 * MPIX_Checkpoint: the lower half of the ranks enter the checkpoint at once,
 * while each rank of the upper half first puts 1 MiB into a lower rank's
 * window and gets it back (both above the eager limit, so the target's
 * agent answers with rendezvous frames), and only then enters. Run with the
 * halves in different processes (-n 2 -p 2, -n 4 -p 2, -n 8 -p 4).
 *   rma_during_checkpoint <rounds> */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WORDS (1 << 17) /* 1 MiB of doubles */

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = argc > 1 ? atoi(argv[1]) : 3;
    if (size % 2) {
        if (rank == 0)
            fprintf(stderr, "rma_during_checkpoint needs an even number of ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int half = size / 2, lower = rank < half;
    double *exposed = calloc(WORDS, sizeof(double));
    double *mine = malloc(WORDS * sizeof(double)), *back = malloc(WORDS * sizeof(double));
    MPI_Win win;
    /* Memory the program allocated: reached through the target's agent. */
    MPI_Win_create(exposed, WORDS * sizeof(double), sizeof(double), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &win);
    int bad = 0;
    MPIX_CR_state_t state;
    double sum = 0;
    for (int r = 0; r < rounds; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (lower) {
            MPIX_Checkpoint(&state);
        } else {
            /* Let the lower half be inside the checkpoint first. */
            usleep(200 * 1000);
            int target = rank - half;
            for (int i = 0; i < WORDS; i++)
                mine[i] = rank * 1e6 + r * 1e3 + i % 997;
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
            MPI_Put(mine, WORDS, MPI_DOUBLE, target, 0, WORDS, MPI_DOUBLE, win);
            MPI_Win_unlock(target, win);
            memset(back, 0, WORDS * sizeof(double));
            MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
            MPI_Get(back, WORDS, MPI_DOUBLE, target, 0, WORDS, MPI_DOUBLE, win);
            MPI_Win_unlock(target, win);
            if (memcmp(mine, back, WORDS * sizeof(double)) != 0)
                bad++;
            for (int i = 0; i < WORDS; i += 4096)
                sum += back[i];
            MPIX_Checkpoint(&state);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* What the upper half put is in the lower half's windows. */
    double local = 0, total = 0;
    for (int i = 0; i < WORDS; i += 4096)
        local += lower ? exposed[i] : 0;
    local += sum;
    int anybad = 0;
    MPI_Reduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&bad, &anybad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("rounds %d mismatches %d checksum %.10e\n", rounds, anybad, total);
    MPI_Win_free(&win);
    free(exposed);
    free(mine);
    free(back);
    MPI_Finalize();
    return 0;
}
