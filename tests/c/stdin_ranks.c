/* Standard input goes to rank 0 only: each rank tries fgets on stdin, scanf
 * and getchar, and prints what it got. Rank 0 gets the input, the others end
 * of file, whether ranks are threads of one process or processes. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* One rank at a time: rank 0 first, so nothing depends on who reads first. */
    for (int r = 0; r < size; r++) {
        if (r == rank) {
            char line[64] = "";
            int n = -1, c;
            const char *got = fgets(line, sizeof line, stdin) ? line : "EOF\n";
            int scanned = scanf("%d", &n);
            c = getchar(); /* the newline after the number, or EOF */
            c = getchar();
            printf("rank %d fgets %.*s scanf %d %d getchar %s\n", rank,
                   (int) strcspn(got, "\n"), got, scanned, n,
                   c == EOF ? "EOF" : (char[]) {(char) c, 0});
            fflush(stdout);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
