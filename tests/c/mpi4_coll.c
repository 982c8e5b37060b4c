/* MPI-4 calls: persistent collectives (each started several times with new
 * data, handles freed after the init, inactive requests freed),
 * MPI_Isendrecv, MPI_Isendrecv_replace and MPI_Comm_idup_with_info. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, size;

#define CHECK(cond, what) do { if (!(cond)) { fprintf(stderr, "rank %d: FAILED %s (line %d)\n", rank, what, __LINE__); MPI_Abort(MPI_COMM_WORLD, 7); } } while (0)

static void plain_sum(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)dt;
    for (int i = 0; i < *len; i++) ((int *)inout)[i] += ((int *)in)[i];
}

static void start_wait(MPI_Request *r) {
    MPI_Start(r);
    MPI_Wait(r, MPI_STATUS_IGNORE);
    CHECK(*r != MPI_REQUEST_NULL, "a persistent request survives its completion");
}

static void persistent(void) {
    int n = size, sum_ranks = size * (size - 1) / 2;
    int *sb = malloc(sizeof(int) * n), *rb = malloc(sizeof(int) * n);
    int *counts = malloc(sizeof(int) * n), *displs = malloc(sizeof(int) * n);
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * n);
    int *bdispls = malloc(sizeof(int) * n);
    for (int i = 0; i < n; i++) counts[i] = 1, displs[i] = i, types[i] = MPI_INT, bdispls[i] = i * (int)sizeof(int);
    int x = 0, y = 0;
    MPI_Request r[17];
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Op op;
    MPI_Op_create(plain_sum, 1, &op);
    MPI_Datatype t;
    MPI_Type_contiguous(1, MPI_INT, &t);
    MPI_Type_commit(&t);

    MPI_Barrier_init(MPI_COMM_WORLD, info, &r[0]);
    MPI_Bcast_init(&x, 1, t, size - 1, MPI_COMM_WORLD, info, &r[1]);
    MPI_Reduce_init(&x, &y, 1, MPI_INT, op, 0, MPI_COMM_WORLD, info, &r[2]);
    MPI_Allreduce_init(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, info, &r[3]);
    MPI_Scan_init(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, info, &r[4]);
    MPI_Exscan_init(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, info, &r[5]);
    MPI_Reduce_scatter_block_init(sb, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, info, &r[6]);
    MPI_Reduce_scatter_init(sb, &y, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, info, &r[7]);
    MPI_Gather_init(&x, 1, MPI_INT, rb, 1, MPI_INT, 0, MPI_COMM_WORLD, info, &r[8]);
    MPI_Gatherv_init(&x, 1, MPI_INT, rb, counts, displs, MPI_INT, 0, MPI_COMM_WORLD, info, &r[9]);
    MPI_Scatter_init(sb, 1, MPI_INT, &y, 1, MPI_INT, 0, MPI_COMM_WORLD, info, &r[10]);
    MPI_Scatterv_init(sb, counts, displs, MPI_INT, &y, 1, MPI_INT, 0, MPI_COMM_WORLD, info, &r[11]);
    MPI_Allgather_init(&x, 1, MPI_INT, rb, 1, MPI_INT, MPI_COMM_WORLD, info, &r[12]);
    MPI_Allgatherv_init(&x, 1, MPI_INT, rb, counts, displs, MPI_INT, MPI_COMM_WORLD, info, &r[13]);
    MPI_Alltoall_init(sb, 1, MPI_INT, rb, 1, MPI_INT, MPI_COMM_WORLD, info, &r[14]);
    MPI_Alltoallv_init(sb, counts, displs, MPI_INT, rb, counts, displs, MPI_INT, MPI_COMM_WORLD, info, &r[15]);
    MPI_Alltoallw_init(sb, counts, bdispls, types, rb, counts, bdispls, types, MPI_COMM_WORLD, info, &r[16]);
    /* The handles the inits named may be freed now: the requests keep them. */
    MPI_Info_free(&info);
    MPI_Op_free(&op);
    MPI_Type_free(&t);

    for (int k = 0; k < 3; k++) {
        start_wait(&r[0]);
        x = rank == size - 1 ? 40 + k : -1;
        start_wait(&r[1]);
        CHECK(x == 40 + k, "bcast_init");
        x = rank + k, y = -1;
        start_wait(&r[2]);
        if (rank == 0) CHECK(y == sum_ranks + k * size, "reduce_init with a freed user op");
        y = -1;
        start_wait(&r[3]);
        CHECK(y == sum_ranks + k * size, "allreduce_init");
        start_wait(&r[4]);
        CHECK(y == rank * (rank + 1) / 2 + k * (rank + 1), "scan_init");
        y = -1;
        start_wait(&r[5]);
        if (rank > 0) CHECK(y == rank * (rank - 1) / 2 + k * rank, "exscan_init");
        for (int i = 0; i < n; i++) sb[i] = i + k;
        start_wait(&r[6]);
        CHECK(y == size * (rank + k), "reduce_scatter_block_init");
        y = -1;
        start_wait(&r[7]);
        CHECK(y == size * (rank + k), "reduce_scatter_init");
        for (int g = 8; g <= 9; g++) {
            for (int i = 0; i < n; i++) rb[i] = -1;
            start_wait(&r[g]);
            if (rank == 0) for (int i = 0; i < n; i++) CHECK(rb[i] == i + k, "gather(v)_init");
        }
        for (int i = 0; i < n; i++) sb[i] = 10 * i + k;
        for (int g = 10; g <= 11; g++) {
            y = -1;
            start_wait(&r[g]);
            CHECK(y == 10 * rank + k, "scatter(v)_init");
        }
        for (int g = 12; g <= 13; g++) {
            for (int i = 0; i < n; i++) rb[i] = -1;
            start_wait(&r[g]);
            for (int i = 0; i < n; i++) CHECK(rb[i] == i + k, "allgather(v)_init");
        }
        for (int i = 0; i < n; i++) sb[i] = 100 * rank + i + k;
        for (int g = 14; g <= 16; g++) {
            for (int i = 0; i < n; i++) rb[i] = -1;
            start_wait(&r[g]);
            for (int i = 0; i < n; i++) CHECK(rb[i] == 100 * i + rank + k, "alltoall(v,w)_init");
        }
    }
    /* Several started at once complete as a set; then the inactive ones are freed. */
    x = rank == size - 1 ? 7 : 0;
    MPI_Startall(2, &r[0]);
    MPI_Waitall(2, &r[0], MPI_STATUSES_IGNORE);
    CHECK(x == 7, "startall");
    for (int i = 0; i < 17; i++) {
        MPI_Request_free(&r[i]);
        CHECK(r[i] == MPI_REQUEST_NULL, "request_free of an inactive persistent collective");
    }

    /* Matched by the order of the inits, whatever the order of the starts;
     * a blocking collective on the communicator between start and wait. */
    int a = -1, b = -1, c = rank == size - 1 ? 5 : -1;
    MPI_Bcast_init(&a, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
    MPI_Bcast_init(&b, 1, MPI_INT, size - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
    MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &r[2]);
    for (int k = 0; k < 3; k++) {
        if (rank == 0) a = 60 + k;
        if (rank == size - 1) b = 70 + k;
        if (rank % 2) {
            MPI_Start(&r[2]), MPI_Start(&r[1]), MPI_Start(&r[0]);
        } else {
            MPI_Start(&r[0]), MPI_Start(&r[2]), MPI_Start(&r[1]);
        }
        MPI_Bcast(&c, 1, MPI_INT, size - 1, MPI_COMM_WORLD);
        MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
        CHECK(a == 60 + k && b == 70 + k && c == 5, "starts out of init order");
    }
    for (int i = 0; i < 3; i++) MPI_Request_free(&r[i]);
    free(sb);
    free(rb);
    free(counts);
    free(displs);
    free(types);
    free(bdispls);
    if (rank == 0) printf("persistent ok\n");
}

