/* Programs that wait in MPI, deadlocked or not (tests/tests/deadlock.rs):
 *   deadlock  every rank receives from the next with tag 7; nobody sends.
 *   mixed     even ranks receive from the next, odd ranks enter a barrier.
 *   requests  every rank posts a receive from the next and a send to the
 *             previous with different tags, and waits for both.
 *   slow S    rank 0 computes for S seconds, then sends every other rank the
 *             number 42, which they wait for in MPI_Recv: no deadlock.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, value = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "deadlock";
    if (strcmp(mode, "deadlock") == 0) {
        MPI_Recv(&value, 1, MPI_INT, (rank + 1) % size, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (strcmp(mode, "mixed") == 0) {
        if (rank % 2 == 0)
            MPI_Recv(&value, 1, MPI_INT, (rank + 1) % size, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else
            MPI_Barrier(MPI_COMM_WORLD);
    } else if (strcmp(mode, "named") == 0) {
        /* The report names a communicator the program named. */
        MPI_Comm halo;
        MPI_Comm_dup(MPI_COMM_WORLD, &halo);
        MPI_Comm_set_name(halo, "halo");
        if (rank % 2 == 0)
            MPI_Recv(&value, 1, MPI_INT, (rank + 1) % size, 9, halo, MPI_STATUS_IGNORE);
        else
            MPI_Barrier(halo);
    } else if (strcmp(mode, "requests") == 0) {
        MPI_Request reqs[2];
        int out = rank;
        MPI_Irecv(&value, 1, MPI_INT, (rank + 1) % size, 5, MPI_COMM_WORLD, &reqs[0]);
        /* Synchronous: it finishes only when a receive with tag 6 matches it. */
        MPI_Issend(&out, 1, MPI_INT, (rank + size - 1) % size, 6, MPI_COMM_WORLD, &reqs[1]);
        MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    } else if (strcmp(mode, "slow") == 0) {
        double seconds = argc > 2 ? atof(argv[2]) : 3.0;
        if (rank == 0) {
            /* Computing, not in MPI: the others' long wait is no deadlock. */
            volatile double x = 0;
            double start = now();
            while (now() - start < seconds)
                for (int i = 0; i < 1000; i++) x += i * 0.5;
            value = 42;
            for (int r = 1; r < size; r++)
                MPI_Send(&value, 1, MPI_INT, r, 3, MPI_COMM_WORLD);
        } else {
            MPI_Recv(&value, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (value != 42) {
                fprintf(stderr, "rank %d received %d\n", rank, value);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) printf("slow peer: all %d ranks received 42\n", size);
    }
    MPI_Finalize();
    return 0;
}
