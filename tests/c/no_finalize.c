/* Rank 1 returns from main without MPI_Finalize while the others wait in a
 * barrier: the job must end, naming the rank, instead of waiting for ever. */
#include <mpi.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 1)
        return 0;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
