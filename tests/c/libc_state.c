/* libc's per-process state is per rank: strtok's position, rand() and
 * drand48() sequences, the environment, errno; each across MPI calls that
 * let the other ranks run. */
#define _GNU_SOURCE
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char line[64], toks[128] = "";
    snprintf(line, sizeof line, "r%d,a%d,b%d,c%d", rank, rank, rank, rank);
    for (char *t = strtok(line, ","); t; t = strtok(NULL, ",")) {
        MPI_Barrier(MPI_COMM_WORLD);
        strcat(toks, t);
        strcat(toks, " ");
    }
    srand(100 + rank);
    int r[3];
    for (int i = 0; i < 3; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        r[i] = rand();
    }
    srand48(200 + rank);
    long l[2];
    for (int i = 0; i < 2; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        l[i] = lrand48();
    }
    char val[32];
    snprintf(val, sizeof val, "rank-%d", rank);
    setenv("MPCRS_TEST_VAR", val, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    const char *got = getenv("MPCRS_TEST_VAR");
    const char *inherited = getenv("MPCRS_INHERITED");
    errno = 100 + rank;
    int token = rank, size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* A blocking receive: rank 0 waits for the last rank while the others
     * run (and set their errno) on its thread. */
    if (rank == 0 && size > 1)
        MPI_Recv(&token, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rank == size - 1 && size > 1) MPI_Send(&token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    int err = errno;
    printf("rank %d: tokens %s| rand %d %d %d | lrand48 %ld %ld | env %s %s | errno %d\n", rank,
           toks, r[0], r[1], r[2], l[0], l[1], got ? got : "(null)",
           inherited ? inherited : "(null)", err);
    MPI_Finalize();
    return 0;
}
