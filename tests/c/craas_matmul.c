/* Seed 003's tiled matrix multiply on CRaaS: each rank computes C = A x B
 * of its own matrices one tile row at a time, and after each tile row
 * checkpoints the next tile row to compute (index "t"), C (one tile row
 * changed per commit) and a running sum of C's rows ("acc": adding a tile
 * row twice would change it, so a restored index and arrays from different
 * commits show in the checksum).
 *
 * Commits are per rank, so after a failure ranks may hold different tile
 * rows. The program keeps two checkpoints, "mm-0" and "mm-1", taking turns
 * by tile row, and a barrier after each commit keeps ranks within one tile
 * row of each other: after a restore, the ranks agree on the smallest tile
 * row any of them reached (MPI_Allreduce) and each restores the checkpoint
 * that holds it.
 *
 * Usage: craas_matmul N TILE [DIE_AT[,DIE_AT...] [mid]]
 * Rank 1 kills its own process (SIGKILL) after tile row DIE_AT when it got
 * there without a restore past it; "mid" kills it between CRaaS_Ckpt_array
 * and CRaaS_Commit of that tile row (in the first run only). Prints "rank R resumed at tile row T"
 * after a restore, then "checksum X" (rank 0). CRAAS_MM_SLEEP_MS in the
 * environment: a pause after each tile row (for tests that act mid-run);
 * CRAAS_MM_RSS: the last rank prints its process's resident memory at the
 * end ("rss K kB"; the process no kill hits). */
#include <craas.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int dies_at(const char *list, long t) {
    if (!list) return 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *s = strtok(buf, ","); s; s = strtok(NULL, ","))
        if (atol(s) == t) return 1;
    return 0;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    if (argc < 3) {
        fprintf(stderr, "usage: craas_matmul N TILE [DIE_AT[,...] [mid]]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long n = atol(argv[1]), tile = atol(argv[2]);
    const char *die = argc > 3 ? argv[3] : NULL;
    int mid = argc > 4 && strcmp(argv[4], "mid") == 0;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double *a = malloc(n * n * sizeof(double)), *b = malloc(n * n * sizeof(double));
    double *c = calloc(n * n, sizeof(double)), *acc = calloc(n, sizeof(double));
    for (long i = 0; i < n * n; i++) {
        a[i] = (double)((i * 7 + rank) % 13) / 13.0;
        b[i] = (double)((i * 3 + 2 * rank) % 11) / 11.0;
    }
    long t = 0;
    long held[2] = {CRaaS_Rst_index("mm-0", "t"), CRaaS_Rst_index("mm-1", "t")};
    long newest = held[0] > held[1] ? held[0] : held[1];
    MPI_Allreduce(&newest, &t, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
    if (t > 0) {
        const char *from = held[t % 2] == t ? (t % 2 ? "mm-1" : "mm-0") : NULL;
        if (!from || CRaaS_Rst_array(from, "C", c, n * n * sizeof(double)) != CRAAS_SUCCESS ||
            CRaaS_Rst_array(from, "acc", acc, n * sizeof(double)) != CRAAS_SUCCESS) {
            fprintf(stderr, "rank %d: no checkpoint holds tile row %ld\n", rank, t);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        printf("rank %d resumed at tile row %ld\n", rank, t);
    }
    long restored = t;
    const char *pause = getenv("CRAAS_MM_SLEEP_MS");
    for (; t < n / tile; t++) {
        for (long i = t * tile; i < (t + 1) * tile; i++) {
            for (long j = 0; j < n; j++) {
                double s = 0;
                for (long k = 0; k < n; k++) s += a[i * n + k] * b[k * n + j];
                c[i * n + j] = s;
                acc[j] += s;
            }
        }
        /* "mid" kills in the first run only: its restore is always before. */
        int dying = rank == 1 && dies_at(die, t + 1) && (mid ? restored == 0 : t + 1 > restored);
        const char *ck = (t + 1) % 2 ? "mm-1" : "mm-0";
        if (CRaaS_Ckpt_array(ck, "C", c, n * n * sizeof(double)) != CRAAS_SUCCESS ||
            CRaaS_Ckpt_array(ck, "acc", acc, n * sizeof(double)) != CRAAS_SUCCESS ||
            CRaaS_Ckpt_index(ck, "t", t + 1) != CRAAS_SUCCESS)
            MPI_Abort(MPI_COMM_WORLD, 4);
        if (dying && mid) kill(getpid(), SIGKILL);
        if (CRaaS_Commit(ck) != CRAAS_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 5);
        /* Before the kill, every rank's last commit before it is where it
         * is kept (CRaaSX_Wait), so all resume from that tile row. */
        int last_before = mid ? restored == 0 && dies_at(die, t + 2)
                              : t + 1 > restored && dies_at(die, t + 1);
        if (last_before && CRaaSX_Wait(ck) != CRAAS_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 6);
        if (pause) usleep(atoi(pause) * 1000);
        /* Ranks go in step, as a real code's halo exchange would keep them. */
        MPI_Barrier(MPI_COMM_WORLD);
        if (dying) kill(getpid(), SIGKILL);
    }
    double local = 0, total = 0;
    for (long j = 0; j < n; j++) local += acc[j] * (double)(j % 5 + 1);
    for (long i = 0; i < n * n; i++) local += c[i] * (double)(i % 3);
    MPI_Reduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("checksum %.6f\n", total);
    if (getenv("CRAAS_MM_RSS") && rank == size - 1) {
        FILE *st = fopen("/proc/self/status", "r");
        char line[256];
        while (st && fgets(line, sizeof line, st))
            if (strncmp(line, "VmRSS:", 6) == 0) printf("rss %ld kB\n", atol(line + 6));
        if (st) fclose(st);
    }
    MPI_Finalize();
    return 0;
}
