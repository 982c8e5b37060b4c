/* One wrong call under MPI_ERRORS_ARE_FATAL, chosen by argv[1], made by rank 1
 * (rank 0 of a one-rank job) while the others wait in a barrier. */
#include <mpi.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *which = argc > 1 ? argv[1] : "";
    if (rank == (size > 1 ? 1 : 0)) {
        if (strcmp(which, "win") == 0) {
            MPI_Win_fence(0, MPI_WIN_NULL);
        } else if (strcmp(which, "null_send") == 0) {
            MPI_Send(NULL, 4, MPI_INT, 0, 0, MPI_COMM_WORLD);
        } else if (strcmp(which, "null_recv") == 0) {
            MPI_Recv(NULL, 4, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (strcmp(which, "spawn") == 0) {
            MPI_Comm child;
            MPI_Comm_spawn("true", MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_SELF, &child,
                           MPI_ERRCODES_IGNORE);
        } else if (strcmp(which, "hindexed_block") == 0) {
            MPI_Datatype t;
            MPI_Aint d[1] = {0};
            MPI_Type_create_hindexed_block(-2, 1, d, MPI_INT, &t);
        } else if (strcmp(which, "reduce_local") == 0) {
            int a = 1, b = 2;
            MPI_Reduce_local(&a, &b, 1, MPI_INT, (MPI_Op)0x12345);
        } else if (strcmp(which, "graph_neighbors") == 0) {
            int nb[2];
            MPI_Graph_neighbors(MPI_COMM_WORLD, 0, 2, nb);
        } else if (strcmp(which, "neighbor_alltoall") == 0) {
            int a[2], b[2];
            MPI_Neighbor_alltoall(a, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_SELF);
        } else if (strcmp(which, "dist_graph") == 0) {
            MPI_Comm g;
            MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, -1, NULL, MPI_UNWEIGHTED, 0, NULL,
                                           MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g);
        } else if (strcmp(which, "errhandler") == 0) {
            MPI_Errhandler eh;
            MPI_Comm_create_errhandler(NULL, &eh);
        } else if (strcmp(which, "grequest") == 0) {
            MPI_Grequest_complete((MPI_Request)0x12345);
        } else if (strcmp(which, "bsend_init") == 0) {
            int a[1];
            MPI_Request r;
            MPI_Bsend_init(a, -1, MPI_INT, 0, 0, MPI_COMM_WORLD, &r);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
