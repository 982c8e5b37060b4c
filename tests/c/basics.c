/* Point-to-point, collectives and error classes through the C ABI; prints one
 * deterministic line per check on rank 0 so runs under different MPI libraries can
 * be compared, and exits non-zero on the first failure. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond, what) do { if (!(cond)) { fprintf(stderr, "rank %d: FAILED %s\n", rank, what); MPI_Abort(MPI_COMM_WORLD, 3); } } while (0)

static void maxabs(void *in, void *inout, int *len, MPI_Datatype *t) {
    (void)t;
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++) { int x = abs(a[i]), y = abs(b[i]); b[i] = x > y ? x : y; }
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    int rank, size, flag;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Initialized(&flag);
    CHECK(flag, "initialized");
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;

    /* ring with sendrecv and status */
    double out[100], in[100];
    for (int i = 0; i < 100; i++) out[i] = rank * 1000 + i;
    MPI_Status st;
    MPI_Sendrecv(out, 100, MPI_DOUBLE, next, 7, in, 100, MPI_DOUBLE, prev, 7, MPI_COMM_WORLD, &st);
    int count;
    MPI_Get_count(&st, MPI_DOUBLE, &count);
    CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == 7 && count == 100 && in[99] == prev * 1000 + 99, "sendrecv");
    if (rank == 0) printf("sendrecv ok\n");

    /* non-blocking with waitany / test */
    MPI_Request reqs[2];
    int a = rank, b = -1;
    MPI_Irecv(&b, 1, MPI_INT, prev, 8, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(&a, 1, MPI_INT, next, 8, MPI_COMM_WORLD, &reqs[1]);
    int idx, done = 0;
    while (done < 2) { MPI_Waitany(2, reqs, &idx, MPI_STATUS_IGNORE); done++; }
    CHECK(b == prev && reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL, "waitany");
    MPI_Irecv(&b, 1, MPI_INT, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &reqs[0]);
    MPI_Send(&a, 1, MPI_INT, next, 9, MPI_COMM_WORLD);
    flag = 0;
    while (!flag) MPI_Test(&reqs[0], &flag, &st);
    CHECK(st.MPI_SOURCE == prev && b == prev, "test");
    if (rank == 0) printf("nonblocking ok\n");

    /* probe */
    MPI_Send(out, 33, MPI_DOUBLE, next, 10, MPI_COMM_WORLD);
    MPI_Probe(MPI_ANY_SOURCE, 10, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_DOUBLE, &count);
    CHECK(count == 33, "probe count");
    MPI_Recv(in, count, MPI_DOUBLE, st.MPI_SOURCE, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rank == 0) printf("probe ok\n");

    /* collectives */
    long lsum = 0, lrank = rank;
    MPI_Allreduce(&lrank, &lsum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(lsum == (long)size * (size - 1) / 2, "allreduce");
    int v = rank;
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(v == size - 1, "allreduce in place");
    int bc = rank == size - 1 ? 42 : 0;
    MPI_Bcast(&bc, 1, MPI_INT, size - 1, MPI_COMM_WORLD);
    CHECK(bc == 42, "bcast");
    int *all = malloc(sizeof(int) * size);
    MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++) CHECK(all[i] == i, "allgather");
    int *sendv = malloc(sizeof(int) * size), *recvv = malloc(sizeof(int) * size);
    for (int i = 0; i < size; i++) sendv[i] = rank * 100 + i;
    MPI_Alltoall(sendv, 1, MPI_INT, recvv, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++) CHECK(recvv[i] == i * 100 + rank, "alltoall");
    MPI_Gather(&rank, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) for (int i = 0; i < size; i++) CHECK(all[i] == i, "gather");
    int mine = -1;
    MPI_Scatter(sendv, 1, MPI_INT, &mine, 1, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK(mine == (rank == 0 ? 0 : rank), "scatter"); /* rank 0's sendv[i] = i */
    int pre = 0, one = 1;
    MPI_Scan(&one, &pre, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(pre == rank + 1, "scan");
    int signed_v = (rank % 2 ? -1 : 1) * rank, m = 0;
    MPI_Op op;
    MPI_Op_create(maxabs, 1, &op);
    MPI_Reduce(&signed_v, &m, 1, MPI_INT, op, 0, MPI_COMM_WORLD);
    if (rank == 0) CHECK(m == size - 1, "user op");
    MPI_Op_free(&op);
    struct { double v; int i; } loc = { (double)((rank * 7) % size), rank }, res;
    MPI_Allreduce(&loc, &res, 1, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
    CHECK(res.v == 0.0 && res.i == 0, "minloc");
    if (rank == 0) printf("collectives ok\n");

    /* communicators */
    MPI_Comm half, dup;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    int hr, hs;
    MPI_Comm_rank(half, &hr);
    MPI_Comm_size(half, &hs);
    CHECK(hs == (size + 1 - rank % 2) / 2, "split size");
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int cmp;
    MPI_Comm_compare(MPI_COMM_WORLD, dup, &cmp);
    CHECK(cmp == MPI_CONGRUENT, "compare");
    MPI_Comm_free(&dup);
    CHECK(dup == MPI_COMM_NULL, "free");
    MPI_Comm_free(&half);
    if (rank == 0) printf("communicators ok\n");

    /* errors under MPI_ERRORS_RETURN */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int cls, rc = MPI_Send(&a, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "error rank");
    /* Return codes may be specific codes: compare their classes. */
    rc = MPI_Send(&a, -1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COUNT, "error count");
    rc = MPI_Send(&a, 1, (MPI_Datatype)12345, 0, 0, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TYPE, "error type");
    rc = MPI_Bcast(&a, 1, MPI_INT, -5, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ROOT, "error root");
    char text[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(MPI_ERR_TRUNCATE, text, &len);
    CHECK(len > 0, "error string");
    if (rank == 0) printf("errors ok\n");

    MPI_Finalize();
    MPI_Finalized(&flag);
    CHECK(flag, "finalized");
    return 0;
}
