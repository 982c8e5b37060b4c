/* Non-blocking collectives among the rank's other collectives: blocking
 * collectives and communicator creation issued while non-blocking ones are
 * pending on the same communicator, handles freed right after the start, user
 * ops on non-contiguous types, intercommunicators with groups of different
 * sizes, and threads of a rank starting collectives (MPI_THREAD_MULTIPLE). */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, size;

#define CHECK(cond, what) do { if (!(cond)) { fprintf(stderr, "rank %d: FAILED %s (line %d)\n", rank, what, __LINE__); MPI_Abort(MPI_COMM_WORLD, 7); } } while (0)

/* Sum of ints `stride` apart: indexes its vectors by the type's extent. */
static void strided_sum(void *in, void *inout, int *len, MPI_Datatype *dt) {
    MPI_Aint lb, extent;
    MPI_Type_get_extent(*dt, &lb, &extent);
    int stride = (int)(extent / sizeof(int));
    for (int i = 0; i < *len; i++) ((int *)inout)[i * stride] += ((int *)in)[i * stride];
}

static void plain_sum(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)dt;
    for (int i = 0; i < *len; i++) ((int *)inout)[i] += ((int *)in)[i];
}

/* Sum over the communicator of rank + 1, checked on `comm`. */
static void check_comm(MPI_Comm comm, const char *what) {
    int n, one = 1, total = 0;
    MPI_Comm_size(comm, &n);
    MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, comm);
    CHECK(total == n, what);
}

static void order(void) {
    /* Creation overlapping pending idups of the same communicator. */
    MPI_Comm idups[3], out;
    MPI_Request r[3];
    for (int i = 0; i < 3; i++) MPI_Comm_idup(MPI_COMM_WORLD, &idups[i], &r[i]);
    MPI_Comm_dup(MPI_COMM_WORLD, &out);
    check_comm(out, "dup while idups pend");
    MPI_Comm_free(&out);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &out);
    check_comm(out, "split while idups pend");
    MPI_Comm_free(&out);
    MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
    for (int i = 0; i < 3; i++) {
        check_comm(idups[i], "idup");
        MPI_Comm_free(&idups[i]);
    }

    /* Blocking collectives issued while non-blocking ones pend, each rank
     * waiting in a different order; every one must pair with its own. */
    for (int round = 0; round < 20; round++) {
        int a = rank == 0 ? 100 + round : -1, b = rank == size - 1 ? 200 + round : -1;
        int c = rank == size / 2 ? 300 + round : -1, sum = 0, mx = -1;
        MPI_Request q[3];
        MPI_Ibcast(&a, 1, MPI_INT, 0, MPI_COMM_WORLD, &q[0]);
        MPI_Iallreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q[1]);
        MPI_Bcast(&b, 1, MPI_INT, size - 1, MPI_COMM_WORLD);
        MPI_Ibcast(&c, 1, MPI_INT, size / 2, MPI_COMM_WORLD, &q[2]);
        MPI_Allreduce(&rank, &mx, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if ((rank + round) % 2) {
            MPI_Waitall(3, q, MPI_STATUSES_IGNORE);
        } else {
            for (int i = 2; i >= 0; i--) MPI_Wait(&q[i], MPI_STATUS_IGNORE);
        }
        CHECK(a == 100 + round && b == 200 + round && c == 300 + round, "bcasts in issue order");
        CHECK(sum == size * (size - 1) / 2 && mx == size - 1, "reductions in issue order");
    }
    if (rank == 0) printf("order ok\n");
}

