/* The program's own shared library is private per rank: each rank bumps
 * libfoo's global counter rank+1 times and finds it at rank+1. The code of
 * the rank's program and library is the original files' (shared by the
 * ranks of a process, not a copy of each rank's own): the mapping that holds
 * `main` is the program file's, the one that holds foo_bump libfoo.so's. */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern int foo_counter;
int foo_bump(void);

/* The path of the file mapped where `addr` lies ("" if anonymous). */
static void mapped_file(const void *addr, char *path, size_t n)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[PATH_MAX + 128];
    path[0] = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        int at = 0;
        if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &at) < 2)
            continue;
        if ((unsigned long) addr >= lo && (unsigned long) addr < hi) {
            snprintf(path, n, "%s", line + at);
            path[strcspn(path, "\n")] = 0;
            break;
        }
    }
    if (f)
        fclose(f);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i <= rank; i++) foo_bump();
    MPI_Barrier(MPI_COMM_WORLD);
    int counter = foo_counter;
    char exe[PATH_MAX], main_file[PATH_MAX + 64], foo_file[PATH_MAX + 64];
    if (!realpath(argv[0], exe))
        exe[0] = 0;
    mapped_file((const void *) main, main_file, sizeof main_file);
    mapped_file((const void *) foo_bump, foo_file, sizeof foo_file);
    size_t foo_len = strlen(foo_file);
    int foo_shared = foo_len >= 10 && strcmp(foo_file + foo_len - 10, "/libfoo.so") == 0;
    printf("rank %d: counter %d bump %d, code of main %s, of libfoo %s\n", rank, counter,
           foo_bump(), strcmp(main_file, exe) == 0 ? "shared" : main_file,
           foo_shared ? "shared" : foo_file);
    MPI_Finalize();
    return 0;
}
