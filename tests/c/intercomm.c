/* Intercommunicators: even and odd world ranks as two groups (so the groups
 * straddle processes), made with MPI_Intercomm_create over MPI_COMM_WORLD;
 * point-to-point naming remote ranks, every blocking collective in both
 * directions with MPI_ROOT / MPI_PROC_NULL roots, dup, split, create,
 * compare, merge and free. Needs at least 2 ranks. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int wrank;
#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "rank %d: FAILED ", wrank); \
    fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); MPI_Abort(MPI_COMM_WORLD, 6); } } while (0)

/* Collectives from group `from` to the other one. */
static void collectives(MPI_Comm ic, int color, int from) {
    int lr, ls, rs;
    MPI_Comm_rank(ic, &lr);
    MPI_Comm_size(ic, &ls);
    MPI_Comm_remote_size(ic, &rs);
    int sending = color == from;
    int root = sending ? (lr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    int *buf = calloc(4 * (ls + rs + 8), sizeof(int));
    int *out = calloc(4 * (ls + rs + 8), sizeof(int));

    /* bcast */
    int v = sending && lr == 0 ? 4242 + from : -1;
    MPI_Bcast(&v, 1, MPI_INT, root, ic);
    if (!sending) CHECK(v == 4242 + from, "bcast got %d", v);
    if (sending && lr != 0) CHECK(v == -1, "bcast touched a PROC_NULL rank's buffer");

    /* reduce: the root gets the sum of the other group's local ranks + 1 */
    int mine = lr + 1, sum = -1;
    int rroot = sending ? 0 : (lr == 0 ? MPI_ROOT : MPI_PROC_NULL);
    MPI_Reduce(&mine, &sum, 1, MPI_INT, MPI_SUM, rroot, ic);
    if (!sending && lr == 0) CHECK(sum == ls * 0 + rs * (rs + 1) / 2, "reduce got %d", sum);

    /* allreduce: everyone gets the other group's sum */
    MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, ic);
    CHECK(sum == rs * (rs + 1) / 2, "allreduce got %d, remote size %d", sum, rs);

    /* gather at the root of group `from` */
    int g = 100 * color + lr;
    MPI_Gather(&g, 1, MPI_INT, out, 1, MPI_INT, root, ic);
    if (root == MPI_ROOT)
        for (int i = 0; i < rs; i++) CHECK(out[i] == 100 * (1 - color) + i, "gather[%d] %d", i, out[i]);

    /* scatter from the root of group `from` */
    for (int i = 0; i < rs; i++) buf[i] = 1000 + i;
    int got = -1;
    MPI_Scatter(buf, 1, MPI_INT, &got, 1, MPI_INT, root, ic);
    if (!sending) CHECK(got == 1000 + lr, "scatter got %d", got);

    /* gatherv with two ints per remote rank at reversed places */
    int two[2] = {g, -g};
    int *counts = calloc(rs + 1, sizeof(int)), *displs = calloc(rs + 1, sizeof(int));
    for (int i = 0; i < rs; i++) { counts[i] = 2; displs[i] = 2 * (rs - 1 - i); }
    MPI_Gatherv(two, 2, MPI_INT, out, counts, displs, MPI_INT, root, ic);
    if (root == MPI_ROOT)
        for (int i = 0; i < rs; i++)
            CHECK(out[2 * (rs - 1 - i)] == 100 * (1 - color) + i, "gatherv block %d", i);

    /* allgather, allgatherv, alltoall, reduce_scatter_block: both directions at once */
    MPI_Allgather(&g, 1, MPI_INT, out, 1, MPI_INT, ic);
    for (int i = 0; i < rs; i++) CHECK(out[i] == 100 * (1 - color) + i, "allgather[%d] %d", i, out[i]);
    for (int i = 0; i < rs; i++) { counts[i] = 1; displs[i] = rs - 1 - i; }
    MPI_Allgatherv(&g, 1, MPI_INT, out, counts, displs, MPI_INT, ic);
    for (int i = 0; i < rs; i++) CHECK(out[rs - 1 - i] == 100 * (1 - color) + i, "allgatherv[%d]", i);
    for (int i = 0; i < rs; i++) buf[i] = 10000 * color + 100 * lr + i;
    MPI_Alltoall(buf, 1, MPI_INT, out, 1, MPI_INT, ic);
    for (int i = 0; i < rs; i++)
        CHECK(out[i] == 10000 * (1 - color) + 100 * i + lr, "alltoall[%d] %d", i, out[i]);
    /* alltoallv: two ints per pair, reversed blocks on the receive side */
    int *sc = calloc(rs + 1, sizeof(int)), *sd = calloc(rs + 1, sizeof(int));
    for (int i = 0; i < rs; i++) {
        sc[i] = 2; sd[i] = 2 * i; counts[i] = 2; displs[i] = 2 * (rs - 1 - i);
        buf[2 * i] = 10000 * color + 100 * lr + i; buf[2 * i + 1] = -buf[2 * i];
    }
    MPI_Alltoallv(buf, sc, sd, MPI_INT, out, counts, displs, MPI_INT, ic);
    for (int i = 0; i < rs; i++) {
        int w = 10000 * (1 - color) + 100 * i + lr;
        CHECK(out[2 * (rs - 1 - i)] == w && out[2 * (rs - 1 - i) + 1] == -w, "alltoallv block %d", i);
    }
    free(sc); free(sd);
    /* reduce_scatter: the sum of the other group's vectors of ls * rs ints,
     * rs ints to each local rank (the other side scatters ls each: same total) */
    int total = ls * rs;
    int *vec = calloc(total, sizeof(int)), *part = calloc(rs, sizeof(int));
    int *rc = calloc(ls, sizeof(int));
    for (int k = 0; k < total; k++) vec[k] = k + lr;
    for (int i = 0; i < ls; i++) rc[i] = rs;
    MPI_Reduce_scatter(vec, part, rc, MPI_INT, MPI_SUM, ic);
    for (int k = 0; k < rs; k++) {
        int at = lr * rs + k;
        CHECK(part[k] == rs * at + rs * (rs - 1) / 2, "reduce_scatter[%d] %d", k, part[k]);
    }
    free(vec); free(part); free(rc);
    MPI_Barrier(ic);
    free(buf); free(out); free(counts); free(displs);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int color = wrank % 2;
    MPI_Comm half, ic;
    MPI_Comm_split(MPI_COMM_WORLD, color, wrank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color == 0 ? 1 : 0, 77, &ic);

    int flag = 0, lr, ls, rs;
    MPI_Comm_test_inter(ic, &flag);
    CHECK(flag == 1, "test_inter says %d", flag);
    MPI_Comm_test_inter(half, &flag);
    CHECK(flag == 0, "test_inter of an intracommunicator says %d", flag);
    MPI_Comm_rank(ic, &lr);
    MPI_Comm_size(ic, &ls);
    MPI_Comm_remote_size(ic, &rs);
    CHECK(lr == wrank / 2, "local rank %d", lr);
    CHECK(ls == (size + 1 - color) / 2 && rs == (size + color) / 2, "sizes %d %d", ls, rs);
    MPI_Group rg, wg;
    MPI_Comm_remote_group(ic, &rg);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    for (int i = 0; i < rs; i++) {
        int w;
        MPI_Group_translate_ranks(rg, 1, &i, wg, &w);
        CHECK(w == 2 * i + 1 - color, "remote rank %d is world rank %d", i, w);
    }
    MPI_Group_free(&rg);
    MPI_Group_free(&wg);

    /* point-to-point: local rank r sends to remote rank r % rs; everyone
     * receives from whoever targets it, sources named by remote rank */
    int expect = 0;
    for (int i = 0; i < rs; i++) if (i % ls == lr) expect++;
    int v = 1000 * color + lr;
    MPI_Request req;
    MPI_Isend(&v, 1, MPI_INT, lr % rs, 5, ic, &req);
    for (int k = 0; k < expect; k++) {
        int in; MPI_Status st;
        MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, 5, ic, &st);
        CHECK(st.MPI_SOURCE % ls == lr && in == 1000 * (1 - color) + st.MPI_SOURCE,
              "received %d from remote %d", in, st.MPI_SOURCE);
    }
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    /* a named source, a reply round trip */
    if (lr < rs && lr < ls) {
        int a = wrank, b = -1;
        MPI_Sendrecv(&a, 1, MPI_INT, lr, 6, &b, 1, MPI_INT, lr, 6, ic, MPI_STATUS_IGNORE);
        CHECK(b == 2 * lr + 1 - color, "sendrecv got %d", b);
    }
    if (wrank == 0) printf("intercomm p2p ok\n");

    collectives(ic, color, 0);
    collectives(ic, color, 1);
    if (wrank == 0) printf("intercomm collectives ok\n");

    /* dup, compare, split (by local rank parity), create (local rank 0 only) */
    MPI_Comm d, s, c;
    int cmp;
    MPI_Comm_dup(ic, &d);
    MPI_Comm_compare(ic, d, &cmp);
    CHECK(cmp == MPI_CONGRUENT, "compare with dup %d", cmp);
    MPI_Comm_test_inter(d, &flag);
    CHECK(flag, "dup is not inter");
    collectives(d, color, 1);
    MPI_Comm_split(ic, lr % 2, -lr, &s);
    int sl = 0, sls = 0, srs = 0;
    int remote_of_color = 0;
    for (int i = 0; i < rs; i++) if (i % 2 == lr % 2) remote_of_color++;
    if (remote_of_color == 0) {
        CHECK(s == MPI_COMM_NULL, "split with nobody remote is not MPI_COMM_NULL");
    } else {
        MPI_Comm_rank(s, &sl); MPI_Comm_size(s, &sls); MPI_Comm_remote_size(s, &srs);
        int mine_of_color = 0;
        for (int i = 0; i < ls; i++) if (i % 2 == lr % 2) mine_of_color++;
        CHECK(sls == mine_of_color && srs == remote_of_color, "split sizes %d %d", sls, srs);
        CHECK(sl == mine_of_color - 1 - lr / 2, "split rank %d (key -rank)", sl);
        int one = 1, tot = 0;
        MPI_Allreduce(&one, &tot, 1, MPI_INT, MPI_SUM, s);
        CHECK(tot == srs, "allreduce on split %d", tot);
        MPI_Comm_free(&s);
    }
    MPI_Group lg, first;
    MPI_Comm_group(ic, &lg);
    int zero = 0;
    MPI_Group_incl(lg, 1, &zero, &first);
    MPI_Comm_create(ic, first, &c);
    if (lr == 0) {
        int crs = 0;
        MPI_Comm_remote_size(c, &crs);
        CHECK(crs == 1, "create remote size %d", crs);
        int x = color, y = -1;
        MPI_Sendrecv(&x, 1, MPI_INT, 0, 1, &y, 1, MPI_INT, 0, 1, c, MPI_STATUS_IGNORE);
        CHECK(y == 1 - color, "sendrecv on created %d", y);
        MPI_Comm_free(&c);
    } else {
        CHECK(c == MPI_COMM_NULL, "create gave a non-member a communicator");
    }
    MPI_Group_free(&first);
    MPI_Group_free(&lg);
    if (wrank == 0) printf("intercomm dup split create ok\n");

    /* merge: odd ranks pass high = 0, so they come first */
    MPI_Comm m;
    MPI_Intercomm_merge(ic, color == 0, &m);
    int mr, ms;
    MPI_Comm_rank(m, &mr);
    MPI_Comm_size(m, &ms);
    CHECK(ms == size, "merged size %d", ms);
    CHECK(mr == (color == 1 ? lr : rs + lr), "merged rank %d", mr);
    int one = mr, tot = 0;
    MPI_Allreduce(&one, &tot, 1, MPI_INT, MPI_SUM, m);
    CHECK(tot == size * (size - 1) / 2, "allreduce on merged %d", tot);
    MPI_Comm_free(&m);
    MPI_Comm_free(&d);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&half);
    if (wrank == 0) printf("intercomm merge ok\n");
    MPI_Finalize();
    return 0;
}
