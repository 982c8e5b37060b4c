/* Writes a known set of pages between checkpoints: each rank fills a buffer
 * of MIB MiB once, then before each of EPOCHS checkpoints rewrites PAGES of
 * its pages (a different set every time) and calls MPIX_Checkpoint.
 * Usage: dirty_pages MIB PAGES EPOCHS
 * Prints (rank 0) "checkpoint E" after each checkpoint, "restarted at E"
 * in a restored run, then "checksum X" over every rank's buffer. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    if (argc < 4) {
        fprintf(stderr, "usage: dirty_pages MIB PAGES EPOCHS\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long mib = atol(argv[1]), pages = atol(argv[2]);
    int epochs = atoi(argv[3]), rank;
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
        done++;
        MPIX_CR_state_t state;
        MPIX_Checkpoint(&state);
        if (rank == 0 && state == MPIX_CR_STATE_CHECKPOINT) printf("checkpoint %d\n", done);
        if (rank == 0 && state == MPIX_CR_STATE_RESTART) printf("restarted at %d\n", done);
        fflush(stdout);
    }
    double local = 0, sum = 0;
    for (long i = 0; i < npages * 4096; i += 8) local += buf[i] * (double)(i % 1009 + 1);
    MPI_Reduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("checksum %.6f\n", sum);
    MPI_Finalize();
    return 0;
}
