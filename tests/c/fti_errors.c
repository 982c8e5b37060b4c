/* FTI's calls given bad input: each answers FTI_NSCS (the runtime prints one
 * line naming the call and the rank) and the job goes on; a checkpoint into
 * a node-local directory that cannot be written fails and leaves the
 * previous one. Usage: fti_errors CONFIG break LOCAL_DIR, then
 * fti_errors CONFIG recover (prints the value recovered). */
#include <fti.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void expect(const char *what, int got, int want) {
    if (got != want) {
        printf("%s returned %d, not %d\n", what, got, want);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int breaking = strcmp(argv[2], "break") == 0;
    if (breaking) expect("FTI_Checkpoint before FTI_Init", FTI_Checkpoint(1, 1), FTI_NSCS);
    if (FTI_Init(argv[1], MPI_COMM_WORLD) != FTI_SCES) {
        MPI_Finalize();
        return 3;
    }
    int x = 42;
    expect("FTI_Protect", FTI_Protect(0, &x, 1, FTI_INTG), FTI_SCES);
    if (!breaking) {
        expect("FTI_Status", FTI_Status(), 1);
        expect("FTI_Recover", FTI_Recover(), FTI_SCES);
        if (rank == 0) printf("recovered %d after a failed checkpoint\n", x);
        FTI_Finalize();
        MPI_Finalize();
        return 0;
    }
    expect("FTI_Protect of NULL", FTI_Protect(3, NULL, 10, FTI_DBLE), FTI_NSCS);
    expect("FTI_Checkpoint at level 7", FTI_Checkpoint(1, 7), FTI_NSCS);
    expect("FTI_Checkpoint", FTI_Checkpoint(1, 4), FTI_DONE);
    /* The node-local directory becomes a file: the next checkpoint cannot
     * be written, and the previous one stays. */
    x = 7;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        char cmd[4096];
        snprintf(cmd, sizeof cmd, "rm -rf '%s' && touch '%s'", argv[3], argv[3]);
        if (system(cmd) != 0) MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    expect("FTI_Checkpoint into a file", FTI_Checkpoint(2, 1), FTI_NSCS);
    /* No FTI_Finalize: the checkpoints stay, as after a crash. */
    MPI_Finalize();
    return 0;
}
