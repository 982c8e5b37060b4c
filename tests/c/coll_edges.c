/* Collective edge cases: MPI_Alltoallw and MPI_Alltoallv with zero counts and
 * MPI_IN_PLACE (NULL send arrays, MPI_DATATYPE_NULL send type), and a user
 * op over a 3-double type on vectors long enough to be split among ranks
 * (Reduce, Allreduce, Reduce_scatter_block). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, size;
#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "rank %d: FAILED ", rank); \
    fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); MPI_Abort(MPI_COMM_WORLD, 6); } } while (0)

/* (sum, max, min) of triples */
static void triple_op(void *in, void *inout, int *count, MPI_Datatype *t) {
    (void)t;
    double *a = in, *b = inout;
    for (int i = 0; i < *count; i++, a += 3, b += 3) {
        b[0] += a[0];
        b[1] = b[1] > a[1] ? b[1] : a[1];
        b[2] = b[2] < a[2] ? b[2] : a[2];
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *sc = calloc(size, sizeof(int)), *sd = calloc(size, sizeof(int));
    int *rc = calloc(size, sizeof(int)), *rd = calloc(size, sizeof(int));
    MPI_Datatype *st = malloc(size * sizeof(MPI_Datatype)), *rt = malloc(size * sizeof(MPI_Datatype));
    int sbuf = rank, rbuf = -7;
    for (int i = 0; i < size; i++) { st[i] = MPI_INT; rt[i] = MPI_INT; }

    /* zero counts everywhere: nothing moves */
    MPI_Alltoallw(&sbuf, sc, sd, st, &rbuf, rc, rd, rt, MPI_COMM_WORLD);
    MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, &rbuf, rc, rd, rt, MPI_COMM_WORLD);
    MPI_Alltoallv(&sbuf, sc, sd, MPI_INT, &rbuf, rc, rd, MPI_INT, MPI_COMM_WORLD);
    MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, &rbuf, rc, rd, MPI_INT, MPI_COMM_WORLD);
    CHECK(rbuf == -7, "zero-count exchanges wrote %d", rbuf);

    /* in place with data: block j of rank i holds 100 * i + j, then 100 * j + i */
    int *a = malloc(2 * size * sizeof(int));
    for (int j = 0; j < size; j++) {
        rc[j] = 2; rd[j] = 2 * j;
        a[2 * j] = 100 * rank + j; a[2 * j + 1] = -(100 * rank + j);
    }
    MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, a, rc, rd, MPI_INT, MPI_COMM_WORLD);
    for (int j = 0; j < size; j++)
        CHECK(a[2 * j] == 100 * j + rank && a[2 * j + 1] == -(100 * j + rank), "alltoallv in place [%d]", j);
    for (int j = 0; j < size; j++) { rc[j] = 2; rd[j] = 8 * j; }
    MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, a, rc, rd, rt, MPI_COMM_WORLD);
    for (int j = 0; j < size; j++)
        CHECK(a[2 * j] == 100 * rank + j && a[2 * j + 1] == -(100 * rank + j), "alltoallw in place [%d]", j);
    free(a);
    if (rank == 0) printf("alltoallv alltoallw zero and in place ok\n");

    /* user op on triples, counts 1 .. 2^17 */
    MPI_Op op;
    MPI_Datatype triple;
    MPI_Op_create(triple_op, 0, &op);
    MPI_Type_contiguous(3, MPI_DOUBLE, &triple);
    MPI_Type_commit(&triple);
    for (int count = 1; count <= 1 << 17; count *= 2) {
        double *in = malloc(3 * count * sizeof(double)), *out = malloc(3 * count * sizeof(double));
        for (int i = 0; i < 3 * count; i++) { in[i] = 1 + (i & 3) + (i % 3 == 0 ? 0 : rank); out[i] = -1; }
        for (int pass = 0; pass < 2; pass++) {
            if (pass == 0) MPI_Reduce(in, out, count, triple, op, 0, MPI_COMM_WORLD);
            else MPI_Allreduce(in, out, count, triple, op, MPI_COMM_WORLD);
            if (pass == 1 || rank == 0)
                for (int i = 0; i < 3 * count; i += 3) {
                    double sum = size * (1 + (i & 3));
                    double max = 1 + ((i + 1) & 3) + (size - 1), min = 1 + ((i + 2) & 3);
                    CHECK(out[i] == sum && out[i + 1] == max && out[i + 2] == min,
                          "user op pass %d count %d at %d: %g %g %g", pass, count, i / 3, out[i], out[i + 1], out[i + 2]);
                }
        }
        free(in); free(out);
    }
    int per = 5000;
    double *in = malloc(3 * per * size * sizeof(double)), *out = malloc(3 * per * sizeof(double));
    for (int i = 0; i < 3 * per * size; i++) in[i] = 1 + (i & 3) + (i % 3 == 0 ? 0 : rank);
    MPI_Reduce_scatter_block(in, out, per, triple, op, MPI_COMM_WORLD);
    for (int k = 0; k < per; k++) {
        int i = 3 * (rank * per + k);
        CHECK(out[3 * k] == size * (1 + (i & 3)) && out[3 * k + 1] == 1 + ((i + 1) & 3) + (size - 1)
              && out[3 * k + 2] == 1 + ((i + 2) & 3), "reduce_scatter_block user op at %d", k);
    }
    free(in); free(out);
    MPI_Op_free(&op);
    MPI_Type_free(&triple);
    if (rank == 0) printf("user op on long vectors ok\n");
    MPI_Finalize();
    return 0;
}
