/* The tool information interface of a library with no variables, error
 * classes and codes taken back (MPICH's MPIX_Delete_error_*), and the
 * message handle conversions under their profiling names. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int rank;
#define CHECK(cond, what) do { if (!(cond)) { fprintf(stderr, "rank %d: FAILED %s (line %d)\n", rank, what, __LINE__); MPI_Abort(MPI_COMM_WORLD, 8); } } while (0)

static int class_of(int code) {
    int c;
    MPI_Error_class(code, &c);
    return c;
}

int main(int argc, char **argv) {
    int provided, n, rc;
    /* MPI_T may start before MPI_Init. */
    rc = MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided);
    CHECK(rc == MPI_SUCCESS && provided == MPI_THREAD_MULTIPLE, "MPI_T_init_thread");
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    MPI_T_cvar_get_num(&n);
    CHECK(n == 0, "no control variables");
    MPI_T_pvar_get_num(&n);
    CHECK(n == 0, "no performance variables");
    MPI_T_category_get_num(&n);
    CHECK(n == 0, "no categories");
    char name[64], desc[64];
    int nl = 64, dl = 64, verb, cls, bind, ro, cont, atom, idx;
    MPI_Datatype dt;
    MPI_T_enum en;
    rc = MPI_T_pvar_get_info(0, name, &nl, &verb, &cls, &dt, &en, desc, &dl, &bind, &ro, &cont, &atom);
    CHECK(rc == MPI_T_ERR_INVALID_INDEX, "pvar 0 does not exist");
    rc = MPI_T_cvar_get_index("MPIR_CVAR_NONE", &idx);
    CHECK(rc == MPI_T_ERR_INVALID_NAME, "no cvar by that name");
    MPI_T_pvar_session session;
    CHECK(MPI_T_pvar_session_create(&session) == MPI_SUCCESS, "session create");
    CHECK(MPI_T_pvar_session_free(&session) == MPI_SUCCESS && session == MPI_T_PVAR_SESSION_NULL, "session free");
    CHECK(MPI_T_PVAR_CLASS_STATE == 240 && MPI_T_PVAR_CLASS_GENERIC == 249, "MPICH's class values");
    CHECK(MPI_T_finalize() == MPI_SUCCESS, "MPI_T_finalize");
    CHECK(MPI_T_cvar_get_num(&n) == MPI_T_ERR_NOT_INITIALIZED, "after MPI_T_finalize");
    CHECK(MPI_T_finalize() == MPI_T_ERR_NOT_INITIALIZED, "finalized once too often");
    if (rank == 0)
        printf("tool interface ok\n");

    /* Added classes, codes and strings, taken back and added again. */
    int klass, code, again, last, *lastp, flag, len;
    char text[MPI_MAX_ERROR_STRING];
    for (int k = 0; k < 1000; k++) {
        MPI_Add_error_class(&klass);
        MPI_Add_error_code(klass, &code);
        MPI_Add_error_string(code, "added");
        CHECK(MPIX_Delete_error_string(code) == MPI_SUCCESS, "delete string");
        MPI_Error_string(code, text, &len);
        CHECK(len == 0, "string deleted");
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        rc = MPIX_Delete_error_class(klass);
        CHECK(class_of(rc) == MPI_ERR_ARG, "a class with codes stays");
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        CHECK(MPIX_Delete_error_code(code) == MPI_SUCCESS, "delete code");
        CHECK(MPIX_Delete_error_class(klass) == MPI_SUCCESS, "delete class");
    }
    MPI_Add_error_class(&again);
    CHECK(again == klass, "a deleted class's value is used again");
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &lastp, &flag);
    last = *lastp;
    CHECK(flag && last == again, "MPI_LASTUSEDCODE");
    if (rank == 0)
        printf("error classes deleted ok\n");

    MPI_Message m = MPI_MESSAGE_NO_PROC;
    CHECK(PMPI_Message_f2c(PMPI_Message_c2f(m)) == m && MPI_Message_f2c(MPI_Message_c2f(m)) == m, "message c2f");

    /* Calls completing one request leave a status's MPI_ERROR alone. */
    int out[2] = {3, 4}, in[2];
    MPI_Request req;
    MPI_Status s1, s2;
    MPI_Isend(out, 2, MPI_INT, 0, 5, MPI_COMM_SELF, &req);
    s1.MPI_ERROR = MPI_ERR_DIMS;
    s2.MPI_ERROR = MPI_ERR_TOPOLOGY;
    MPI_Mprobe(0, 5, MPI_COMM_SELF, &m, &s1);
    MPI_Mrecv(in, 2, MPI_INT, &m, &s2);
    CHECK(s1.MPI_ERROR == MPI_ERR_DIMS && s1.MPI_TAG == 5, "mprobe status");
    CHECK(s2.MPI_ERROR == MPI_ERR_TOPOLOGY && in[1] == 4 && m == MPI_MESSAGE_NULL, "mrecv status");
    s1.MPI_ERROR = MPI_ERR_DIMS;
    MPI_Wait(&req, &s1);
    CHECK(s1.MPI_ERROR == MPI_ERR_DIMS, "wait status");
    /* The empty status of a null request is all set, MPI_ERROR too. */
    s1.MPI_ERROR = MPI_ERR_DIMS;
    req = MPI_REQUEST_NULL;
    MPI_Request_get_status(req, &flag, &s1);
    CHECK(flag && s1.MPI_ERROR == MPI_SUCCESS && s1.MPI_TAG == MPI_ANY_TAG, "empty status");
    if (rank == 0)
        printf("message conversions and status error fields ok\n");
    MPI_Finalize();
    return 0;
}
