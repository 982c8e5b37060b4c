/* Persistent buffered and ready sends, user error handlers and generalized
 * requests: each section checks real values on every rank and rank 0 prints
 * one line when all passed. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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

/* MPI_Bsend_init and MPI_Rsend_init around a ring, each started 3 times. */
static void persistent(void) {
    int next = (rank + 1) % size, prev = (rank - 1 + size) % size;
    int bufsize = 3 * (4 * sizeof(int) + MPI_BSEND_OVERHEAD);
    void *space = malloc(bufsize);
    MPI_Buffer_attach(space, bufsize);
    int out[4], in[4];
    MPI_Request s, r;
    MPI_Bsend_init(out, 4, MPI_INT, next, 5, MPI_COMM_WORLD, &s);
    MPI_Recv_init(in, 4, MPI_INT, prev, 5, MPI_COMM_WORLD, &r);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 4; i++) out[i] = rank * 100 + round * 10 + i;
        MPI_Start(&r);
        MPI_Start(&s);
        MPI_Wait(&s, MPI_STATUS_IGNORE);
        /* The data went out of the attached buffer: the send buffer is free. */
        out[0] = -1;
        MPI_Status st;
        MPI_Wait(&r, &st);
        CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == 5, "bsend_init status");
        for (int i = 0; i < 4; i++) CHECK(in[i] == prev * 100 + round * 10 + i, "bsend_init data");
    }
    MPI_Request_free(&s);
    MPI_Request_free(&r);
    int dsize;
    void *dbuf;
    MPI_Buffer_detach(&dbuf, &dsize);
    CHECK(dbuf == space && dsize == bufsize, "buffer detach");
    free(space);

    MPI_Rsend_init(out, 4, MPI_INT, next, 6, MPI_COMM_WORLD, &s);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 4; i++) out[i] = rank * 1000 + round * 10 + i;
        /* Ready mode: every receive is posted before any send starts. */
        MPI_Irecv(in, 4, MPI_INT, prev, 6, MPI_COMM_WORLD, &r);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Start(&s);
        MPI_Wait(&s, MPI_STATUS_IGNORE);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        for (int i = 0; i < 4; i++) CHECK(in[i] == prev * 1000 + round * 10 + i, "rsend_init data");
    }
    MPI_Request_free(&s);
    done("persistent buffered and ready sends");
}

static int calls, last_code;
static MPI_Comm last_comm;

static void handler(MPI_Comm *comm, int *code, ...) {
    calls++;
    last_code = *code;
    last_comm = *comm;
}

/* The handler sees the communicator and the code of errors found by the
 * library, by the runtime and raised by the program. */
