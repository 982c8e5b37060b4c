/* Communicators made, used at once and freed, in a loop: per iteration every
 * rank makes a new communicator from MPI_COMM_WORLD (MODE dup, split with
 * key = -rank, or split whose members interleave the processes), posts a
 * receive from its left neighbour on MPI_COMM_WORLD and one on the new
 * communicator, sends to its right neighbour on the new one then on
 * MPI_COMM_WORLD, waits for both and frees the new communicator.
 * usage: comm_churn ITERATIONS MODE */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = argc > 1 ? atoi(argv[1]) : 300;
    const char *mode = argc > 2 ? argv[2] : "dup";
    for (int i = 0; i < iters; i++) {
        MPI_Comm c;
        if (strcmp(mode, "dup") == 0)
            MPI_Comm_dup(MPI_COMM_WORLD, &c);
        else if (strcmp(mode, "split") == 0)
            MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &c);
        else /* interleave: evens first, then odds */
            MPI_Comm_split(MPI_COMM_WORLD, 0, (rank % 2) * size + rank, &c);
        int cr, cs;
        MPI_Comm_rank(c, &cr);
        MPI_Comm_size(c, &cs);
        int wl = (rank + size - 1) % size, wr = (rank + 1) % size;
        int cl = (cr + cs - 1) % cs, cright = (cr + 1) % cs;
        int a = -1, b = -1, sa = rank * 1000 + i, sb = cr * 1000 + i + 7;
        MPI_Request r[2];
        MPI_Irecv(&a, 1, MPI_INT, wl, 9, MPI_COMM_WORLD, &r[0]);
        MPI_Irecv(&b, 1, MPI_INT, cl, 9, c, &r[1]);
        MPI_Send(&sb, 1, MPI_INT, cright, 9, c);
        MPI_Send(&sa, 1, MPI_INT, wr, 9, MPI_COMM_WORLD);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        if (a != wl * 1000 + i || b != cl * 1000 + i + 7) {
            fprintf(stderr, "rank %d iteration %d: received %d and %d\n", rank, i, a, b);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        MPI_Comm_free(&c);
    }
    if (rank == 0) printf("%s ok %d\n", mode, iters);
    MPI_Finalize();
    return 0;
}
