/* Each rank prints the directory it runs in (mpcrs-run --wdir). */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char dir[4096];
    if (!getcwd(dir, sizeof dir)) dir[0] = 0;
    printf("rank %d in %s\n", rank, dir);
    MPI_Finalize();
    return 0;
}
