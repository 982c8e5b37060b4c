/* One-sided communication: every synchronization mode, every operation,
 * derived datatypes at both ends, dynamic and allocated windows, attributes,
 * and the errors MPI defines. Prints one line per part (rank 0) when every
 * check passed on every rank; a failed check prints what and exits 1. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "rank %d: %s:%d: ", rank, __FILE__, __LINE__);   \
            fprintf(stderr, __VA_ARGS__);                                    \
            fprintf(stderr, "\n");                                           \
            MPI_Abort(MPI_COMM_WORLD, 1);                                    \
        }                                                                    \
    } while (0)

static void done(const char *part) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s ok\n", part);
    fflush(stdout);
}

/* Ring of puts and gets between fences. */
static void fence(void) {
    int buf[4] = {0}, got[4];
    MPI_Win win;
    MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_fence(0, win);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int mine[2] = {rank, 100 + rank};
    MPI_Put(mine, 2, MPI_INT, right, 1, 2, MPI_INT, win);
    MPI_Win_fence(0, win);
    CHECK(buf[1] == left && buf[2] == 100 + left, "put from %d: %d %d", left, buf[1], buf[2]);
    MPI_Get(got, 4, MPI_INT, left, 0, 4, MPI_INT, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    int expect = (left + size - 1) % size;
    CHECK(got[1] == expect && got[2] == 100 + expect, "get from %d: %d %d", left, got[1], got[2]);
    MPI_Win_free(&win);
    CHECK(win == MPI_WIN_NULL, "freed window handle");
    done("fence");
}

/* Every rank adds to every other rank's counters; MAX, REPLACE, MINLOC. */
static void accumulate(void) {
    long *sums;
    MPI_Win win;
    MPI_Win_allocate(3 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &sums, &win);
    sums[0] = sums[1] = 0;
    sums[2] = -1;
    MPI_Win_fence(0, win);
    /* Origin buffers stay untouched until the fence completes the operations. */
    long v[2] = {rank + 1, 1}, r = rank;
    for (int t = 0; t < size; t++) {
        MPI_Accumulate(v, 2, MPI_LONG, t, 0, 2, MPI_LONG, MPI_SUM, win);
        MPI_Accumulate(&r, 1, MPI_LONG, t, 2, 1, MPI_LONG, MPI_MAX, win);
    }
    MPI_Win_fence(0, win);
    CHECK(sums[0] == (long)size * (size + 1) / 2 && sums[1] == size, "sums %ld %ld", sums[0], sums[1]);
    CHECK(sums[2] == size - 1, "max %ld", sums[2]);
    MPI_Win_free(&win);

    struct { double v; int i; } pair = {1e9, -1}, mine = {(double)((rank * 7) % size), rank};
    MPI_Win pw;
    MPI_Win_create(&pair, sizeof pair, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &pw);
    MPI_Win_fence(0, pw);
    MPI_Accumulate(&mine, 1, MPI_DOUBLE_INT, 0, 0, 1, MPI_DOUBLE_INT, MPI_MINLOC, pw);
    MPI_Win_fence(0, pw);
    if (rank == 0)
        CHECK(pair.v == 0 && pair.i == 0, "minloc %g at %d", pair.v, pair.i);
    MPI_Win_free(&pw);
    done("accumulate");
}

/* A strided column of the target's matrix from a contiguous origin, and back
 * into a strided origin. */
static void datatypes(void) {
    enum { N = 6 };
    int m[N][N], col[N], back[2 * N];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            m[i][j] = -1;
    MPI_Datatype column, every_other;
    MPI_Type_vector(N, 1, N, MPI_INT, &column);
    MPI_Type_commit(&column);
    MPI_Type_vector(N, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    MPI_Win win;
    MPI_Win_create(m, sizeof m, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int i = 0; i < N; i++)
        col[i] = rank * 100 + i;
    MPI_Win_fence(0, win);
    MPI_Put(col, N, MPI_INT, right, 2, 1, column, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++)
        CHECK(m[i][2] == left * 100 + i && m[i][1] == -1, "column row %d: %d", i, m[i][2]);
    for (int i = 0; i < 2 * N; i++)
        back[i] = -7;
    MPI_Get(back, 1, every_other, left, 2, 1, column, win);
    MPI_Win_fence(0, win);
    int expect = (left + size - 1) % size;
    for (int i = 0; i < N; i++)
        CHECK(back[2 * i] == expect * 100 + i && back[2 * i + 1] == -7, "strided get %d: %d", i, back[2 * i]);
    /* Accumulate through a strided target. */
    int ones[N];
    for (int i = 0; i < N; i++)
        ones[i] = 1;
    MPI_Accumulate(ones, N, MPI_INT, right, 2, 1, column, MPI_SUM, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    for (int i = 0; i < N; i++)
        CHECK(m[i][2] == left * 100 + i + 1, "accumulated column %d: %d", i, m[i][2]);
    MPI_Win_free(&win);
    MPI_Type_free(&column);
    MPI_Type_free(&every_other);
    done("datatypes");
}

/* Post/start/complete/wait: each rank exposes to its left and accesses its right. */
static void pscw(void) {
    int buf[2] = {-1, -1};
    MPI_Win win;
    MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Group world, left_g, right_g;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Group_incl(world, 1, &left, &left_g);
    MPI_Group_incl(world, 1, &right, &right_g);
    for (int round = 0; round < 3; round++) {
        MPI_Win_post(left_g, 0, win);
        MPI_Win_start(right_g, 0, win);
        int v[2] = {rank, round};
        MPI_Put(v, 2, MPI_INT, right, 0, 2, MPI_INT, win);
        MPI_Win_complete(win);
        if (round == 1) {
            int flag = 0;
            while (!flag)
                MPI_Win_test(win, &flag);
        } else {
            MPI_Win_wait(win);
        }
        CHECK(buf[0] == left && buf[1] == round, "pscw round %d: %d %d", round, buf[0], buf[1]);
    }
    MPI_Group_free(&left_g);
    MPI_Group_free(&right_g);
    MPI_Group_free(&world);
    MPI_Win_free(&win);
    done("pscw");
}

/* Exclusive locks around read-modify-write on rank 0, fetch-and-op and
 * compare-and-swap counters, lock_all with flushes. */
static void locks(void) {
    int *counter;
    MPI_Win win;
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &counter, &win);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    memset(counter, 0, 4 * sizeof(int));
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
    enum { ROUNDS = 20 };
    for (int k = 0; k < ROUNDS; k++) {
        int v;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Get(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
        MPI_Win_flush(0, win);
        v++;
        MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
        MPI_Win_unlock(0, win);
        int one = 1, old;
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        MPI_Fetch_and_op(&one, &old, MPI_INT, 0, 1, MPI_SUM, win);
        MPI_Win_unlock(0, win);
        CHECK(old >= 0 && old < ROUNDS * size, "fetched %d", old);
        /* compare-and-swap increment */
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        for (;;) {
            int cur, next, seen;
            MPI_Fetch_and_op(NULL, &cur, MPI_INT, 0, 2, MPI_NO_OP, win);
            MPI_Win_flush(0, win);
            next = cur + 1;
            MPI_Compare_and_swap(&next, &cur, &seen, MPI_INT, 0, 2, win);
            MPI_Win_flush(0, win);
            if (seen == cur)
                break;
        }
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        CHECK(counter[0] == ROUNDS * size, "locked increments %d", counter[0]);
        CHECK(counter[1] == ROUNDS * size, "fetch-and-op %d", counter[1]);
        CHECK(counter[2] == ROUNDS * size, "compare-and-swap %d", counter[2]);
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    int me = rank;
    for (int t = 0; t < size; t++)
        MPI_Accumulate(&me, 1, MPI_INT, t, 3, 1, MPI_INT, MPI_SUM, win);
    MPI_Win_flush_all(win);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    CHECK(counter[3] == size * (size - 1) / 2, "lock_all sums %d", counter[3]);
    MPI_Win_unlock(rank, win);
    MPI_Win_free(&win);
    done("locks");
}

/* Request-based operations and a dynamic window. */
static void requests_dynamic(void) {
    MPI_Win win;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    long *region = calloc(8, sizeof(long));
    MPI_Win_attach(win, region, 8 * sizeof(long));
    MPI_Aint mine, *addrs = malloc(size * sizeof(MPI_Aint));
    MPI_Get_address(region, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Win_lock_all(0, win);
    long v[3] = {rank, rank * 2, rank * 3}, got[3] = {0}, sum[1] = {5}, old[1];
    MPI_Request r[3];
    MPI_Rput(v, 3, MPI_LONG, right, addrs[right] + sizeof(long), 3, MPI_LONG, win, &r[0]);
    MPI_Waitall(1, r, MPI_STATUSES_IGNORE);
    MPI_Win_flush(right, win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Rget(got, 3, MPI_LONG, left, addrs[left] + sizeof(long), 3, MPI_LONG, win, &r[1]);
    MPI_Rget_accumulate(sum, 1, MPI_LONG, old, 1, MPI_LONG, rank, addrs[rank], 1, MPI_LONG, MPI_SUM, win, &r[2]);
    MPI_Waitall(2, r + 1, MPI_STATUSES_IGNORE);
    int expect = (left + size - 1) % size;
    CHECK(got[0] == expect && got[1] == 2 * expect && got[2] == 3 * expect, "rget %ld %ld %ld", got[0], got[1], got[2]);
    CHECK(old[0] == 0, "rget_accumulate old %ld", old[0]);
    MPI_Win_unlock_all(win);
    CHECK(region[0] == 5, "rget_accumulate sum %ld", region[0]);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_detach(win, region);
    MPI_Win_free(&win);
    free(region);
    free(addrs);
    done("requests dynamic");
}

/* Predefined attributes, names, groups; allocated shared memory among the
 * ranks of this process. */
static void attributes(void) {
    int buf[3];
    MPI_Win win;
    MPI_Win_create(buf, sizeof buf, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    void *base;
    MPI_Aint *sz;
    int *du, *flavor, *model, flag;
    MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag);
    CHECK(flag && base == buf, "base");
    MPI_Win_get_attr(win, MPI_WIN_SIZE, &sz, &flag);
    CHECK(flag && *sz == sizeof buf, "size");
    MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &du, &flag);
    CHECK(flag && *du == 4, "disp unit");
    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_CREATE, "flavor");
    MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag);
    CHECK(flag && *model == MPI_WIN_UNIFIED, "model");
    MPI_Win_set_name(win, "my window");
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Win_get_name(win, name, &len);
    CHECK(strcmp(name, "my window") == 0 && len == 9, "name %s", name);
    MPI_Group g, w;
    int cmp;
    MPI_Win_get_group(win, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    MPI_Group_compare(g, w, &cmp);
    CHECK(cmp == MPI_IDENT, "group");
    MPI_Group_free(&g);
    MPI_Group_free(&w);
    int key;
    MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &key, NULL);
    MPI_Win_set_attr(win, key, (void *)42);
    void *v;
    MPI_Win_get_attr(win, key, &v, &flag);
    CHECK(flag && v == (void *)42, "user attribute");
    MPI_Win_delete_attr(win, key);
    MPI_Win_get_attr(win, key, &v, &flag);
    CHECK(!flag, "deleted attribute");
    MPI_Win_free_keyval(&key);
    MPI_Win_free(&win);

    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    int nrank, nsize;
    MPI_Comm_rank(node, &nrank);
    MPI_Comm_size(node, &nsize);
    int *mem;
    MPI_Win sw;
    int rc = MPI_Win_allocate_shared((nrank + 1) * sizeof(int), sizeof(int), MPI_INFO_NULL, node, &mem, &sw);
    CHECK(rc == MPI_SUCCESS, "allocate_shared");
    for (int i = 0; i <= nrank; i++)
        mem[i] = nrank;
    MPI_Win_fence(0, sw);
    for (int r = 0; r < nsize; r++) {
        MPI_Aint s;
        int d;
        int *p;
        MPI_Win_shared_query(sw, r, &s, &d, &p);
        CHECK(s == (r + 1) * (MPI_Aint)sizeof(int) && d == sizeof(int), "shared query %d", r);
        for (int i = 0; i <= r; i++)
            CHECK(p[i] == r, "shared memory of %d: %d", r, p[i]);
    }
    MPI_Win_fence(0, sw);
    MPI_Win_free(&sw);
    MPI_Comm_free(&node);
    done("attributes shared");
}

/* Errors: a put outside the target's window, an operation outside any
 * epoch, a user operation in an accumulate, a bad lock type. */
static void errors(void) {
    int buf[2];
    MPI_Win win;
    MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    int v = 1, cls;
    int rc = MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RMA_SYNC, "put outside an epoch: class %d", cls);
    MPI_Win_fence(0, win);
    rc = MPI_Put(&v, 1, MPI_INT, 0, 2, 1, MPI_INT, win);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RMA_RANGE, "put past the end: class %d", cls);
    rc = MPI_Put(&v, 1, MPI_INT, size, 0, 1, MPI_INT, win);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "put to rank %d: class %d", size, cls);
    rc = MPI_Put(&v, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win);
    CHECK(rc == MPI_SUCCESS, "put to MPI_PROC_NULL");
    MPI_Win_fence(0, win);
    rc = MPI_Win_lock(12345, 0, 0, win);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_LOCKTYPE, "bad lock type: class %d", cls);
    rc = MPI_Win_unlock(0, win);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RMA_SYNC, "unlock without lock: class %d", cls);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    MPI_Win_free(&win);
    MPI_Win bad = (MPI_Win)0x12345;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rc = MPI_Win_fence(0, bad);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_WIN, "invalid window: class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    done("errors");
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    fence();
    accumulate();
    datatypes();
    pscw();
    locks();
    requests_dynamic();
    attributes();
    errors();
    MPI_Finalize();
    return 0;
}
