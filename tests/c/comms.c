/* Communicators, groups, attributes and Cartesian topologies. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond, what) do { if (!(cond)) { fprintf(stderr, "rank %d: FAILED %s\n", rank, what); MPI_Abort(MPI_COMM_WORLD, 6); } } while (0)

static int copies = 0, deletes = 0;
static int copy_fn(MPI_Comm c, int k, void *extra, void *in, void *out, int *flag) {
    (void)c; (void)k; (void)extra;
    copies++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}
static int delete_fn(MPI_Comm c, int k, void *v, void *extra) {
    (void)c; (void)k; (void)v; (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* groups */
    MPI_Group world, evens, odds, both, none;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int *ev = malloc(sizeof(int) * size), ne = 0;
    for (int r = 0; r < size; r += 2) ev[ne++] = r;
    MPI_Group_incl(world, ne, ev, &evens);
    MPI_Group_excl(world, ne, ev, &odds);
    MPI_Group_union(evens, odds, &both);
    MPI_Group_intersection(evens, odds, &none);
    int gs, gr, cmp;
    MPI_Group_size(evens, &gs);
    CHECK(gs == ne, "group incl");
    MPI_Group_size(none, &gs);
    CHECK(gs == 0, "group intersection");
    MPI_Group_compare(world, both, &cmp);
    CHECK(size < 3 ? 1 : cmp == MPI_SIMILAR, "group compare");
    MPI_Group_rank(evens, &gr);
    CHECK(rank % 2 ? gr == MPI_UNDEFINED : gr == rank / 2, "group rank");
    int r0 = 0, t;
    MPI_Group_translate_ranks(evens, 1, &r0, world, &t);
    CHECK(t == 0, "translate");
    if (rank == 0) printf("groups ok\n");

    /* create and create_group */
    MPI_Comm ec, gc = MPI_COMM_NULL;
    MPI_Comm_create(MPI_COMM_WORLD, evens, &ec);
    CHECK((rank % 2 == 0) == (ec != MPI_COMM_NULL), "comm create");
    if (rank % 2 == 0) {
        MPI_Comm_create_group(MPI_COMM_WORLD, evens, 77, &gc);
        int s1, s2;
        MPI_Comm_size(ec, &s1);
        MPI_Comm_size(gc, &s2);
        CHECK(s1 == ne && s2 == ne, "create sizes");
        int x = 1, sum = 0;
        MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, gc);
        CHECK(sum == ne, "create_group allreduce");
        MPI_Comm_free(&ec);
        MPI_Comm_free(&gc);
    }
    /* create with disjoint groups (MPI-2.2): evens pass the evens, odds the
     * odds, and each group gets a communicator of its own */
    MPI_Comm pc;
    MPI_Group mine = rank % 2 ? odds : evens;
    MPI_Comm_create(MPI_COMM_WORLD, mine, &pc);
    int ps, mine_size, one = 1, count = 0;
    MPI_Comm_size(pc, &ps);
    MPI_Group_size(mine, &mine_size);
    CHECK(ps == mine_size, "create with disjoint groups: size");
    MPI_Allreduce(&one, &count, 1, MPI_INT, MPI_SUM, pc);
    CHECK(count == mine_size, "create with disjoint groups: allreduce");
    MPI_Group pg;
    MPI_Comm_group(pc, &pg);
    MPI_Group_compare(pg, mine, &cmp);
    CHECK(cmp == MPI_IDENT, "create with disjoint groups: group");
    MPI_Group_free(&pg);
    MPI_Comm_free(&pc);
    /* create_group by a rank outside the group: MPI_COMM_NULL, locally */
    MPI_Comm_create_group(MPI_COMM_WORLD, rank % 2 ? evens : odds, 78, &pc);
    CHECK(pc == MPI_COMM_NULL, "create_group outside the group");
    MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_EMPTY, 79, &pc);
    CHECK(pc == MPI_COMM_NULL, "create_group with MPI_GROUP_EMPTY");
    MPI_Comm shared;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared);
    int ss;
    MPI_Comm_size(shared, &ss);
    CHECK(ss == size, "split_type shared");
    MPI_Comm_set_name(shared, "node");
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Comm_get_name(shared, name, &len);
    CHECK(strcmp(name, "node") == 0 && len == 4, "names");
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    CHECK(parent == MPI_COMM_NULL, "parent");
    if (rank == 0) printf("communicators ok\n");

    /* attributes */
    int *tag_ub, flag;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    CHECK(flag && *tag_ub >= 32767, "tag_ub");
    int key;
    static int value = 42;
    MPI_Comm_create_keyval(copy_fn, delete_fn, &key, NULL);
    MPI_Comm_set_attr(shared, key, &value);
    MPI_Comm dup;
    MPI_Comm_dup(shared, &dup);
    int *got;
    MPI_Comm_get_attr(dup, key, &got, &flag);
    CHECK(flag && *got == 42 && copies == 1, "attribute copied on dup");
    MPI_Comm_free(&dup);
    CHECK(deletes == 1, "attribute deleted on free");
    MPI_Comm_delete_attr(shared, key);
    CHECK(deletes == 2, "attribute delete");
    MPI_Comm_get_attr(shared, key, &got, &flag);
    CHECK(!flag, "attribute gone");
    MPI_Comm_free_keyval(&key);
    CHECK(key == MPI_KEYVAL_INVALID, "free keyval");
    MPI_Comm_free(&shared);
    if (rank == 0) printf("attributes ok\n");

    /* Cartesian topology: a periodic 2-D grid */
    int dims[2] = {0, 0}, periods[2] = {1, 0}, coords[2];
    MPI_Dims_create(size, 2, dims);
    CHECK(dims[0] * dims[1] == size && dims[0] >= dims[1], "dims_create");
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    int cr;
    MPI_Comm_rank(cart, &cr);
    MPI_Cart_coords(cart, cr, 2, coords);
    int back;
    MPI_Cart_rank(cart, coords, &back);
    CHECK(back == cr, "cart rank/coords");
    int up, down;
    MPI_Cart_shift(cart, 0, 1, &up, &down);
    int want_down_coords[2] = {(coords[0] + 1) % dims[0], coords[1]}, want_down;
    MPI_Cart_rank(cart, want_down_coords, &want_down);
    CHECK(down == want_down, "cart shift periodic");
    int left, right;
    MPI_Cart_shift(cart, 1, 1, &left, &right);
    CHECK(coords[1] + 1 < dims[1] ? right != MPI_PROC_NULL : right == MPI_PROC_NULL, "cart shift edge");
    /* exchange along the periodic dimension */
    int sendv = cr, recvv = -1;
    MPI_Sendrecv(&sendv, 1, MPI_INT, down, 0, &recvv, 1, MPI_INT, up, 0, cart, MPI_STATUS_IGNORE);
    CHECK(recvv == up, "cart exchange");
    MPI_Comm row;
    int keep[2] = {0, 1};
    MPI_Cart_sub(cart, keep, &row);
    int rs;
    MPI_Comm_size(row, &rs);
    CHECK(rs == dims[1], "cart sub");
    int nd, gd[2], gp[2], gc2[2];
    MPI_Cartdim_get(cart, &nd);
    MPI_Cart_get(cart, 2, gd, gp, gc2);
    CHECK(nd == 2 && gd[0] == dims[0] && gp[0] == 1 && gc2[1] == coords[1], "cart get");
    MPI_Comm_free(&row);
    MPI_Comm_free(&cart);
    if (rank == 0) printf("cartesian ok\n");

    MPI_Group_free(&world);
    MPI_Group_free(&evens);
    MPI_Group_free(&odds);
    MPI_Group_free(&both);
    MPI_Group_free(&none);
    MPI_Finalize();
    return 0;
}