static void isendrecv(void) {
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[3] = {rank, rank * 2, rank * 3}, in[3] = {-1, -1, -1};
    MPI_Request r;
    MPI_Status st;
    MPI_Isendrecv(out, 3, MPI_INT, right, 4, in, 3, MPI_INT, left, 4, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, &st);
    int count;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(in[0] == left && in[1] == 2 * left && in[2] == 3 * left, "isendrecv data");
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 4 && count == 3, "isendrecv status");

    /* In place, through a strided type: only the elements move. */
    MPI_Datatype every_other;
    MPI_Type_vector(3, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    int buf[6];
    for (int i = 0; i < 6; i++) buf[i] = i % 2 ? -5 : rank * 10 + i;
    MPI_Isendrecv_replace(buf, 1, every_other, right, 6, left, 6, MPI_COMM_WORLD, &r);
    MPI_Type_free(&every_other);
    MPI_Wait(&r, &st);
    for (int i = 0; i < 6; i++) CHECK(buf[i] == (i % 2 ? -5 : left * 10 + i), "isendrecv_replace data");
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 6, "isendrecv_replace status");

    /* With MPI_PROC_NULL on both sides it completes at once, empty. */
    MPI_Isendrecv(out, 3, MPI_INT, MPI_PROC_NULL, 0, in, 3, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && count == 0, "isendrecv with MPI_PROC_NULL");
    if (rank == 0) printf("isendrecv ok\n");
}

static void idup_with_info(void) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
    MPI_Comm c;
    MPI_Request r;
    MPI_Comm_idup_with_info(MPI_COMM_WORLD, info, &c, &r);
    MPI_Info_free(&info);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    int one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c);
    CHECK(sum == size, "idup_with_info communicator");
    int result;
    MPI_Comm_compare(c, MPI_COMM_WORLD, &result);
    CHECK(result == MPI_CONGRUENT, "idup_with_info is a copy");
    MPI_Comm_free(&c);
    if (rank == 0) printf("idup_with_info ok\n");
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    persistent();
    isendrecv();
    idup_with_info();
    MPI_Finalize();
    return 0;
}