static void freed_handles(void) {
    int in[4], out[4];
    MPI_Op op;
    MPI_Request r;
    for (int i = 0; i < 4; i++) in[i] = rank + i, out[i] = -1;
    MPI_Op_create(plain_sum, 1, &op);
    MPI_Iallreduce(in, out, 4, MPI_INT, op, MPI_COMM_WORLD, &r);
    MPI_Op_free(&op);
    CHECK(op == MPI_OP_NULL, "op freed");
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    for (int i = 0; i < 4; i++) CHECK(out[i] == size * (size - 1) / 2 + size * i, "op freed before the wait");

    MPI_Datatype t;
    MPI_Type_contiguous(2, MPI_INT, &t);
    MPI_Type_commit(&t);
    int *all = malloc(sizeof(int) * 2 * size);
    int two[2] = {rank, -rank};
    MPI_Iallgather(two, 1, t, all, 1, t, MPI_COMM_WORLD, &r);
    MPI_Type_free(&t);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    for (int i = 0; i < size; i++) CHECK(all[2 * i] == i && all[2 * i + 1] == -i, "type freed before the wait");
    free(all);

    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    int v = rank == 0 ? 77 : 0;
    MPI_Ibcast(&v, 1, MPI_INT, 0, c, &r);
    MPI_Comm_free(&c);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(v == 77, "communicator freed before the wait");
    /* A new communicator does not take the freed one's place early. */
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    check_comm(c, "dup after a freed one");
    MPI_Comm_free(&c);
    if (rank == 0) printf("freed handles ok\n");
}

