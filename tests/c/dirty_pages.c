/* Writes a known set of pages between checkpoints: each rank fills a buffer
 * of MIB MiB once, then before each of EPOCHS checkpoints rewrites PAGES of
 * its pages (a different set every time) and calls MPIX_Checkpoint.
 * Usage: dirty_pages MIB PAGES EPOCHS [MODE]
 * MODE "map": before each checkpoint, also maps a new region of 1 MiB,
 * fills it, and gives half of the previous one back (MADV_DONTNEED);
 * MODE "fork": before each checkpoint, also forks a child that writes to
 * the buffer and exits, and rewrites the pages after the fork.
 * Prints (rank 0) "checkpoint E" after each checkpoint, "restarted at E"
 * in a restored run, then "checksum X" over every rank's buffer. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXTRA_BYTES (1 << 20)
#define MAX_EPOCHS 64

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    if (argc < 4) {
        fprintf(stderr, "usage: dirty_pages MIB PAGES EPOCHS\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long mib = atol(argv[1]), pages = atol(argv[2]);
    int epochs = atoi(argv[3]), rank;
    const char *mode = argc > 4 ? argv[4] : "plain";
    int map = !strcmp(mode, "map"), forks = !strcmp(mode, "fork");
    if (!map && !forks && strcmp(mode, "plain")) {
        fprintf(stderr, "dirty_pages: unknown mode %s\n", mode);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    static unsigned char *extra[MAX_EPOCHS];
    if (epochs > MAX_EPOCHS) MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long npages = mib * 256;
    unsigned char *buf = mmap(NULL, npages * 4096, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED || pages > npages) MPI_Abort(MPI_COMM_WORLD, 3);
    for (long i = 0; i < npages * 4096; i++) buf[i] = (unsigned char)(i * 7 + rank);
    for (int done = 0; done < epochs;) {
        /* 131 is prime to the power of two npages: PAGES distinct pages. */
        for (long i = 0; i < pages; i++) {
            long p = (done * 7919L + i * 131L) % npages;
            for (long b = 0; b < 4096; b += 64) buf[p * 4096 + b] = (unsigned char)(done + i + rank + 1);
        }
        if (map) {
            extra[done] = mmap(NULL, EXTRA_BYTES, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (extra[done] == MAP_FAILED) MPI_Abort(MPI_COMM_WORLD, 3);
            for (long i = 0; i < EXTRA_BYTES; i += 512) extra[done][i] = (unsigned char)(done * 13 + i / 512 + rank);
            if (done > 0) madvise(extra[done - 1], EXTRA_BYTES / 2, MADV_DONTNEED);
        }
        if (forks) {
            pid_t child = fork();
            if (child == 0) {
                for (long i = 0; i < npages * 4096; i += 4096) buf[i] = 0xee;
                _exit(0);
            }
            int status;
            if (child < 0 || waitpid(child, &status, 0) != child || status != 0) MPI_Abort(MPI_COMM_WORLD, 4);
            /* After the fork the buffer is shared copy-on-write: writes now
             * must still be seen as writes. */
            for (long i = 0; i < pages; i++) buf[((done * 7919L + i * 131L) % npages) * 4096 + 8] = (unsigned char)(done + 3);
        }
        done++;
        MPIX_CR_state_t state;
        MPIX_Checkpoint(&state);
        if (rank == 0 && state == MPIX_CR_STATE_CHECKPOINT) printf("checkpoint %d\n", done);
        if (rank == 0 && state == MPIX_CR_STATE_RESTART) printf("restarted at %d\n", done);
        fflush(stdout);
    }
    double local = 0, sum = 0;
    for (long i = 0; i < npages * 4096; i += 8) local += buf[i] * (double)(i % 1009 + 1);
    for (int e = 0; map && e < epochs; e++)
        for (long i = 0; i < EXTRA_BYTES; i += 512) local += extra[e][i] * (double)(e + 1);
    MPI_Reduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("checksum %.6f\n", sum);
    MPI_Finalize();
    return 0;
}
