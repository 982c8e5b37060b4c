/* Standard input goes to rank 0 only through read(2) on descriptor 0 too.
 * The other ranks read first, highest rank first, so that a rank sharing the
 * descriptor would take the input; then rank 0 reads all of it. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int r = size - 1; r >= 0; r--) {
        if (r == rank) {
            char buf[256];
            size_t got = 0;
            ssize_t n;
            /* To end of file: a pipe may deliver the input in pieces. */
            while (got < sizeof buf - 1 && (n = read(0, buf + got, sizeof buf - 1 - got)) > 0)
                got += (size_t) n;
            buf[got] = 0;
            for (char *p = buf; *p; p++)
                if (*p == '\n')
                    *p = '|';
            printf("rank %d read %zu [%s]\n", rank, got, buf);
            fflush(stdout);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
