/* Info objects, handle conversions, error handlers and invalid handles. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define CHECK(cond, what) do { if (!(cond)) { fprintf(stderr, "rank %d: FAILED %s\n", rank, what); MPI_Abort(MPI_COMM_WORLD, 8); } } while (0)

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, cls, rc, flag;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_nodes", "4");
    char v[MPI_MAX_INFO_VAL + 1];
    MPI_Info_get(info, "cb_nodes", MPI_MAX_INFO_VAL, v, &flag);
    CHECK(flag && strcmp(v, "4") == 0, "info get");
    MPI_Info_get(info, "missing", MPI_MAX_INFO_VAL, v, &flag);
    CHECK(!flag, "info missing");
    int nk;
    MPI_Info_get_nkeys(info, &nk);
    CHECK(nk == 1, "info nkeys");
    MPI_Info_free(&info);
    CHECK(info == MPI_INFO_NULL, "info free");

    CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_WORLD)) == MPI_COMM_WORLD, "c2f");
    CHECK(MPI_Type_f2c(MPI_Type_c2f(MPI_DOUBLE)) == MPI_DOUBLE, "type c2f");

    MPI_Errhandler eh;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "default handler");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER); /* returns under ERRORS_RETURN */

    int x = 0;
    rc = MPI_Barrier((MPI_Comm)0x12345);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COMM, "invalid comm");
    rc = MPI_Allreduce(&x, &x, 1, MPI_INT, (MPI_Op)0x777, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OP, "invalid op");
    rc = MPI_Allreduce(&x, &x, 1, MPI_DOUBLE_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OP, "op on wrong type");
    MPI_Request bad = (MPI_Request)0x2c0000ff;
    rc = MPI_Wait(&bad, MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_REQUEST, "invalid request");
    MPI_Datatype vec;
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    int pair[4];
    rc = MPI_Send(pair, 1, vec, rank, 0, MPI_COMM_WORLD); /* not committed */
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TYPE, "uncommitted type");
    MPI_Type_free(&vec);
    rc = MPI_Recv(&x, 1, MPI_INT, size + 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "recv bad rank");
    rc = MPI_Send(&x, 1, MPI_INT, 0, -3, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TAG, "bad tag");
    /* truncation */
    int two[2] = {1, 2}, one;
    MPI_Request r;
    MPI_Irecv(&one, 1, MPI_INT, rank, 5, MPI_COMM_WORLD, &r);
    MPI_Send(two, 2, MPI_INT, rank, 5, MPI_COMM_WORLD);
    rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE, "truncate");
    if (rank == 0) printf("misc ok\n");
    MPI_Finalize();
    return 0;
}