static void user_op_layout(void) {
    enum { COUNT = 7 };
    MPI_Datatype vec, t;
    MPI_Type_vector(1, 1, 2, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, 2 * sizeof(int), &t);
    MPI_Type_free(&vec);
    MPI_Type_commit(&t);
    MPI_Op op;
    MPI_Op_create(strided_sum, 1, &op);
    int *in = malloc(sizeof(int) * 2 * COUNT * size), *out = malloc(sizeof(int) * 2 * COUNT * size);
    int *counts = malloc(sizeof(int) * size);
    for (int nb = 0; nb < 2; nb++) {
        for (int i = 0; i < 2 * COUNT * size; i++) in[i] = rank + i, out[i] = -1;
        MPI_Request r;
        if (nb) {
            MPI_Iallreduce(in, out, COUNT, t, op, MPI_COMM_WORLD, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            MPI_Allreduce(in, out, COUNT, t, op, MPI_COMM_WORLD);
        }
        for (int i = 0; i < COUNT; i++) {
            CHECK(out[2 * i] == size * (size - 1) / 2 + 2 * i * size, "allreduce, user op on a strided type");
            CHECK(out[2 * i + 1] == -1, "allreduce left the gaps alone");
        }
        for (int i = 0; i < size; i++) counts[i] = COUNT;
        for (int i = 0; i < 2 * COUNT * size; i++) out[i] = -1;
        if (nb) {
            MPI_Ireduce_scatter(in, out, counts, t, op, MPI_COMM_WORLD, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            MPI_Reduce_scatter(in, out, counts, t, op, MPI_COMM_WORLD);
        }
        for (int i = 0; i < COUNT; i++) {
            int k = rank * COUNT + i;
            CHECK(out[2 * i] == size * (size - 1) / 2 + 2 * k * size, "reduce_scatter, user op on a strided type");
            CHECK(out[2 * i + 1] == -1, "reduce_scatter left the gaps alone");
        }
        for (int i = 2 * COUNT; i < 2 * COUNT * size; i++) CHECK(out[i] == -1, "reduce_scatter wrote only its part");
    }
    free(in);
    free(out);
    free(counts);
    MPI_Op_free(&op);
    MPI_Type_free(&t);
    if (rank == 0) printf("user op layout ok\n");
}

/* The low third of the ranks against the rest: groups of different sizes. */
static void intercomm_v(void) {
    if (size < 2) {
        if (rank == 0) printf("intercomm v ok\n");
        return;
    }
    int nlow = size / 3 > 0 ? size / 3 : 1, low = rank < nlow;
    MPI_Comm local, inter;
    MPI_Comm_split(MPI_COMM_WORLD, low, rank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? nlow : 0, 5, &inter);
    int lrank, lsize, rsize;
    MPI_Comm_rank(inter, &lrank);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    int *counts = malloc(sizeof(int) * rsize), *displs = malloc(sizeof(int) * rsize);
    int *buf = malloc(sizeof(int) * 2 * rsize), mine[2], got[2];
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * rsize);
    for (int i = 0; i < rsize; i++) counts[i] = 2, displs[i] = 2 * i, types[i] = MPI_INT;
    MPI_Request r;

    /* Gatherv and scatterv rooted at the low group's first rank. */
    int root = low ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    mine[0] = rank, mine[1] = -rank;
    for (int i = 0; i < 2 * rsize; i++) buf[i] = -9;
    MPI_Igatherv(mine, 2, MPI_INT, buf, counts, displs, MPI_INT, root, inter, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    if (root == MPI_ROOT)
        for (int i = 0; i < rsize; i++) CHECK(buf[2 * i] == nlow + i && buf[2 * i + 1] == -(nlow + i), "igatherv");
    for (int i = 0; i < 2 * rsize; i++) buf[i] = 1000 + i;
    got[0] = got[1] = -9;
    MPI_Iscatterv(buf, counts, displs, MPI_INT, got, 2, MPI_INT, root, inter, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    if (!low) CHECK(got[0] == 1000 + 2 * lrank && got[1] == 1001 + 2 * lrank, "iscatterv");

    /* Allgatherv, alltoallv and alltoallw: every rank receives from the other group. */
    for (int i = 0; i < 2 * rsize; i++) buf[i] = -9;
    MPI_Iallgatherv(mine, 2, MPI_INT, buf, counts, displs, MPI_INT, inter, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    int rfirst = low ? nlow : 0;
    for (int i = 0; i < rsize; i++) CHECK(buf[2 * i] == rfirst + i && buf[2 * i + 1] == -(rfirst + i), "iallgatherv");
    int *send = malloc(sizeof(int) * 2 * rsize);
    for (int i = 0; i < rsize; i++) send[2 * i] = rank * 100 + i, send[2 * i + 1] = -(rank * 100 + i);
    for (int w = 0; w < 2; w++) {
        for (int i = 0; i < 2 * rsize; i++) buf[i] = -9;
        if (w) {
            int *bd = malloc(sizeof(int) * rsize);
            for (int i = 0; i < rsize; i++) bd[i] = 2 * i * (int)sizeof(int);
            MPI_Ialltoallw(send, counts, bd, types, buf, counts, bd, types, inter, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            free(bd);
        } else {
            MPI_Ialltoallv(send, counts, displs, MPI_INT, buf, counts, displs, MPI_INT, inter, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        for (int i = 0; i < rsize; i++)
            CHECK(buf[2 * i] == (rfirst + i) * 100 + lrank && buf[2 * i + 1] == -((rfirst + i) * 100 + lrank),
                  w ? "ialltoallw" : "ialltoallv");
    }
    free(send);
    free(counts);
    free(displs);
    free(buf);
    free(types);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    if (rank == 0) printf("intercomm v ok\n");
}

/* Each thread of a rank: its own communicator, an idup of it and
 * non-blocking reductions on both. */
static void *thread_body(void *arg) {
    MPI_Comm c = *(MPI_Comm *)arg, d;
    MPI_Request r[2];
    for (int k = 0; k < 10; k++) {
        int one = 1, sum = 0;
        MPI_Comm_idup(c, &d, &r[0]);
        MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c, &r[1]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        CHECK(sum == size, "iallreduce from a thread");
        sum = 0;
        MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, d, &r[0]);
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        CHECK(sum == size, "iallreduce on an idup from a thread");
        MPI_Comm_free(&d);
    }
    return NULL;
}

static void threads(void) {
    enum { T = 3 };
    MPI_Comm comms[T];
    pthread_t th[T];
    for (int i = 0; i < T; i++) MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]);
    for (int i = 0; i < T; i++) pthread_create(&th[i], NULL, thread_body, &comms[i]);
    for (int i = 0; i < T; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < T; i++) MPI_Comm_free(&comms[i]);
    if (rank == 0) printf("threads ok\n");
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    order();
    freed_handles();
    user_op_layout();
    intercomm_v();
    if (provided == MPI_THREAD_MULTIPLE) threads();
    else if (rank == 0) printf("threads ok\n");
    MPI_Finalize();
    return 0;
}
