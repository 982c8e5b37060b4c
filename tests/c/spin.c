/* A job that never ends by itself: MPI_Init, then a busy loop of five
 * minutes (for the launcher's time limit, MPIEXEC_TIMEOUT). */
#include <mpi.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < 300)
        ;
    MPI_Finalize();
    return 0;
}
