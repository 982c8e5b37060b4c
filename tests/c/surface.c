/* The MPI-3.1 surface beyond the everyday calls: each section checks its
 * functions on every rank and rank 0 prints one line when all passed. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int rank, size;

#define CHECK(cond, what) do { if (!(cond)) { fprintf(stderr, "rank %d: FAILED %s (line %d)\n", rank, what, __LINE__); MPI_Abort(MPI_COMM_WORLD, 8); } } while (0)

static void done(const char *section) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("%s ok\n", section);
    fflush(stdout);
}

static int class_of(int rc) {
    int cls;
    MPI_Error_class(rc, &cls);
    return cls;
}

/* Functions of families not built yet fail, named, with
 * MPI_ERR_UNSUPPORTED_OPERATION (here under MPI_ERRORS_RETURN). */
static void unsupported(void) {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_File fh = MPI_FILE_NULL;
    int rc = MPI_File_open(MPI_COMM_WORLD, "/tmp/x", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(class_of(rc) == MPI_ERR_UNSUPPORTED_OPERATION, "file open");
    MPI_Win win = MPI_WIN_NULL;
    rc = MPI_Win_fence(0, win);
    CHECK(class_of(rc) == MPI_ERR_UNSUPPORTED_OPERATION, "win fence");
    char port[MPI_MAX_PORT_NAME];
    rc = MPI_Open_port(MPI_INFO_NULL, port);
    CHECK(class_of(rc) == MPI_ERR_UNSUPPORTED_OPERATION, "open port");
    char text[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(rc, text, &len);
    CHECK(strcmp(text, "MPI_ERR_UNSUPPORTED_OPERATION") == 0, "error string");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    done("unsupported");
}

/* Fortran conversions, address arithmetic, MPI_Pcontrol. */
static void conversions(void) {
    MPI_Status s, back;
    MPI_Fint f[MPI_F_STATUS_SIZE];
    s.MPI_SOURCE = 3;
    s.MPI_TAG = 7;
    s.MPI_ERROR = MPI_SUCCESS;
    CHECK(MPI_Status_c2f(&s, f) == MPI_SUCCESS, "status c2f");
    CHECK(f[MPI_F_SOURCE] == 3 && f[MPI_F_TAG] == 7, "fortran status fields");
    MPI_Status_f2c(f, &back);
    CHECK(back.MPI_SOURCE == 3 && back.MPI_TAG == 7, "status f2c");
    CHECK(MPI_File_c2f(MPI_FILE_NULL) == 0 && MPI_File_f2c(0) == MPI_FILE_NULL, "file c2f");
    CHECK(MPI_Win_f2c(MPI_Win_c2f(MPI_WIN_NULL)) == MPI_WIN_NULL, "win c2f");
    double a[4];
    MPI_Aint base = (MPI_Aint)&a[0], third = (MPI_Aint)&a[3];
    CHECK(MPI_Aint_diff(third, base) == 3 * sizeof(double), "aint diff");
    CHECK(MPI_Aint_add(base, 3 * sizeof(double)) == third, "aint add");
    CHECK(MPI_Pcontrol(1) == MPI_SUCCESS && MPI_Pcontrol(0, "extra") == MPI_SUCCESS, "pcontrol");
    done("conversions");
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsupported();
    conversions();
    MPI_Finalize();
    return 0;
}
