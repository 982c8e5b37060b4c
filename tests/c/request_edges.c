/* Requests at their edges: the status of a null or inactive persistent request
 * is MPI's empty status (MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, count 0)
 * from Wait, Test, Waitany, Testany and Request_get_status; a synchronous send freed by MPI_Request_free
 * before any receive still reaches the receive its own rank posts later. */
#include <mpi.h>
#include <stdio.h>

static int rank;
#define CHECK(cond, what) do { if (!(cond)) { fprintf(stderr, "rank %d: FAILED %s\n", rank, what); \
    MPI_Abort(MPI_COMM_WORLD, 6); } } while (0)

static int empty(MPI_Status *s) {
    int n = -1;
    MPI_Get_count(s, MPI_INT, &n);
    return s->MPI_SOURCE == MPI_ANY_SOURCE && s->MPI_TAG == MPI_ANY_TAG &&
           s->MPI_ERROR == MPI_SUCCESS && n == 0;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int size, buf[4] = {0}, flag, idx;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Request r;
    MPI_Status s;
    MPI_Recv_init(buf, 4, MPI_INT, (rank + 1) % size, 3, MPI_COMM_WORLD, &r);
    s.MPI_SOURCE = s.MPI_TAG = s.MPI_ERROR = 10;
    MPI_Test(&r, &flag, &s);
    CHECK(flag && empty(&s), "Test of an inactive receive");
    s.MPI_SOURCE = s.MPI_TAG = s.MPI_ERROR = 10;
    MPI_Wait(&r, &s);
    CHECK(empty(&s), "Wait of an inactive receive");
    MPI_Request_free(&r);
    MPI_Send_init(buf, 4, MPI_INT, (rank + 1) % size, 3, MPI_COMM_WORLD, &r);
    s.MPI_SOURCE = s.MPI_TAG = s.MPI_ERROR = 10;
    MPI_Wait(&r, &s);
    CHECK(empty(&s), "Wait of an inactive send");
    s.MPI_SOURCE = s.MPI_TAG = s.MPI_ERROR = 10;
    MPI_Waitany(1, &r, &idx, &s);
    CHECK(idx == MPI_UNDEFINED && empty(&s), "Waitany of inactive requests");
    s.MPI_SOURCE = s.MPI_TAG = s.MPI_ERROR = 10;
    MPI_Testany(1, &r, &idx, &flag, &s);
    CHECK(flag && idx == MPI_UNDEFINED && empty(&s), "Testany of inactive requests");
    MPI_Request_free(&r);
    r = MPI_REQUEST_NULL;
    s.MPI_SOURCE = s.MPI_TAG = s.MPI_ERROR = 10;
    MPI_Wait(&r, &s);
    CHECK(empty(&s), "Wait of MPI_REQUEST_NULL");
    s.MPI_SOURCE = s.MPI_TAG = s.MPI_ERROR = 10;
    MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &s);
    CHECK(flag && empty(&s), "Request_get_status of MPI_REQUEST_NULL");
    if (rank == 0) printf("inactive request status ok\n");

    /* freed before its receive exists: must not wait for it */
    int out = 40 + rank, in = -1;
    MPI_Issend(&out, 1, MPI_INT, 0, 123, MPI_COMM_SELF, &r);
    MPI_Request_free(&r);
    CHECK(r == MPI_REQUEST_NULL, "Request_free leaves the handle");
    MPI_Recv(&in, 1, MPI_INT, 0, 123, MPI_COMM_SELF, &s);
    CHECK(in == 40 + rank, "the freed synchronous send arrived");
    /* and one that is never matched before Finalize is an error of the program,
     * so the last one here is matched too, across ranks */
    MPI_Issend(&out, 1, MPI_INT, (rank + 1) % size, 124, MPI_COMM_WORLD, &r);
    MPI_Request_free(&r);
    MPI_Recv(&in, 1, MPI_INT, (rank + size - 1) % size, 124, MPI_COMM_WORLD, &s);
    CHECK(in == 40 + (rank + size - 1) % size, "freed send across ranks");
    if (rank == 0) printf("freed synchronous send ok\n");
    MPI_Finalize();
    return 0;
}
