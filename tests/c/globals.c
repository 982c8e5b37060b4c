/* Every rank must see its own copy of globals and statics: each rank writes its
 * rank into them, synchronizes, and checks nobody overwrote them. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int global_value = -1;
static int static_counter = 0;
static char message[64];

static int bump(void) {
    static int calls = 0; /* function-local static */
    return ++calls;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    global_value = rank;
    static_counter += 10 * rank;
    snprintf(message, sizeof message, "rank %d", rank);
    for (int i = 0; i < rank; i++) bump();
    MPI_Barrier(MPI_COMM_WORLD);
    int ok = global_value == rank && static_counter == 10 * rank && bump() == rank + 1;
    char expect[64];
    snprintf(expect, sizeof expect, "rank %d", rank);
    for (int i = 0; expect[i]; i++) ok = ok && message[i] == expect[i];
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (rank == 0) printf("globals private on %d ranks: %s\n", size, all ? "yes" : "NO");
    MPI_Finalize();
    return all ? 0 : 1;
}
