/* MPI-4 sessions: process sets, groups and communicators made from them
 * (intra- and inter-communicators), without MPI_Init, beside it and after
 * MPI_Finalize. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int wrank = -1;
#define CHECK(cond, what) do { if (!(cond)) { fprintf(stderr, "rank %d: FAILED %s (line %d)\n", wrank, what, __LINE__); MPI_Abort(MPI_COMM_WORLD, 8); } } while (0)

/* Everything a library does with a session of its own; returns the world
 * size seen. */
static int library(const char *phase) {
    MPI_Session s;
    MPI_Info hints, used;
    char value[MPI_MAX_INFO_VAL], name[MPI_MAX_PSET_NAME_LEN];
    int flag, n, len, size, rank, sum;

    MPI_Info_create(&hints);
    MPI_Info_set(hints, "thread_level", "MPI_THREAD_MULTIPLE");
    CHECK(MPI_Session_init(hints, MPI_ERRORS_RETURN, &s) == MPI_SUCCESS, "session init");
    MPI_Info_free(&hints);
    MPI_Session_get_info(s, &used);
    MPI_Info_get(used, "thread_level", MPI_MAX_INFO_VAL - 1, value, &flag);
    CHECK(flag && strcmp(value, "MPI_THREAD_MULTIPLE") == 0, "thread level");
    MPI_Info_free(&used);

    MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n);
    CHECK(n == 2, "two process sets");
    for (int i = 0; i < n; i++) {
        len = 0;
        MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, NULL);
        CHECK(len > 1 && len <= MPI_MAX_PSET_NAME_LEN, "pset name length");
        MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name);
        CHECK((int)strlen(name) + 1 == len, "pset name");
        MPI_Session_get_pset_info(s, name, &used);
        MPI_Info_get(used, "mpi_size", MPI_MAX_INFO_VAL - 1, value, &flag);
        CHECK(flag && atoi(value) >= 1, "mpi_size");
        if (strcmp(name, "mpi://SELF") == 0)
            CHECK(atoi(value) == 1, "SELF has one process");
        MPI_Info_free(&used);
    }

    /* A communicator of the world's group, twice with the same tag. */
    MPI_Group world, self;
    MPI_Comm comm;
    MPI_Group_from_session_pset(s, "mpi://WORLD", &world);
    for (int round = 0; round < 2; round++) {
        CHECK(MPI_Comm_create_from_group(world, "org.example.lib", MPI_INFO_NULL,
                                         MPI_ERRORS_RETURN, &comm) == MPI_SUCCESS, "from group");
        MPI_Comm_size(comm, &size);
        MPI_Comm_rank(comm, &rank);
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm);
        CHECK(sum == size * (size - 1) / 2, "allreduce on the new communicator");
        MPI_Comm_free(&comm);
    }
    wrank = rank;

    /* SELF: a message to oneself. */
    int out = 42 + rank, in = -1;
    MPI_Request req;
    MPI_Group_from_session_pset(s, "mpi://self", &self);
    MPI_Comm_create_from_group(self, "org.example.self", MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm);
    MPI_Irecv(&in, 1, MPI_INT, 0, 0, comm, &req);
    MPI_Send(&out, 1, MPI_INT, 0, 0, comm);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(in == out, "self message");
    MPI_Comm_free(&comm);
    MPI_Group_free(&self);

    /* Even and odd ranks, an intercommunicator between them. */
    if (size > 1) {
        MPI_Group even, odd;
        int ranges[1][3] = {{0, size - 1, 2}}, oranges[1][3] = {{1, size - 1, 2}};
        MPI_Group_range_incl(world, 1, ranges, &even);
        MPI_Group_range_incl(world, 1, oranges, &odd);
        int mine = rank % 2;
        MPI_Comm inter;
        CHECK(MPI_Intercomm_create_from_groups(mine ? odd : even, 0, mine ? even : odd, 0,
                                               "org.example.pair", MPI_INFO_NULL,
                                               MPI_ERRORS_RETURN, &inter) == MPI_SUCCESS, "intercomm");
        int rsize, flag2, lr, peer = -1;
        MPI_Comm_test_inter(inter, &flag2);
        MPI_Comm_remote_size(inter, &rsize);
        CHECK(flag2 && rsize == (mine ? (size + 1) / 2 : size / 2), "remote size");
        MPI_Comm_rank(inter, &lr);
        /* Local rank 0 of each side swaps world ranks with the other's. */
        if (lr == 0)
            MPI_Sendrecv(&rank, 1, MPI_INT, 0, 1, &peer, 1, MPI_INT, 0, 1, inter, MPI_STATUS_IGNORE);
        CHECK(lr != 0 || peer == (mine ? 0 : 1), "leaders talk across");
        MPI_Comm_free(&inter);
        MPI_Group_free(&even);
        MPI_Group_free(&odd);
    }

    /* An unknown process set is an error the session's handler returns. */
    MPI_Group none;
    int rc = MPI_Group_from_session_pset(s, "mpi://nowhere", &none), cls;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "unknown process set");

    MPI_Group_free(&world);
    CHECK(MPI_Session_finalize(&s) == MPI_SUCCESS && s == MPI_SESSION_NULL, "finalize");
    if (rank == 0)
        printf("%s: %d ranks ok\n", phase, size);
    return size;
}

int main(int argc, char **argv) {
    int provided, size;
    int n = library("without MPI_Init");
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == n, "the world is the session's");
    library("beside MPI_Init");
    MPI_Finalize();
    library("after MPI_Finalize");
    return 0;
}
