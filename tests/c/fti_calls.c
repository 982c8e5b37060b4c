/* FTI's finer calls across a kill and a restart. Each rank keeps a list that
 * grows by one element a step, a step count and a composite struct; ten
 * steps, a level-2 checkpoint after steps 3, 6 and 9.
 * Usage: fti_calls CONFIG MODE [DIE]
 *   MODE var:      after a restart, FTI_RecoverVarInit/RecoverVar recover the
 *                  scalars, FTI_GetStoredSize gives the list's stored size and
 *                  FTI_Realloc resizes it before FTI_RecoverVar recovers it.
 *   MODE snapshot: the list has a fixed capacity; FTI_Snapshot is called
 *                  every step (no interval is due: FTI_SCES) and its first
 *                  call after a restart recovers everything (FTI_SCES).
 *   DIE:           rank 1 kills its own process (SIGKILL) after step 7.
 * Prints "recovered steps S n N stored B" after a restart (rank 0), then
 * "checksum X" (rank 0). */
#include <fti.h>
#include <mpi.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CAPACITY 16

struct point {
    int a;
    double b[3];
};

static void expect(const char *what, long got, long want) {
    if (got != want) {
        fprintf(stderr, "%s returned %ld, not %ld\n", what, got, want);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    if (argc < 3) {
        fprintf(stderr, "usage: fti_calls CONFIG var|snapshot [DIE]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int snapshot = strcmp(argv[2], "snapshot") == 0;
    int die = argc > 3;
    expect("FTI_Init", FTI_Init(argv[1], MPI_COMM_WORLD), FTI_SCES);
    int rank;
    MPI_Comm_rank(FTI_COMM_WORLD, &rank);

    struct point p = {rank, {0.5 * rank, 1, 2}};
    fti_id_t point = FTI_InitCompositeType("point", sizeof p, NULL);
    expect("FTI_AddScalarField", FTI_AddScalarField(point, "a", FTI_INTG, offsetof(struct point, a)),
           FTI_SCES);
    int64_t dims[1] = {3};
    expect("FTI_AddVectorField",
           FTI_AddVectorField(point, "b", FTI_DBLE, offsetof(struct point, b), 1, dims), FTI_SCES);

    int steps = 0;
    long n = 0;
    double *list = calloc(snapshot ? CAPACITY : 1, sizeof(double));
    long protected_count = snapshot ? CAPACITY : 0;
    expect("FTI_Protect steps", FTI_Protect(0, &steps, 1, FTI_INTG), FTI_SCES);
    expect("FTI_Protect n", FTI_Protect(1, &n, 1, FTI_LONG), FTI_SCES);
    expect("FTI_Protect list", FTI_Protect(2, list, protected_count, FTI_DBLE), FTI_SCES);
    expect("FTI_Protect point", FTI_Protect(3, &p, 1, point), FTI_SCES);

    int restarted = FTI_Status() != 0;
    long stored = 0;
    if (snapshot) {
        expect("FTI_Snapshot", FTI_Snapshot(), FTI_SCES);
    } else if (restarted) {
        expect("FTI_RecoverVarInit", FTI_RecoverVarInit(), FTI_SCES);
        expect("FTI_RecoverVar steps", FTI_RecoverVar(0), FTI_SCES);
        expect("FTI_RecoverVar n", FTI_RecoverVar(1), FTI_SCES);
        expect("FTI_RecoverVar point", FTI_RecoverVar(3), FTI_SCES);
        /* The list is protected with 0 elements: recovering it as it is fails. */
        expect("FTI_RecoverVar list before FTI_Realloc", FTI_RecoverVar(2), FTI_NSCS);
        stored = FTI_GetStoredSize(2);
        expect("FTI_GetStoredSize list", stored, n * (long)sizeof(double));
        list = FTI_Realloc(2, list);
        if (list == NULL) MPI_Abort(MPI_COMM_WORLD, 4);
        expect("FTI_RecoverVar list", FTI_RecoverVar(2), FTI_SCES);
        expect("FTI_RecoverVarFinalize", FTI_RecoverVarFinalize(), FTI_SCES);
        protected_count = n;
    }
    if (restarted && rank == 0) printf("recovered steps %d n %ld stored %ld\n", steps, n, stored);

    while (steps < 10) {
        if (!snapshot) {
            list = realloc(list, (n + 1) * sizeof(double));
            protected_count = n + 1;
        }
        list[n++] = rank * 100 + steps;
        p.b[steps % 3] += steps;
        steps++;
        expect("FTI_Protect list", FTI_Protect(2, list, protected_count, FTI_DBLE), FTI_SCES);
        if (snapshot) expect("FTI_Snapshot", FTI_Snapshot(), FTI_SCES);
        if (steps % 3 == 0) expect("FTI_Checkpoint", FTI_Checkpoint(steps / 3, 2), FTI_DONE);
        if (die && steps == 7 && rank == 1) raise(SIGKILL);
    }
    double local = n + p.a + p.b[0] + p.b[1] + p.b[2], sum = 0;
    for (long i = 0; i < n; i++) local += list[i] * (i + 1);
    MPI_Reduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, FTI_COMM_WORLD);
    if (rank == 0) printf("checksum %.6f\n", sum);
    expect("FTI_Finalize", FTI_Finalize(), FTI_SCES);
    MPI_Finalize();
    return 0;
}