static void errhandlers(void) {
    MPI_Errhandler eh, got;
    MPI_Comm_create_errhandler(handler, &eh);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(dup, eh);
    MPI_Comm_get_errhandler(dup, &got);
    CHECK(got == eh, "get_errhandler");
    int x = 1, y[2];
    int rc = MPI_Send(&x, 1, MPI_INT, size + 3, 0, dup);
    CHECK(calls == 1 && last_comm == dup && last_code == rc && class_of(rc) == MPI_ERR_RANK, "invalid rank");
    rc = MPI_Send(&x, 1, (MPI_Datatype)0x12345, 0, 0, dup);
    CHECK(calls == 2 && last_code == rc && class_of(rc) == MPI_ERR_TYPE, "invalid datatype");
    int two[2] = {1, 2};
    rc = MPI_Sendrecv(two, 2, MPI_INT, rank, 1, y, 1, MPI_INT, rank, 1, dup, MPI_STATUS_IGNORE);
    CHECK(calls == 3 && last_code == rc && class_of(rc) == MPI_ERR_TRUNCATE, "truncation");
    int cls, code;
    MPI_Add_error_class(&cls);
    MPI_Add_error_code(cls, &code);
    rc = MPI_Comm_call_errhandler(dup, code);
    CHECK(rc == MPI_SUCCESS && calls == 4 && last_code == code && last_comm == dup, "call_errhandler");

    /* A duplicate inherits the handler; MPI-1's names work the same. */
    MPI_Comm dup2;
    MPI_Comm_dup(dup, &dup2);
    MPI_Comm_call_errhandler(dup2, MPI_ERR_OTHER);
    CHECK(calls == 5 && last_comm == dup2 && last_code == MPI_ERR_OTHER, "inherited by dup");
    MPI_Errhandler eh1;
    MPI_Errhandler_create(handler, &eh1);
    MPI_Errhandler_set(MPI_COMM_WORLD, eh1);
    rc = MPI_Recv(&x, 1, MPI_INT, -5, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(calls == 6 && last_comm == MPI_COMM_WORLD && class_of(rc) == MPI_ERR_RANK, "errhandler_create on world");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    /* Back to a predefined handler: the function is not called any more. */
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    rc = MPI_Send(&x, 1, MPI_INT, size + 3, 0, dup);
    CHECK(calls == 6 && class_of(rc) == MPI_ERR_RANK, "errors_return again");
    MPI_Errhandler_free(&eh);
    MPI_Errhandler_free(&eh1);
    MPI_Comm_free(&dup2);
    MPI_Comm_free(&dup);
    done("error handlers");
}

static int queried, freed, cancelled_with = -1;

static int query_fn(void *extra, MPI_Status *s) {
    queried++;
    MPI_Status_set_elements(s, MPI_INT, *(int *)extra);
    MPI_Status_set_cancelled(s, 0);
    s->MPI_SOURCE = rank;
    s->MPI_TAG = 77;
    s->MPI_ERROR = MPI_SUCCESS;
    return MPI_SUCCESS;
}

static int free_fn(void *extra) {
    (void)extra;
    freed++;
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete) {
    (void)extra;
    cancelled_with = complete;
    return MPI_SUCCESS;
}

static void *complete_later(void *arg) {
    usleep(20000);
    MPI_Grequest_complete(*(MPI_Request *)arg);
    return NULL;
}

/* Generalized requests completed by another thread and by a later call. */
static void grequests(void) {
    int n1 = 3, n2 = 5;
    MPI_Request r[2];
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &n1, &r[0]);
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &n2, &r[1]);
    pthread_t t[2];
    MPI_Request copies[2] = {r[0], r[1]};
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, complete_later, &copies[i]);
    MPI_Status st[2];
    MPI_Waitall(2, r, st);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    int count;
    MPI_Get_count(&st[0], MPI_INT, &count);
    CHECK(count == 3 && st[0].MPI_TAG == 77 && st[0].MPI_SOURCE == rank, "first status from query_fn");
    MPI_Get_count(&st[1], MPI_INT, &count);
    CHECK(count == 5, "second status from query_fn");
    CHECK(r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL && queried == 2 && freed == 2, "freed at completion");

    /* Not done until the program says so; cancel asks the program. */
    MPI_Request g;
    int flag;
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &n1, &g);
    MPI_Test(&g, &flag, MPI_STATUS_IGNORE);
    CHECK(!flag && queried == 2, "pending generalized request");
    MPI_Cancel(&g);
    CHECK(cancelled_with == 0, "cancel_fn before completion");
    MPI_Grequest_complete(g);
    MPI_Request_get_status(g, &flag, &st[0]);
    CHECK(flag && st[0].MPI_TAG == 77 && freed == 2, "get_status queries, does not free");
    MPI_Cancel(&g);
    CHECK(cancelled_with == 1, "cancel_fn after completion");
    MPI_Test(&g, &flag, &st[0]);
    MPI_Get_count(&st[0], MPI_INT, &count);
    CHECK(flag && g == MPI_REQUEST_NULL && count == 3 && freed == 3, "test completes it");
    done("generalized requests");
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    persistent();
    errhandlers();
    grequests();
    MPI_Finalize();
    return 0;
}
