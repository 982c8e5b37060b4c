/* Matched probes from several threads of a rank at once (MPI_THREAD_MULTIPLE):
 * each pair of ranks (even sends, odd receives) runs THREADS pthreads, thread t
 * using tag t on a shared communicator, then tag 0 on a communicator of its
 * own. Receivers alternate MPI_Mprobe + MPI_Mrecv and MPI_Improbe +
 * MPI_Imrecv + MPI_Wait; messages are small (eager) and large (rendezvous).
 * Each thread must get exactly its own messages, in order, and the calls that
 * complete one operation leave the status's MPI_ERROR field as it was (only
 * the multiple-completion calls set it). Last, every thread probes
 * MPI_PROC_NULL: MPI_MESSAGE_NO_PROC, then an empty status from MPI_Mrecv. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 4
#define ROUNDS 200
#define LARGE 20000 /* ints: 80 KB, beyond the eager limit */
#define UNTOUCHED 12345

static int rank, size;
static MPI_Comm own[THREADS];

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "rank %d: FAILED ", rank); \
    fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); MPI_Abort(MPI_COMM_WORLD, 6); } } while (0)

static int value(int t, int i, int j) { return t * 1000000 + i * 1000 + j % 1000; }

/* Receives the next message of (peer, tag) on c with a matched probe. */
static void probe_and_receive(int t, int i, int peer, int tag, MPI_Comm c, int *buf, int n) {
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status st;
    st.MPI_ERROR = UNTOUCHED;
    if (i % 2 == 0) {
        MPI_Mprobe(peer, tag, c, &msg, &st);
    } else {
        int flag = 0;
        while (!flag) MPI_Improbe(peer, tag, c, &flag, &msg, &st);
    }
    CHECK(msg != MPI_MESSAGE_NULL, "thread %d round %d: no message", t, i);
    CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == tag, "thread %d round %d: probed (%d, %d)", t, i,
          st.MPI_SOURCE, st.MPI_TAG);
    CHECK(st.MPI_ERROR == UNTOUCHED, "thread %d round %d: probe set MPI_ERROR to %d", t, i,
          st.MPI_ERROR);
    int count = -1;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == n, "thread %d round %d: probed %d ints, sent %d", t, i, count, n);
    MPI_Status rst;
    rst.MPI_ERROR = UNTOUCHED;
    if (i % 4 < 2) {
        MPI_Mrecv(buf, n, MPI_INT, &msg, &rst);
    } else {
        MPI_Request r;
        MPI_Imrecv(buf, n, MPI_INT, &msg, &r);
        MPI_Wait(&r, &rst);
    }
    CHECK(msg == MPI_MESSAGE_NULL, "thread %d round %d: message handle left", t, i);
    CHECK(rst.MPI_SOURCE == peer && rst.MPI_TAG == tag, "thread %d round %d: received (%d, %d)", t,
          i, rst.MPI_SOURCE, rst.MPI_TAG);
    CHECK(rst.MPI_ERROR == UNTOUCHED, "thread %d round %d: receive set MPI_ERROR to %d", t, i,
          rst.MPI_ERROR);
    for (int j = 0; j < n; j++)
        CHECK(buf[j] == value(t, i, j), "thread %d round %d: [%d] = %d, not %d", t, i, j, buf[j],
              value(t, i, j));
}

static void exchange(int t, MPI_Comm c, int tag, int *buf) {
    int peer = rank % 2 == 0 ? rank + 1 : rank - 1;
    if (peer >= size) return;
    for (int i = 0; i < ROUNDS; i++) {
        int n = i % 8 == 7 ? LARGE : 1 + i % 5;
        if (rank % 2 == 0) {
            for (int j = 0; j < n; j++) buf[j] = value(t, i, j);
            if (i % 3 == 0) {
                MPI_Request r;
                MPI_Isend(buf, n, MPI_INT, peer, tag, c, &r);
                MPI_Wait(&r, MPI_STATUS_IGNORE);
            } else {
                MPI_Send(buf, n, MPI_INT, peer, tag, c);
            }
        } else {
            for (int j = 0; j < n; j++) buf[j] = -1;
            probe_and_receive(t, i, peer, tag, c, buf, n);
        }
    }
}

static void *worker(void *arg) {
    int t = (int)(long)arg;
    int *buf = malloc(LARGE * sizeof(int));
    exchange(t, MPI_COMM_WORLD, t, buf);
    exchange(t, own[t], 0, buf);
    /* MPI_PROC_NULL */
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status st;
    int flag = 0;
    MPI_Improbe(MPI_PROC_NULL, t, MPI_COMM_WORLD, &flag, &msg, &st);
    CHECK(flag && msg == MPI_MESSAGE_NO_PROC && st.MPI_SOURCE == MPI_PROC_NULL &&
              st.MPI_TAG == MPI_ANY_TAG,
          "thread %d: improbe of MPI_PROC_NULL", t);
    st.MPI_ERROR = UNTOUCHED;
    MPI_Mrecv(buf, 1, MPI_INT, &msg, &st);
    CHECK(msg == MPI_MESSAGE_NULL && st.MPI_SOURCE == MPI_PROC_NULL &&
              st.MPI_TAG == MPI_ANY_TAG && st.MPI_ERROR == UNTOUCHED,
          "thread %d: mrecv of MPI_MESSAGE_NO_PROC (error field %d)", t, st.MPI_ERROR);
    free(buf);
    return NULL;
}

int main(int argc, char **argv) {
    int provided = -1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    for (int t = 0; t < THREADS; t++) MPI_Comm_dup(MPI_COMM_WORLD, &own[t]);
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++) pthread_create(&th[t], NULL, worker, (void *)(long)t);
    for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    for (int t = 0; t < THREADS; t++) MPI_Comm_free(&own[t]);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("threads mprobe ok\n");
    MPI_Finalize();
    return 0;
}
