/* Non-blocking collectives, including an order that deadlocks if they block. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond, what) do { if (!(cond)) { fprintf(stderr, "rank %d: FAILED %s\n", rank, what); MPI_Abort(MPI_COMM_WORLD, 7); } } while (0)

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* Rank 1 enters the barrier before sending what rank 0 needs before ITS barrier. */
    MPI_Request b;
    int token = 0;
    if (size > 1 && rank == 1) {
        MPI_Ibarrier(MPI_COMM_WORLD, &b);
        token = 99;
        MPI_Send(&token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
        MPI_Wait(&b, MPI_STATUS_IGNORE);
    } else if (size > 1 && rank == 0) {
        MPI_Recv(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Ibarrier(MPI_COMM_WORLD, &b);
        MPI_Wait(&b, MPI_STATUS_IGNORE);
        CHECK(token == 99, "ibarrier overlap");
    } else {
        MPI_Ibarrier(MPI_COMM_WORLD, &b);
        MPI_Wait(&b, MPI_STATUS_IGNORE);
    }
    if (rank == 0) printf("ibarrier ok\n");

    /* Two collectives in flight on one communicator, completed in reverse order. */
    long v = rank, sum = 0;
    int root_val = rank == size - 1 ? 1234 : 0;
    MPI_Request r[2];
    MPI_Iallreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &r[0]);
    MPI_Ibcast(&root_val, 1, MPI_INT, size - 1, MPI_COMM_WORLD, &r[1]);
    MPI_Wait(&r[1], MPI_STATUS_IGNORE);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    CHECK(sum == (long)size * (size - 1) / 2 && root_val == 1234, "iallreduce + ibcast");
    int red = 0;
    MPI_Ireduce(&rank, &red, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD, &r[0]);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    if (rank == 0) CHECK(red == size - 1, "ireduce");
    if (rank == 0) printf("ireduce ok\n");

    int *all = malloc(sizeof(int) * size), *sv = malloc(sizeof(int) * size), *rv = malloc(sizeof(int) * size);
    for (int i = 0; i < size; i++) sv[i] = rank * 100 + i;
    MPI_Request q[4];
    int mine = -1;
    MPI_Iallgather(&rank, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD, &q[0]);
    MPI_Ialltoall(sv, 1, MPI_INT, rv, 1, MPI_INT, MPI_COMM_WORLD, &q[1]);
    MPI_Iscatter(sv, 1, MPI_INT, &mine, 1, MPI_INT, 0, MPI_COMM_WORLD, &q[2]);
    int *g = malloc(sizeof(int) * size);
    MPI_Igather(&rank, 1, MPI_INT, g, 1, MPI_INT, 0, MPI_COMM_WORLD, &q[3]);
    MPI_Waitall(4, q, MPI_STATUSES_IGNORE);
    for (int i = 0; i < size; i++) CHECK(all[i] == i && rv[i] == i * 100 + rank, "iallgather/ialltoall");
    CHECK(mine == rank, "iscatter"); /* rank 0's sv[i] = i */
    if (rank == 0) for (int i = 0; i < size; i++) CHECK(g[i] == i, "igather");
    if (rank == 0) printf("inonblocking ok\n");
    MPI_Finalize();
    return 0;
}
