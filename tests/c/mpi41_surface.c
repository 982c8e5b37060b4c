/* The MPI-4.0 large-count (_c) calls and the MPI-4.1 additions mpi4py
 * reaches: counts that fit an int, counts beyond it carried by a datatype
 * (of zero bytes: nothing large is allocated) or refused with
 * MPI_ERR_COUNT, handles as ints, status fields, MPI_Request_get_status_*,
 * MPI_Type_get_value_index, MPI_Remove_error_*, session error handlers,
 * communicator buffers, persistent neighbourhood collectives, and the
 * calls not built yet failing with MPI_ERR_UNSUPPORTED_OPERATION. */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

#define CHECK(cond, what) do { if (!(cond)) { fprintf(stderr, "rank %d: FAILED %s (line %d)\n", rank, what, __LINE__); MPI_Abort(MPI_COMM_WORLD, 7); } } while (0)
#define OK(call) CHECK((call) == MPI_SUCCESS, #call)

static int class_of(int code) {
    int c = -1;
    MPI_Error_class(code, &c);
    return c;
}

static void done(const char *what) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("%s ok\n", what);
    fflush(stdout);
}

static void sum_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt) {
    (void)dt;
    for (MPI_Count i = 0; i < *len; i++) ((int *)inout)[i] += ((int *)in)[i];
}

