/* Collective write (and read back) of one file from every rank, timed.
 *   io_write <file> <mib_total> <contiguous|strided> [block_kib]
 * contiguous: rank r writes bytes [r*B, (r+1)*B) of the file, B = total/size,
 *   one MPI_File_write_at_all;
 * strided: the file is blocks of block_kib (default 1024) dealt round-robin
 *   to the ranks, each rank's through a view (vector filetype), one
 *   MPI_File_write_all of all of them.
 * Then MPI_File_sync, and a collective read of the same pieces, checked.
 * Rank 0 prints: "write_s W sync_s S read_s R write_MBps X read_MBps Y". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 4) {
        if (rank == 0)
            fprintf(stderr, "usage: io_write <file> <mib_total> <contiguous|strided> [block_kib]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long long total = atoll(argv[2]) << 20;
    int strided = strcmp(argv[3], "strided") == 0;
    long long block = (argc > 4 ? atoll(argv[4]) : 1024) << 10;
    long long mine = total / size;
    if (strided)
        mine = mine / block * block;
    char *buf = malloc(mine), *back = malloc(mine);
    for (long long i = 0; i < mine; i += 4096)
        buf[i] = (char)(rank + i / 4096);
    MPI_File fh;
    MPI_File_delete(argv[1], MPI_INFO_NULL);
    if (MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh) != MPI_SUCCESS) {
        fprintf(stderr, "cannot open %s\n", argv[1]);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Datatype filetype = MPI_DATATYPE_NULL;
    if (strided) {
        MPI_Type_vector((int)(mine / block), (int)block, (int)(block * size), MPI_BYTE, &filetype);
        MPI_Type_commit(&filetype);
        MPI_File_set_view(fh, rank * block, MPI_BYTE, filetype, "native", MPI_INFO_NULL);
    }
    /* Touch the pages first: the timing is the file's, not the first use of memory. */
    memset(back, 0, mine);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (strided)
        MPI_File_write_at_all(fh, 0, buf, (int)mine, MPI_BYTE, MPI_STATUS_IGNORE);
    else
        MPI_File_write_at_all(fh, rank * mine, buf, (int)mine, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    double t1 = MPI_Wtime();
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    double t2 = MPI_Wtime();
    if (strided)
        MPI_File_read_at_all(fh, 0, back, (int)mine, MPI_BYTE, MPI_STATUS_IGNORE);
    else
        MPI_File_read_at_all(fh, rank * mine, back, (int)mine, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    double t3 = MPI_Wtime();
    int bad = memcmp(buf, back, mine) != 0, any;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (any) {
        if (rank == 0)
            fprintf(stderr, "read back differs from what was written\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_File_close(&fh);
    if (filetype != MPI_DATATYPE_NULL)
        MPI_Type_free(&filetype);
    if (rank == 0) {
        double mb = (double)mine * size / 1e6;
        printf("write_s %.4f sync_s %.4f read_s %.4f write_MBps %.0f read_MBps %.0f\n", t1 - t0, t2 - t1, t3 - t2,
               mb / (t1 - t0), mb / (t3 - t2));
        MPI_File_delete(argv[1], MPI_INFO_NULL);
    }
    free(buf);
    free(back);
    MPI_Finalize();
    return 0;
}
