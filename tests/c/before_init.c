/* An MPI call before MPI_Init is a fatal error naming the call. */
#include <mpi.h>
int main(int argc, char **argv) {
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Init(&argc, &argv);
    MPI_Finalize();
    return 0;
}
