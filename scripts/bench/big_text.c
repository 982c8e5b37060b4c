/* A C program with 64 MiB of code (one function of no-ops, which every rank
 * runs through once, so that every page of the code is touched by every
 * rank) and 64 KiB of data per rank. Rank 0 prints its process's memory
 * from /proc/self/smaps_rollup once every rank has run: the code is shared
 * when the proportional size (Pss) is near 64 MiB + ranks x data. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

__asm__(".text\n.globl big_code\n.type big_code,@function\nbig_code:\n"
        ".fill 67108864,1,0x90\nret\n.size big_code,.-big_code\n");
void big_code(void);

static char data[64 * 1024];

/* kB of `field` in /proc/self/smaps_rollup. */
static long rollup(const char *field)
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    char line[256];
    long kb = -1;
    size_t n = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, field, n) == 0 && line[n] == ':')
            sscanf(line + n + 1, "%ld", &kb);
    if (f)
        fclose(f);
    return kb;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    big_code();
    memset(data, rank + 1, sizeof data);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("ranks %d rss_kib %ld pss_kib %ld pss_shmem_kib %ld anon_kib %ld\n", size,
               rollup("Rss"), rollup("Pss"), rollup("Pss_Shmem"), rollup("Anonymous"));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