static void small_counts(void) {
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int v[4], w[4];
    for (int i = 0; i < 4; i++) v[i] = rank * 10 + i;
    MPI_Request r[2];
    MPI_Status st;
    OK(MPI_Irecv_c(w, 4, MPI_INT, left, 1, MPI_COMM_WORLD, &r[0]));
    OK(MPI_Isend_c(v, 4, MPI_INT, right, 1, MPI_COMM_WORLD, &r[1]));
    OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    CHECK(w[3] == left * 10 + 3, "Isend_c/Irecv_c data");
    OK(MPI_Sendrecv_c(v, 4, MPI_INT, right, 2, w, 4, MPI_INT, left, 2, MPI_COMM_WORLD, &st));
    MPI_Count n = -1;
    OK(MPI_Get_count_c(&st, MPI_INT, &n));
    CHECK(n == 4 && w[0] == left * 10, "Sendrecv_c count and data");

    int x = rank + 1, sum = 0, expect = size * (size + 1) / 2;
    OK(MPI_Allreduce_c(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == expect, "Allreduce_c");
    MPI_Op op;
    OK(MPI_Op_create_c(sum_c, 1, &op));
    int xs[3] = {x, 2 * x, 3 * x}, sums[3];
    OK(MPI_Allreduce_c(xs, sums, 3, MPI_INT, op, MPI_COMM_WORLD));
    CHECK(sums[0] == expect && sums[2] == 3 * expect, "Allreduce_c with an MPI_Op_create_c op");
    int local[3] = {1, 1, 1};
    OK(MPI_Reduce_local_c(xs, local, 3, MPI_INT, op));
    CHECK(local[1] == 2 * x + 1, "Reduce_local_c");

    MPI_Request pr;
    OK(MPI_Allreduce_init_c(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &pr));
    for (int k = 0; k < 2; k++) {
        sum = 0;
        OK(MPI_Start(&pr));
        OK(MPI_Wait(&pr, MPI_STATUS_IGNORE));
        CHECK(sum == expect, "Allreduce_init_c started again");
    }
    OK(MPI_Request_free(&pr));
    OK(MPI_Iallreduce_c(xs, sums, 3, MPI_INT, op, MPI_COMM_WORLD, &pr));
    OK(MPI_Wait(&pr, MPI_STATUS_IGNORE));
    CHECK(sums[1] == 2 * expect, "Iallreduce_c");
    OK(MPI_Op_free(&op));

    int b = rank == 0 ? 42 : 0;
    OK(MPI_Bcast_c(&b, 1, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK(b == 42, "Bcast_c");
    int *all = malloc(sizeof(int) * size), *back = malloc(sizeof(int) * size);
    OK(MPI_Allgather_c(&x, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD));
    CHECK(all[size - 1] == size, "Allgather_c");
    OK(MPI_Alltoall_c(all, 1, MPI_INT, back, 1, MPI_INT, MPI_COMM_WORLD));
    CHECK(back[0] == rank + 1 && back[size - 1] == rank + 1, "Alltoall_c");
    MPI_Count *counts = malloc(sizeof(MPI_Count) * size);
    MPI_Aint *displs = malloc(sizeof(MPI_Aint) * size);
    for (int i = 0; i < size; i++) counts[i] = 1, displs[i] = size - 1 - i;
    OK(MPI_Allgatherv_c(&x, 1, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD));
    CHECK(all[0] == size && all[size - 1] == 1, "Allgatherv_c with MPI_Aint displacements");
    for (int i = 0; i < size; i++) all[i] = -1;
    OK(MPI_Gatherv_c(&x, 1, MPI_INT, all, counts, displs, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK(rank != 0 || all[0] == size, "Gatherv_c");
    int block = 0;
    for (int i = 0; i < size; i++) all[i] = i;
    OK(MPI_Reduce_scatter_block_c(all, &block, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(block == rank * size, "Reduce_scatter_block_c");

    MPI_Datatype vec, st2;
    OK(MPI_Type_vector_c(2, 1, 2, MPI_INT, &vec));
    MPI_Count blens[2] = {1, 1}, disps[2] = {0, 8};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
    OK(MPI_Type_create_struct_c(2, blens, disps, types, &st2));
    MPI_Count ni, na, nl, nd;
    int comb;
    OK(MPI_Type_get_envelope_c(vec, &ni, &na, &nl, &nd, &comb));
    CHECK(comb == MPI_COMBINER_VECTOR && ni == 3 && na == 0 && nl == 0 && nd == 1, "Type_get_envelope_c");
    MPI_Count sz = 0;
    OK(MPI_Type_size_c(st2, &sz));
    CHECK(sz == 12, "Type_create_struct_c size");
    OK(MPI_Type_free(&vec));
    OK(MPI_Type_free(&st2));

    char packed[64];
    MPI_Count pos = 0, psize = 0;
    OK(MPI_Pack_size_c(4, MPI_INT, MPI_COMM_WORLD, &psize));
    CHECK(psize >= 16, "Pack_size_c");
    OK(MPI_Pack_c(v, 4, MPI_INT, packed, sizeof packed, &pos, MPI_COMM_WORLD));
    CHECK(pos == 16, "Pack_c position");
    memset(w, 0, sizeof w);
    pos = 0;
    OK(MPI_Unpack_c(packed, sizeof packed, &pos, w, 4, MPI_INT, MPI_COMM_WORLD));
    CHECK(pos == 16 && w[2] == v[2], "Unpack_c");
    free(all), free(back), free(counts), free(displs);
    done("small counts");
}

static void beyond_int(void) {
    MPI_Count big = (MPI_Count)INT_MAX + 10;
    /* Elements of zero bytes: a count beyond int carried by a type made for
     * the call, with nothing to allocate. */
    MPI_Datatype empty;
    OK(MPI_Type_contiguous(0, MPI_INT, &empty));
    OK(MPI_Type_commit(&empty));
    int token = 0;
    OK(MPI_Bcast_c(&token, big, empty, 0, MPI_COMM_WORLD));
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Status st;
    OK(MPI_Sendrecv_c(&token, big, empty, right, 3, &token, big, empty, left, 3, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_SOURCE == left, "Sendrecv_c beyond int");
    MPI_Request r;
    OK(MPI_Ibcast_c(&token, big, empty, 0, MPI_COMM_WORLD, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    OK(MPI_Allreduce_c(MPI_IN_PLACE, &token, big, empty, MPI_SUM, MPI_COMM_WORLD));

    /* Where no type can carry the count: MPI_ERR_COUNT, nothing truncated. */
    MPI_Count *counts = malloc(sizeof(MPI_Count) * size);
    MPI_Aint *displs = malloc(sizeof(MPI_Aint) * size);
    for (int i = 0; i < size; i++) counts[i] = 1, displs[i] = i;
    counts[size - 1] = big;
    int x = rank, *all = malloc(sizeof(int) * size);
    CHECK(class_of(MPI_Allgatherv_c(&x, 1, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD)) == MPI_ERR_COUNT,
          "Allgatherv_c with a count beyond int");
    counts[size - 1] = 1;
    displs[0] = (MPI_Aint)INT_MAX + 1;
    CHECK(class_of(MPI_Allgatherv_c(&x, 1, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD)) == MPI_ERR_COUNT,
          "Allgatherv_c with a displacement beyond int");
    MPI_Op op;
    OK(MPI_Op_create_c(sum_c, 1, &op));
    CHECK(class_of(MPI_Allreduce_c(MPI_IN_PLACE, all, big, MPI_INT, op, MPI_COMM_WORLD)) == MPI_ERR_COUNT,
          "Allreduce_c beyond int under a user op");
    OK(MPI_Op_free(&op));
    MPI_Datatype t;
    CHECK(class_of(MPI_Type_vector_c(big, 1, 1, MPI_INT, &t)) == MPI_ERR_COUNT, "Type_vector_c count beyond int");
    char packed[16];
    MPI_Count pos = 0;
    CHECK(class_of(MPI_Pack_c(&x, 1, MPI_INT, packed, big, &pos, MPI_COMM_WORLD)) == MPI_ERR_COUNT,
          "Pack_c outsize beyond int");
    CHECK(class_of(MPI_Send_c(&x, -1, MPI_INT, right, 4, MPI_COMM_WORLD)) == MPI_ERR_COUNT, "Send_c negative count");
    OK(MPI_Type_free(&empty));
    free(counts), free(displs), free(all);
    done("beyond int");
}

static void handles_as_ints(void) {
    MPI_Comm dup;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK(MPI_Comm_toint(MPI_COMM_WORLD) == (int)MPI_COMM_WORLD, "Comm_toint is the handle");
    CHECK(MPI_Comm_fromint(MPI_Comm_toint(dup)) == dup, "Comm round trip");
    MPI_Datatype t;
    OK(MPI_Type_contiguous(2, MPI_INT, &t));
    CHECK(MPI_Type_fromint(MPI_Type_toint(t)) == t && MPI_Type_toint(MPI_INT) == (int)MPI_INT, "Type round trip");
    MPI_Group g;
    OK(MPI_Comm_group(dup, &g));
    CHECK(MPI_Group_fromint(MPI_Group_toint(g)) == g, "Group round trip");
    MPI_Info info;
    OK(MPI_Info_create(&info));
    CHECK(MPI_Info_fromint(MPI_Info_toint(info)) == info, "Info round trip");
    CHECK(MPI_Op_fromint(MPI_Op_toint(MPI_SUM)) == MPI_SUM, "Op round trip");
    CHECK(MPI_Errhandler_fromint(MPI_Errhandler_toint(MPI_ERRORS_RETURN)) == MPI_ERRORS_RETURN, "Errhandler round trip");
    CHECK(MPI_Request_fromint(MPI_Request_toint(MPI_REQUEST_NULL)) == MPI_REQUEST_NULL, "Request round trip");
    CHECK(MPI_Message_fromint(MPI_Message_toint(MPI_MESSAGE_NO_PROC)) == MPI_MESSAGE_NO_PROC, "Message round trip");
    CHECK(MPI_Win_fromint(MPI_Win_toint(MPI_WIN_NULL)) == MPI_WIN_NULL, "Win round trip");
    CHECK(MPI_Session_fromint(MPI_Session_toint(MPI_SESSION_NULL)) == MPI_SESSION_NULL, "Session round trip");
    CHECK(MPI_File_fromint(MPI_File_toint(MPI_FILE_NULL)) == MPI_FILE_NULL, "File round trip");
    CHECK(MPI_File_toint(MPI_FILE_NULL) == MPI_File_c2f(MPI_FILE_NULL), "File_toint is File_c2f");
    OK(MPI_Info_free(&info));
    OK(MPI_Group_free(&g));
    OK(MPI_Type_free(&t));
    OK(MPI_Comm_free(&dup));
    done("handles as ints");
}

static void status_fields(void) {
    MPI_Status st;
    memset(&st, 0, sizeof st);
    int v = -1;
    OK(MPI_Status_set_source(&st, 3));
    OK(MPI_Status_set_tag(&st, 77));
    OK(MPI_Status_set_error(&st, MPI_ERR_TAG));
    OK(MPI_Status_get_source(&st, &v));
    CHECK(v == 3 && st.MPI_SOURCE == 3, "Status_get_source");
    OK(MPI_Status_get_tag(&st, &v));
    CHECK(v == 77 && st.MPI_TAG == 77, "Status_get_tag");
    OK(MPI_Status_get_error(&st, &v));
    CHECK(v == MPI_ERR_TAG, "Status_get_error");
    OK(MPI_Status_set_elements_c(&st, MPI_INT, 5));
    MPI_Count n = 0;
    OK(MPI_Get_elements_c(&st, MPI_INT, &n));
    CHECK(n == 5, "Status_set_elements_c");
    CHECK(MPI_Status_get_tag(MPI_STATUS_IGNORE, &v) == MPI_ERR_ARG, "Status_get_tag of MPI_STATUS_IGNORE");
    done("status fields");
}

static void request_status(void) {
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Request r[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int flag = -1, idx = -1, out = -1, indices[3];
    MPI_Status st[3];
    OK(MPI_Request_get_status_all(3, r, &flag, st));
    CHECK(flag == 1, "get_status_all of null requests");
    OK(MPI_Request_get_status_any(3, r, &idx, &flag, &st[0]));
    CHECK(flag == 1 && idx == MPI_UNDEFINED, "get_status_any of null requests");
    OK(MPI_Request_get_status_some(3, r, &out, indices, st));
    CHECK(out == MPI_UNDEFINED, "get_status_some of null requests");

    int in = -1, token = rank;
    OK(MPI_Irecv(&in, 1, MPI_INT, left, 9, MPI_COMM_WORLD, &r[1]));
    /* Nothing is sent before everyone has looked. */
    OK(MPI_Request_get_status_all(3, r, &flag, st));
    CHECK(flag == 0, "get_status_all before the send");
    OK(MPI_Request_get_status_any(3, r, &idx, &flag, &st[0]));
    CHECK(flag == 0 && idx == MPI_UNDEFINED, "get_status_any before the send");
    OK(MPI_Request_get_status_some(3, r, &out, indices, st));
    CHECK(out == 0, "get_status_some before the send");
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_Send(&token, 1, MPI_INT, right, 9, MPI_COMM_WORLD));
    do {
        OK(MPI_Request_get_status_any(3, r, &idx, &flag, &st[0]));
    } while (!flag);
    CHECK(idx == 1 && st[0].MPI_SOURCE == left && st[0].MPI_TAG == 9, "get_status_any after the send");
    CHECK(r[1] != MPI_REQUEST_NULL, "the request is left as it was");
    OK(MPI_Request_get_status_all(3, r, &flag, st));
    CHECK(flag == 1 && st[1].MPI_SOURCE == left, "get_status_all after the send");
    OK(MPI_Request_get_status_some(3, r, &out, indices, st));
    CHECK(out == 1 && indices[0] == 1 && st[0].MPI_TAG == 9, "get_status_some after the send");
    OK(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
    CHECK(in == left && r[1] == MPI_REQUEST_NULL, "the receive completes by MPI_Wait");
    done("request status");
}

static void value_index_and_errors(void) {
    MPI_Datatype p;
    OK(MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &p));
    CHECK(p == MPI_DOUBLE_INT, "double/int pair");
    OK(MPI_Type_get_value_index(MPI_INT, MPI_INT, &p));
    CHECK(p == MPI_2INT, "int/int pair");
    OK(MPI_Type_get_value_index(MPI_CHAR, MPI_INT, &p));
    CHECK(p == MPI_DATATYPE_NULL, "no predefined char/int pair");
    struct { double v; int i; } in = {rank, rank}, out;
    OK(MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &p));
    OK(MPI_Allreduce(&in, &out, 1, p, MPI_MAXLOC, MPI_COMM_WORLD));
    CHECK(out.i == size - 1, "MAXLOC on the pair type");

    int cls, code;
    OK(MPI_Add_error_class(&cls));
    OK(MPI_Add_error_code(cls, &code));
    OK(MPI_Add_error_string(code, "a code of the test"));
    CHECK(class_of(MPI_Remove_error_class(cls)) == MPI_ERR_ARG, "a class with a code stays");
    OK(MPI_Remove_error_string(code));
    OK(MPI_Remove_error_code(code));
    OK(MPI_Remove_error_class(cls));
    CHECK(class_of(MPI_Remove_error_code(code)) == MPI_ERR_ARG, "a removed code is gone");
    done("value index and error removal");
}

static int called_code = 0;
static MPI_Session called_on = MPI_SESSION_NULL;

static void on_session_error(MPI_Session *s, int *code, ...) {
    called_on = *s;
    called_code = *code;
}

static void session_errhandlers(void) {
    MPI_Session s;
    OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    MPI_Errhandler eh, mine;
    OK(MPI_Session_get_errhandler(s, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "the handler given to Session_init");
    OK(MPI_Session_call_errhandler(s, MPI_ERR_OTHER));
    OK(MPI_Session_create_errhandler(on_session_error, &mine));
    OK(MPI_Session_set_errhandler(s, mine));
    OK(MPI_Session_get_errhandler(s, &eh));
    CHECK(eh == mine, "the handler set");
    OK(MPI_Session_call_errhandler(s, MPI_ERR_TAG));
    CHECK(called_code == MPI_ERR_TAG && called_on == s, "the user handler called with the session and code");
    int len = 0;
    called_code = 0;
    CHECK(class_of(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 99, &len, NULL)) == MPI_ERR_ARG, "no 100th process set");
    CHECK(called_code == MPI_ERR_ARG, "a session's error goes to its user handler");
    CHECK(MPI_Session_f2c(MPI_Session_c2f(s)) == s, "Session_c2f/f2c");
    OK(MPI_Errhandler_free(&mine));
    OK(MPI_Session_finalize(&s));
    done("session error handlers");
}

static void comm_buffers(void) {
    MPI_Comm dup;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    int bsize = 4 * (MPI_BSEND_OVERHEAD + (int)sizeof(int));
    char *buf = malloc(bsize);
    OK(MPI_Comm_attach_buffer(dup, buf, bsize));
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int v = rank, in = -1;
    OK(MPI_Bsend(&v, 1, MPI_INT, right, 5, dup));
    OK(MPI_Recv(&in, 1, MPI_INT, left, 5, dup, MPI_STATUS_IGNORE));
    OK(MPI_Comm_flush_buffer(dup));
    CHECK(in == left, "Bsend from the communicator's buffer");
    /* The process has no buffer: only the communicator's was attached. */
    CHECK(class_of(MPI_Bsend(&v, 1, MPI_INT, right, 6, MPI_COMM_WORLD)) == MPI_ERR_BUFFER,
          "MPI_COMM_WORLD has no buffer");
    MPI_Request r;
    OK(MPI_Bsend(&v, 1, MPI_INT, right, 7, dup));
    OK(MPI_Comm_iflush_buffer(dup, &r));
    OK(MPI_Recv(&in, 1, MPI_INT, left, 7, dup, MPI_STATUS_IGNORE));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    OK(MPI_Buffer_flush());
    OK(MPI_Buffer_iflush(&r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    void *back = NULL;
    int back_size = 0;
    OK(MPI_Comm_detach_buffer(dup, &back, &back_size));
    CHECK(back == buf && back_size == bsize, "Comm_detach_buffer gives the buffer back");
    CHECK(class_of(MPI_Comm_detach_buffer(dup, &back, &back_size)) == MPI_ERR_BUFFER, "nothing left to detach");
    MPI_Count big = 0;
    OK(MPI_Comm_attach_buffer_c(dup, buf, (MPI_Count)bsize));
    OK(MPI_Comm_detach_buffer_c(dup, &back, &big));
    CHECK(back == buf && big == bsize, "Comm_attach_buffer_c/detach_buffer_c");
    /* The process's buffer keeps a size beyond int whole. */
    MPI_Count huge = (MPI_Count)INT_MAX + 100;
    OK(MPI_Buffer_attach_c(buf, huge));
    CHECK(class_of(MPI_Buffer_detach(&back, &back_size)) == MPI_ERR_COUNT, "Buffer_detach cannot say the size");
    OK(MPI_Buffer_detach_c(&back, &big));
    CHECK(back == buf && big == huge, "Buffer_detach_c gives the whole size back");
    free(buf);
    OK(MPI_Comm_free(&dup));
    done("communicator buffers");
}

static void persistent_neighbours(void) {
    int dims[1] = {size}, periods[1] = {1};
    MPI_Comm ring;
    OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    int v = 0, got[2] = {-1, -1}, sends[2], back[2];
    MPI_Request r[2];
    OK(MPI_Neighbor_allgather_init(&v, 1, MPI_INT, got, 1, MPI_INT, ring, MPI_INFO_NULL, &r[0]));
    OK(MPI_Neighbor_alltoall_init(sends, 1, MPI_INT, back, 1, MPI_INT, ring, MPI_INFO_NULL, &r[1]));
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    for (int round = 1; round <= 3; round++) {
        v = rank * 100 + round;
        sends[0] = rank * 10 + 0, sends[1] = rank * 10 + 1 + round;
        OK(MPI_Startall(2, r));
        OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        CHECK(got[0] == left * 100 + round && got[1] == right * 100 + round, "Neighbor_allgather_init");
        CHECK(back[0] == left * 10 + 1 + round && back[1] == right * 10, "Neighbor_alltoall_init");
    }
    OK(MPI_Request_free(&r[0]));
    OK(MPI_Request_free(&r[1]));
    OK(MPI_Comm_free(&ring));
    done("persistent neighbourhood collectives");
}

static void not_built(void) {
    int major = 0, minor = 0;
    OK(MPI_Abi_get_version(&major, &minor));
    CHECK(major == -1 && minor == -1, "no standard ABI");
    MPI_Request r;
    int x = 0, flag;
    CHECK(class_of(MPI_Psend_init(&x, 1, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r)) == MPI_ERR_UNSUPPORTED_OPERATION, "Psend_init");
    CHECK(class_of(MPI_Pready(0, MPI_REQUEST_NULL)) == MPI_ERR_UNSUPPORTED_OPERATION, "Pready");
    CHECK(class_of(MPI_Parrived(MPI_REQUEST_NULL, 0, &flag)) == MPI_ERR_UNSUPPORTED_OPERATION, "Parrived");
    MPI_Info info;
    CHECK(class_of(MPI_Get_hw_resource_info(&info)) == MPI_ERR_UNSUPPORTED_OPERATION, "Get_hw_resource_info");
    CHECK(class_of(MPI_Abi_get_info(&info)) == MPI_ERR_UNSUPPORTED_OPERATION, "Abi_get_info");
    CHECK(class_of(MPI_Session_flush_buffer(MPI_SESSION_NULL)) == MPI_ERR_UNSUPPORTED_OPERATION, "Session_flush_buffer");
    done("unsupported calls");
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    small_counts();
    beyond_int();
    handles_as_ints();
    status_fields();
    request_status();
    value_index_and_errors();
    session_errhandlers();
    comm_buffers();
    persistent_neighbours();
    not_built();
    MPI_Finalize();
    return 0;
}
