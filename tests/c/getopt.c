/* Each rank parses its own argv with getopt: optarg and optind are the
 * program's (copy relocations) and the parse position is per rank. The ranks
 * interleave their calls with an MPI call between options. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int x = -1, a = 0, b = 0, c;
    const char *name = "none";
    while ((c = getopt(argc, argv, "abx:n:")) != -1) {
        MPI_Barrier(MPI_COMM_WORLD);
        switch (c) {
        case 'a': a = 1; break;
        case 'b': b = 1; break;
        case 'x': x = optarg ? atoi(optarg) : -2; break;
        case 'n': name = optarg ? optarg : "(null)"; break;
        default: printf("rank %d: bad option\n", rank); break;
        }
    }
    printf("rank %d: x=%d name=%s a=%d b=%d rest=%s optind=%d\n", rank, x, name, a, b,
           optind < argc ? argv[optind] : "-", optind);
    MPI_Finalize();
    return 0;
}
