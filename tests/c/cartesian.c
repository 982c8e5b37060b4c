/* MPI_Dims_create's balanced grids and zero-dimensional Cartesian
 * communicators (MPI_Cart_sub keeping no dimension, MPI_Cart_create with
 * none). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int rank;
#define CHECK(cond, what) do { if (!(cond)) { fprintf(stderr, "rank %d: FAILED %s (line %d)\n", rank, what, __LINE__); MPI_Abort(MPI_COMM_WORLD, 8); } } while (0)

static void print_dims(int n, int nd, int *d) {
    char line[256];
    int i;
    sprintf(line, "%d:", n);
    for (i = 0; i < nd; i++)
        sprintf(line + strlen(line), "%s%d", i ? "x" : " ", d[i]);
    printf("%s\n", line);
}

int main(int argc, char **argv) {
    int size, i, cls, rc, result;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* Balanced: the spread between largest and smallest is the least. */
    struct { int n, nd, fixed[5]; } cases[] = {
        {72, 2, {0}}, {240, 2, {0}}, {70416, 4, {0}}, {712656, 5, {0}},
        {559020, 5, {0}}, {100, 3, {0}}, {64, 3, {0}}, {24, 3, {0, 3, 0}},
        {7, 3, {0}},
    };
    for (i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        int d[5];
        memcpy(d, cases[i].fixed, sizeof d);
        MPI_Dims_create(cases[i].n, cases[i].nd, d);
        if (rank == 0)
            print_dims(cases[i].n, cases[i].nd, d);
    }
    int bad[2] = {5, 0};
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rc = MPI_Dims_create(12, 2, bad);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_DIMS, "12 nodes over a fixed 5");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    /* A line of every rank, then no dimension kept: rank 0 alone. */
    MPI_Comm line, none, zero;
    int dims[1] = {size}, periods[1] = {0}, remain[1] = {0};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &line);
    MPI_Cart_sub(line, remain, &none);
    if (rank == 0) {
        int nd, topo;
        MPI_Comm_compare(MPI_COMM_SELF, none, &result);
        CHECK(result == MPI_CONGRUENT, "zero-dimensional sub-grid is rank 0 alone");
        MPI_Topo_test(none, &topo);
        MPI_Cartdim_get(none, &nd);
        CHECK(topo == MPI_CART && nd == 0, "a Cartesian grid of no dimension");
        MPI_Comm_free(&none);
    } else {
        CHECK(none == MPI_COMM_NULL, "the others get MPI_COMM_NULL");
    }
    MPI_Cart_create(MPI_COMM_WORLD, 0, dims, periods, 0, &zero);
    CHECK((rank == 0) == (zero != MPI_COMM_NULL), "MPI_Cart_create with no dimension");
    if (zero != MPI_COMM_NULL)
        MPI_Comm_free(&zero);
    MPI_Comm_free(&line);
    if (rank == 0)
        printf("zero-dimensional grids ok\n");
    MPI_Finalize();
    return 0;
}
