/* Parallel HDF5 over MPI-IO: every rank writes its 4 rows of a
 * (4 x ranks) x 1000 dataset of doubles collectively into the file argv[1],
 * with an attribute; the file is reopened read-only, each rank reads its
 * right neighbour's rows independently, then every rank reads the whole
 * dataset collectively. Rank 0 prints one line when every value checked on
 * every rank; a failed check prints what and aborts the job. */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, size;

#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "rank %d: %s:%d: ", rank, __FILE__, __LINE__);   \
            fprintf(stderr, __VA_ARGS__);                                    \
            fprintf(stderr, "\n");                                           \
            MPI_Abort(MPI_COMM_WORLD, 1);                                    \
        }                                                                    \
    } while (0)

/* An HDF5 call returning a negative id or status failed. */
#define H5(call) CHECK((call) >= 0, "%s failed", #call)

enum { ROWS = 4, COLS = 1000 };

/* The value at (row, col): its writer's rank, the row and the column. */
static double value(hsize_t row, hsize_t col) {
    return (double)(row / ROWS) * 1e7 + (double)row * 1e3 + (double)col;
}

/* Checks `n` rows starting at `first` in `buf`. */
static void verify(const double *buf, hsize_t first, hsize_t n, const char *what) {
    for (hsize_t r = 0; r < n; r++)
        for (hsize_t c = 0; c < COLS; c++)
            CHECK(buf[r * COLS + c] == value(first + r, c), "%s: (%llu, %llu) is %.17g, not %.17g",
                  what, (unsigned long long)(first + r), (unsigned long long)c, buf[r * COLS + c],
                  value(first + r, c));
}

/* The file space of `dset` with `owner`'s rows selected. */
static hid_t rows_of(hid_t dset, int owner) {
    hid_t space = H5Dget_space(dset);
    H5(space);
    hsize_t start[2] = {(hsize_t)owner * ROWS, 0}, count[2] = {ROWS, COLS};
    H5(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
    return space;
}

static hid_t transfer(H5FD_mpio_xfer_t mode) {
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5(dxpl);
    H5(H5Pset_dxpl_mpio(dxpl, mode));
    return dxpl;
}

static void write_file(const char *path) {
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5(fapl);
    H5(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL));
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5(file);
    hsize_t dims[2] = {(hsize_t)size * ROWS, COLS};
    hid_t space = H5Screate_simple(2, dims, NULL);
    H5(space);
    hid_t dset = H5Dcreate2(file, "values", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT,
                            H5P_DEFAULT);
    H5(dset);

    double *mine = malloc(sizeof(double) * ROWS * COLS);
    for (hsize_t r = 0; r < ROWS; r++)
        for (hsize_t c = 0; c < COLS; c++)
            mine[r * COLS + c] = value((hsize_t)rank * ROWS + r, c);
    hsize_t mdims[2] = {ROWS, COLS};
    hid_t mem = H5Screate_simple(2, mdims, NULL);
    hid_t fspace = rows_of(dset, rank);
    hid_t dxpl = transfer(H5FD_MPIO_COLLECTIVE);
    H5(H5Dwrite(dset, H5T_NATIVE_DOUBLE, mem, fspace, dxpl, mine));

    /* Attributes are metadata: every rank writes the same value. */
    hid_t scalar = H5Screate(H5S_SCALAR);
    hid_t attr = H5Acreate2(dset, "ranks", H5T_NATIVE_INT, scalar, H5P_DEFAULT, H5P_DEFAULT);
    H5(attr);
    H5(H5Awrite(attr, H5T_NATIVE_INT, &size));

    H5(H5Aclose(attr));
    H5(H5Sclose(scalar));
    H5(H5Pclose(dxpl));
    H5(H5Sclose(fspace));
    H5(H5Sclose(mem));
    H5(H5Dclose(dset));
    H5(H5Sclose(space));
    H5(H5Fclose(file));
    H5(H5Pclose(fapl));
    free(mine);
}

static void read_file(const char *path) {
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5(fapl);
    H5(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL));
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    H5(file);
    hid_t dset = H5Dopen2(file, "values", H5P_DEFAULT);
    H5(dset);
    hid_t space = H5Dget_space(dset);
    hsize_t dims[2];
    CHECK(H5Sget_simple_extent_dims(space, dims, NULL) == 2, "the dataset is not 2-D");
    CHECK(dims[0] == (hsize_t)size * ROWS && dims[1] == COLS, "the dataset is %llux%llu",
          (unsigned long long)dims[0], (unsigned long long)dims[1]);

    int ranks = -1;
    hid_t attr = H5Aopen(dset, "ranks", H5P_DEFAULT);
    H5(attr);
    H5(H5Aread(attr, H5T_NATIVE_INT, &ranks));
    CHECK(ranks == size, "attribute ranks is %d", ranks);
    H5(H5Aclose(attr));

    /* The right neighbour's rows, independently. */
    int right = (rank + 1) % size;
    double *rows = malloc(sizeof(double) * ROWS * COLS);
    hsize_t mdims[2] = {ROWS, COLS};
    hid_t mem = H5Screate_simple(2, mdims, NULL);
    hid_t fspace = rows_of(dset, right);
    hid_t indep = transfer(H5FD_MPIO_INDEPENDENT);
    H5(H5Dread(dset, H5T_NATIVE_DOUBLE, mem, fspace, indep, rows));
    verify(rows, (hsize_t)right * ROWS, ROWS, "independent read of the right neighbour's rows");

    /* Everything, collectively. */
    double *all = malloc(sizeof(double) * dims[0] * COLS);
    hid_t coll = transfer(H5FD_MPIO_COLLECTIVE);
    H5(H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, coll, all));
    verify(all, 0, dims[0], "collective read of the whole dataset");

    H5(H5Pclose(coll));
    H5(H5Pclose(indep));
    H5(H5Sclose(fspace));
    H5(H5Sclose(mem));
    H5(H5Sclose(space));
    H5(H5Dclose(dset));
    H5(H5Fclose(file));
    H5(H5Pclose(fapl));
    free(all);
    free(rows);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(argc == 2, "usage: hdf5_io FILE");
    write_file(argv[1]);
    MPI_Barrier(MPI_COMM_WORLD);
    read_file(argv[1]);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("hdf5 ok: %d ranks, dataset %dx%d\n", size, size * ROWS, COLS);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
