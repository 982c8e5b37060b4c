/* Heat diffusion on a ring of ranks that writes its progress to one file
 * through MPI-IO while it runs, checkpointed with the file open. Every 10
 * iterations each rank writes its first row into a slot of the file
 * (MPI_File_write_at_all), its row sum through its own view and individual
 * file pointer (MPI_File_write_all), and a record through the shared file
 * pointer (MPI_File_write_shared). At the end the file is read back and
 * summed. Same arguments and output as ../shared/bench/heat.c with
 * -DWITH_MPIX, plus the file's path:
 *   heat_io <kib_per_rank> <iterations> [checkpoint_every] [file]
 * (file default: $TMPDIR/heat_io.<pid of rank 0>, deleted at the end). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { COLS = 64, SLOTS = 16 };

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3) {
        if (rank == 0)
            fprintf(stderr, "usage: heat_io <kib_per_rank> <iterations> [checkpoint_every] [file]\n");
        MPI_Finalize();
        return 2;
    }
    long kib = atol(argv[1]);
    int iters = atoi(argv[2]);
    int every = argc > 3 ? atoi(argv[3]) : 0;
    char path[512];
    int own_file = argc <= 4;
    if (own_file) {
        const char *tmp = getenv("TMPDIR");
        int pid = getpid();
        MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
        snprintf(path, sizeof path, "%s/heat_io.%d", tmp && *tmp ? tmp : "/tmp", pid);
    } else {
        snprintf(path, sizeof path, "%s", argv[4]);
    }
    int rows = (int)(kib * 1024 / sizeof(double) / COLS);
    if (rows < 2)
        rows = 2;
    double *grid = calloc((size_t)(rows + 2) * COLS, sizeof(double));
    double *next = malloc((size_t)(rows + 2) * COLS * sizeof(double));
    for (int j = 0; j < COLS; j++)
        grid[COLS + j] = (rank * COLS + j) % 7;

    /* Layout: SLOTS slots of every rank's first row, then the row sums
     * (rank r's view: every size-th double), then the shared records. */
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    MPI_File_set_errhandler(fh, MPI_ERRORS_ARE_FATAL);
    MPI_Offset row_bytes = COLS * sizeof(double);
    MPI_Offset sums_at = SLOTS * size * row_bytes;
    int records = iters / 10;
    MPI_Offset shared_at = sums_at + (MPI_Offset)records * size * sizeof(double);
    MPI_Datatype every_size;
    MPI_Type_create_resized(MPI_DOUBLE, 0, (MPI_Aint)size * sizeof(double), &every_size);
    MPI_Type_commit(&every_size);
    MPI_File_set_view(fh, sums_at + rank * sizeof(double), MPI_DOUBLE, every_size, "native", MPI_INFO_NULL);
    /* A second handle with the whole file as bytes, the same on every rank:
     * the slots at explicit offsets, the records at the shared pointer. */
    MPI_File whole;
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &whole);
    MPI_File_set_errhandler(whole, MPI_ERRORS_ARE_FATAL);
    MPI_File_seek_shared(whole, shared_at, MPI_SEEK_SET);

    int up = (rank + size - 1) % size, down = (rank + 1) % size;
    for (int it = 0; it < iters; it++) {
        MPI_Sendrecv(&grid[COLS], COLS, MPI_DOUBLE, up, 0, &grid[(size_t)(rows + 1) * COLS], COLS, MPI_DOUBLE,
                     down, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(&grid[(size_t)rows * COLS], COLS, MPI_DOUBLE, down, 1, &grid[0], COLS, MPI_DOUBLE, up, 1,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 1; i <= rows; i++)
            for (int j = 0; j < COLS; j++) {
                double l = grid[i * COLS + (j + COLS - 1) % COLS], r = grid[i * COLS + (j + 1) % COLS];
                next[i * COLS + j] = 0.25 * (grid[(i - 1) * COLS + j] + grid[(i + 1) * COLS + j] + l + r);
            }
        memcpy(&grid[COLS], &next[COLS], (size_t)rows * COLS * sizeof(double));
        if ((it + 1) % 10 == 0) {
            int slot = ((it + 1) / 10) % SLOTS;
            double sum = 0;
            for (int j = 0; j < COLS; j++)
                sum += grid[COLS + j];
            MPI_File_write_all(fh, &sum, 1, MPI_DOUBLE, MPI_STATUS_IGNORE);
            double record[2] = {sum, (double)rank};
            MPI_File_write_shared(whole, record, 2, MPI_DOUBLE, MPI_STATUS_IGNORE);
            MPI_File_write_at_all(whole, (slot * size + rank) * row_bytes, &grid[COLS], COLS, MPI_DOUBLE,
                                  MPI_STATUS_IGNORE);
        }
        if (every > 0 && (it + 1) % every == 0 && it + 1 < iters) {
            MPIX_CR_state_t state;
            MPIX_Checkpoint(&state);
            if (rank == 0) {
                if (state == MPIX_CR_STATE_CHECKPOINT)
                    printf("checkpoint after iteration %d\n", it + 1);
                else if (state == MPIX_CR_STATE_RESTART)
                    printf("restarted after iteration %d\n", it + 1);
                else
                    printf("checkpoint state %d after iteration %d\n", (int)state, it + 1);
                fflush(stdout);
            }
        }
    }
    MPI_Offset pos;
    MPI_File_get_position(fh, &pos);
    if (pos != records) {
        fprintf(stderr, "rank %d: individual pointer at %lld, not %d\n", rank, (long long)pos, records);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    /* The file as bytes: weighted sum of every double (the shared records'
     * order varies between runs; their sum does not). */
    MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    MPI_Offset fsize;
    MPI_File_get_size(fh, &fsize);
    double file_sum = 0;
    if (rank == 0) {
        long n = fsize / sizeof(double);
        double *all = malloc(fsize);
        MPI_File_read_at(fh, 0, all, (int)n, MPI_DOUBLE, MPI_STATUS_IGNORE);
        long records_at = (long)(sums_at / sizeof(double)) + (long)records * size;
        for (long i = 0; i < n; i++)
            file_sum += all[i] * (i < records_at ? 1 + i % 5 : 1);
        free(all);
    }
    double local = 0, total = 0;
    for (int i = 1; i <= rows; i++)
        for (int j = 0; j < COLS; j++)
            local += grid[i * COLS + j] * (1 + (i + j) % 3);
    MPI_Reduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_File_close(&fh);
    MPI_File_close(&whole);
    MPI_Type_free(&every_size);
    if (rank == 0) {
        printf("ranks %d rows_per_rank %d iterations %d file_bytes %lld\n", size, rows, iters, (long long)fsize);
        printf("checksum %.12e %.12e\n", total, file_sum);
        if (own_file)
            MPI_File_delete(path, MPI_INFO_NULL);
    }
    free(grid);
    free(next);
    MPI_Finalize();
    return 0;
}
