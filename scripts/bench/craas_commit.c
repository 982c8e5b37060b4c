/* What a checkpoint of application data costs: each rank holds MIB MiB,
 * rewrites PERCENT of it before each of K checkpoints, and checkpoints it
 * through CRaaS (craas.h; mode "craas") or FTI at level 1 (fti.h; built with
 * -DUSE_FTI, mode "fti CONFIG"), or not at all (mode "none").
 * Rank 0 prints the median and the largest time a rank waited in one
 * checkpoint call ("wait"), the time of the loop ("loop"), and the time
 * until every checkpoint is held where it is kept ("held": a CRaaS commit
 * returns before its helper task has sent it).
 *
 * With DIE_AT (mode craas), rank 1 prints "dying at T" and kills its own
 * process (SIGKILL) after checkpoint DIE_AT; a restarted run restores the
 * array, and each rank prints "restored at T" (T: CLOCK_REALTIME seconds,
 * comparable across the processes of a machine), so the time from the
 * failure to every rank back in its loop with its data is the difference.
 *
 * Usage: craas_commit MIB K PERCENT none|craas|fti [CONFIG|DIE_AT] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef USE_FTI
#include <fti.h>
#else
#include <craas.h>
#endif

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    if (argc < 5) {
        fprintf(stderr, "usage: craas_commit MIB K PERCENT none|craas|fti [CONFIG]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    size_t bytes = (size_t)atol(argv[1]) << 20;
    int k = atoi(argv[2]), percent = atoi(argv[3]);
    const char *mode = argv[4];
    MPI_Comm comm = MPI_COMM_WORLD;
#ifdef USE_FTI
    if (strcmp(mode, "fti") == 0) {
        if (argc < 6 || FTI_Init(argv[5], MPI_COMM_WORLD) != FTI_SCES) MPI_Abort(MPI_COMM_WORLD, 3);
        comm = FTI_COMM_WORLD;
    }
#endif
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    size_t n = bytes / sizeof(double);
    double *a = malloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++) a[i] = (double)(i + rank);
#ifdef USE_FTI
    if (strcmp(mode, "fti") == 0) FTI_Protect(0, a, (long)n, FTI_DBLE);
#endif
    int first = 0, die_at = 0;
#ifndef USE_FTI
    if (strcmp(mode, "craas") == 0) {
        die_at = argc > 5 ? atoi(argv[5]) : 0;
        if (CRaaS_Exists("bench")) {
            first = (int)CRaaS_Rst_index("bench", "c") + 1;
            if (CRaaS_Rst_array("bench", "a", a, n * sizeof(double)) != CRAAS_SUCCESS)
                MPI_Abort(MPI_COMM_WORLD, 6);
            printf("restored at %.6f\n", now());
            fflush(stdout);
            die_at = 0;
        }
    }
    /* Commits are per rank: after a failure some ranks hold one more than
     * others. All go on from the oldest (each with its newest data: what is
     * measured is the recovery, not the sums), so that every rank makes as
     * many checkpoints and barriers. */
    MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm);
#endif
    double *waits = calloc(k > 0 ? k : 1, sizeof(double));
    /* The part rewritten before each checkpoint: spread over the array. */
    size_t stride = percent > 0 ? 100 / percent : 0;
    size_t piece = 65536 / sizeof(double);
    MPI_Barrier(comm);
    double start = MPI_Wtime();
    for (int c = first; c < k; c++) {
        if (stride)
            for (size_t p = 0; p * piece < n; p += stride)
                for (size_t i = p * piece; i < (p + 1) * piece && i < n; i++) a[i] += 1.0;
        double t = MPI_Wtime();
        if (strcmp(mode, "craas") == 0) {
#ifndef USE_FTI
            if (CRaaS_Ckpt_array("bench", "a", a, n * sizeof(double)) != CRAAS_SUCCESS ||
                CRaaS_Ckpt_index("bench", "c", c) != CRAAS_SUCCESS || CRaaS_Commit("bench") != CRAAS_SUCCESS)
                MPI_Abort(MPI_COMM_WORLD, 4);
#endif
        }
#ifdef USE_FTI
        if (strcmp(mode, "fti") == 0 && FTI_Checkpoint(c + 1, 1) != FTI_DONE) MPI_Abort(MPI_COMM_WORLD, 5);
#endif
        waits[c] = MPI_Wtime() - t;
#ifndef USE_FTI
        if (die_at == c + 1 && CRaaSX_Wait("bench") != CRAAS_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 7);
#endif
        MPI_Barrier(comm);
        if (die_at == c + 1 && rank == 1) {
            printf("dying at %.6f\n", now());
            fflush(stdout);
            kill(getpid(), SIGKILL);
        }
    }
    double loop = MPI_Wtime() - start;
    /* Until every commit is held where it is kept (the service's memory, or
     * files): a commit returns before. FTI's level 1 is held at return. */
#ifndef USE_FTI
    if (strcmp(mode, "craas") == 0 && k > first && CRaaSX_Wait("bench") != CRAAS_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 8);
#endif
    MPI_Barrier(comm);
    double held = MPI_Wtime() - start;
    double *all = rank == 0 ? malloc(sizeof(double) * k * size + 1) : NULL;
    MPI_Gather(waits, k, MPI_DOUBLE, all, k, MPI_DOUBLE, 0, comm);
    if (rank == 0 && k > 0) {
        qsort(all, (size_t)k * size, sizeof(double), cmp);
        printf("wait median %.2f ms max %.2f ms loop %.3f s held %.3f s\n",
               all[(size_t)k * size / 2] * 1e3, all[(size_t)k * size - 1] * 1e3, loop, held);
    }
#ifdef USE_FTI
    if (strcmp(mode, "fti") == 0) FTI_Finalize();
#endif
    MPI_Finalize();
    return 0;
}
