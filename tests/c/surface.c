/* The MPI-3.1 surface beyond the everyday calls: each section checks its
 * functions on every rank and rank 0 prints one line when all passed. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int rank, size;

#define CHECK(cond, what) do { if (!(cond)) { fprintf(stderr, "rank %d: FAILED %s (line %d)\n", rank, what, __LINE__); MPI_Abort(MPI_COMM_WORLD, 8); } } while (0)

static void done(const char *section) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("%s ok\n", section);
    fflush(stdout);
}

static int class_of(int rc) {
    int cls;
    MPI_Error_class(rc, &cls);
    return cls;
}

/* Functions of families not built yet fail, named, with
 * MPI_ERR_UNSUPPORTED_OPERATION (here under MPI_ERRORS_RETURN). */
static void unsupported(void) {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Register_datarep("mine", NULL, NULL, NULL, NULL);
    CHECK(class_of(rc) == MPI_ERR_UNSUPPORTED_OPERATION, "register datarep");
    MPI_Win win = MPI_WIN_NULL;
    rc = MPI_Win_fence(0, win);
    CHECK(class_of(rc) == MPI_ERR_WIN, "fence on MPI_WIN_NULL");
    char port[MPI_MAX_PORT_NAME];
    rc = MPI_Open_port(MPI_INFO_NULL, port);
    CHECK(class_of(rc) == MPI_ERR_UNSUPPORTED_OPERATION, "open port");
    char text[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(rc, text, &len);
    CHECK(strcmp(text, "MPI_ERR_UNSUPPORTED_OPERATION") == 0, "error string");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    done("unsupported");
}

/* Fortran conversions, address arithmetic, MPI_Pcontrol. */
static void conversions(void) {
    MPI_Status s, back;
    MPI_Fint f[MPI_F_STATUS_SIZE];
    s.MPI_SOURCE = 3;
    s.MPI_TAG = 7;
    s.MPI_ERROR = MPI_SUCCESS;
    CHECK(MPI_Status_c2f(&s, f) == MPI_SUCCESS, "status c2f");
    CHECK(f[MPI_F_SOURCE] == 3 && f[MPI_F_TAG] == 7, "fortran status fields");
    MPI_Status_f2c(f, &back);
    CHECK(back.MPI_SOURCE == 3 && back.MPI_TAG == 7, "status f2c");
    CHECK(MPI_File_c2f(MPI_FILE_NULL) == 0 && MPI_File_f2c(0) == MPI_FILE_NULL, "file c2f");
    CHECK(MPI_Win_f2c(MPI_Win_c2f(MPI_WIN_NULL)) == MPI_WIN_NULL, "win c2f");
    double a[4];
    MPI_Aint base = (MPI_Aint)&a[0], third = (MPI_Aint)&a[3];
    CHECK(MPI_Aint_diff(third, base) == 3 * sizeof(double), "aint diff");
    CHECK(MPI_Aint_add(base, 3 * sizeof(double)) == third, "aint add");
    CHECK(MPI_Pcontrol(1) == MPI_SUCCESS && MPI_Pcontrol(0, "extra") == MPI_SUCCESS, "pcontrol");
    done("conversions");
}

static int deletes;
static int count_delete(MPI_Datatype t, int k, void *v, void *extra) {
    (void)t; (void)k; (void)v; (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

static void minus(void *in, void *inout, int *len, MPI_Datatype *t) {
    (void)t;
    for (int i = 0; i < *len; i++) ((int *)inout)[i] -= ((int *)in)[i];
}

/* Derived datatypes: addresses, extents, MPI-1 names, envelopes and
 * contents, darray, element counts, names, attributes, external32, local
 * reductions. */
static void datatypes(void) {
    struct { int a; double b; } pair[2];
    MPI_Aint a0, b0, p1;
    MPI_Get_address(&pair[0].a, &a0);
    MPI_Get_address(&pair[0].b, &b0);
    MPI_Address(&pair[1], &p1);
    int bl[3] = {1, 1, 1};
    MPI_Aint disp[3] = {0, b0 - a0, p1 - a0};
    MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_UB};
    MPI_Datatype st;
    MPI_Type_struct(3, bl, disp, types, &st);
    MPI_Type_commit(&st);
    MPI_Aint ext, lb, ub;
    MPI_Type_extent(st, &ext);
    MPI_Type_lb(st, &lb);
    MPI_Type_ub(st, &ub);
    CHECK(ext == sizeof pair[0] && lb == 0 && ub == (MPI_Aint)sizeof pair[0], "struct with MPI_UB");
    MPI_Count csize, clb, cext;
    MPI_Type_size_x(st, &csize);
    MPI_Type_get_extent_x(st, &clb, &cext);
    CHECK(csize == 12 && clb == 0 && cext == 16, "size_x extent_x");
    MPI_Type_get_true_extent_x(st, &clb, &cext);
    CHECK(clb == 0 && cext == 16, "true_extent_x");

    /* Envelope and contents of a struct: counts, displacements, types. */
    int ni, na, nd, comb;
    MPI_Type_get_envelope(st, &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_STRUCT && ni == 4 && na == 3 && nd == 3, "struct envelope");
    int ints[4];
    MPI_Aint addrs[3];
    MPI_Datatype dts[3];
    MPI_Type_get_contents(st, 4, 3, 3, ints, addrs, dts);
    CHECK(ints[0] == 3 && addrs[1] == b0 - a0 && dts[0] == MPI_INT && dts[2] == MPI_UB, "struct contents");
    MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_NAMED, "named envelope");
    MPI_Datatype vec, hb, inner;
    MPI_Type_vector(3, 2, 5, st, &vec);
    MPI_Type_get_envelope(vec, &ni, &na, &nd, &comb);
    MPI_Type_get_contents(vec, 3, 0, 1, ints, addrs, &inner);
    CHECK(comb == MPI_COMBINER_VECTOR && ints[0] == 3 && ints[1] == 2 && ints[2] == 5, "vector contents");
    MPI_Type_get_envelope(inner, &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_STRUCT, "contents give the inner type");
    MPI_Type_free(&inner);
    MPI_Type_free(&vec);
    MPI_Aint hd[2] = {0, 24};
    MPI_Type_create_hindexed_block(2, 2, hd, MPI_INT, &hb);
    MPI_Type_commit(&hb);
    int src[8] = {1, 2, 3, 4, 5, 6, 7, 8}, packed[4], pos = 0;
    MPI_Pack(src, 1, hb, packed, sizeof packed, &pos, MPI_COMM_SELF);
    CHECK(pos == 16 && packed[0] == 1 && packed[1] == 2 && packed[2] == 7 && packed[3] == 8, "hindexed_block");
    MPI_Type_get_envelope(hb, &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_HINDEXED_BLOCK && ni == 2 && na == 2, "hindexed_block envelope");

    /* darray: block and cyclic distributions of 2*size ints over the ranks. */
    int gs = 2 * size, dist = MPI_DISTRIBUTE_BLOCK, darg = MPI_DISTRIBUTE_DFLT_DARG, ps = size;
    int global[64];
    for (int i = 0; i < 64; i++) global[i] = i;
    MPI_Datatype blk, cyc;
    MPI_Type_create_darray(size, rank, 1, &gs, &dist, &darg, &ps, MPI_ORDER_C, MPI_INT, &blk);
    dist = MPI_DISTRIBUTE_CYCLIC;
    MPI_Type_create_darray(size, rank, 1, &gs, &dist, &darg, &ps, MPI_ORDER_C, MPI_INT, &cyc);
    MPI_Type_commit(&blk);
    MPI_Type_commit(&cyc);
    int got[2];
    pos = 0;
    MPI_Pack(global, 1, blk, got, sizeof got, &pos, MPI_COMM_SELF);
    CHECK(pos == 8 && got[0] == 2 * rank && got[1] == 2 * rank + 1, "darray block");
    pos = 0;
    MPI_Pack(global, 1, cyc, got, sizeof got, &pos, MPI_COMM_SELF);
    CHECK(got[0] == rank && got[1] == rank + size, "darray cyclic");
    MPI_Type_get_extent(cyc, &lb, &ext);
    CHECK(lb == 0 && ext == gs * (MPI_Aint)sizeof(int), "darray extent");
    /* 2-D, Fortran order, on a 1 x size grid: column block of a 3 x size array. */
    int g2[2] = {3, size}, d2[2] = {MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_BLOCK};
    int a2[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, p2[2] = {1, size};
    MPI_Datatype col;
    MPI_Type_create_darray(size, rank, 2, g2, d2, a2, p2, MPI_ORDER_FORTRAN, MPI_INT, &col);
    MPI_Type_commit(&col);
    int three[3];
    pos = 0;
    MPI_Pack(global, 1, col, three, sizeof three, &pos, MPI_COMM_SELF);
    CHECK(pos == 12 && three[0] == 3 * rank && three[2] == 3 * rank + 2, "darray fortran");
    MPI_Type_free(&blk);
    MPI_Type_free(&cyc);
    MPI_Type_free(&col);

    /* Element counts of derived types: basic elements, not bytes. */
    MPI_Datatype two;
    MPI_Type_contiguous(2, MPI_INT, &two);
    MPI_Type_commit(&two);
    int five[5] = {1, 2, 3, 4, 5}, six[6];
    MPI_Status s;
    MPI_Sendrecv(five, 5, MPI_INT, rank, 1, six, 3, two, rank, 1, MPI_COMM_WORLD, &s);
    int n;
    MPI_Get_count(&s, two, &n);
    CHECK(n == MPI_UNDEFINED, "get_count of a partial element");
    MPI_Get_elements(&s, two, &n);
    CHECK(n == 5, "get_elements of contiguous");
    MPI_Sendrecv(pair, 12, MPI_BYTE, rank, 2, six, 1, st, rank, 2, MPI_COMM_WORLD, &s);
    MPI_Get_elements(&s, st, &n);
    CHECK(n == 2, "get_elements of a struct");
    MPI_Sendrecv(pair, 4, MPI_BYTE, rank, 3, six, 1, st, rank, 3, MPI_COMM_WORLD, &s);
    MPI_Count nx;
    MPI_Get_elements_x(&s, st, &nx);
    CHECK(nx == 1, "get_elements_x of half a struct");
    MPI_Status_set_elements(&s, st, 3);
    MPI_Get_elements(&s, st, &n);
    MPI_Get_count(&s, MPI_BYTE, &pos);
    CHECK(n == 3 && pos == 16, "status_set_elements");
    MPI_Status_set_elements_x(&s, MPI_DOUBLE, 4);
    MPI_Get_count(&s, MPI_DOUBLE, &n);
    CHECK(n == 4, "status_set_elements_x");
    int flag;
    MPI_Status_set_cancelled(&s, 1);
    MPI_Test_cancelled(&s, &flag);
    CHECK(flag, "status_set_cancelled");
    MPI_Type_free(&two);

    /* Names and attributes. */
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Type_get_name(MPI_DOUBLE, name, &len);
    CHECK(strcmp(name, "MPI_DOUBLE") == 0 && len == 10, "predefined name");
    MPI_Type_set_name(st, "pair");
    MPI_Type_get_name(st, name, &len);
    CHECK(strcmp(name, "pair") == 0, "set_name");
    int key;
    static int value = 42;
    MPI_Type_create_keyval(MPI_TYPE_DUP_FN, count_delete, &key, NULL);
    MPI_Type_set_attr(st, key, &value);
    MPI_Datatype dup;
    MPI_Type_dup(st, &dup);
    int *v;
    MPI_Type_get_attr(dup, key, &v, &flag);
    CHECK(flag && *v == 42, "attribute copied by dup");
    MPI_Type_get_envelope(dup, &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_DUP && nd == 1, "dup envelope");
    MPI_Type_delete_attr(st, key);
    MPI_Type_get_attr(st, key, &v, &flag);
    CHECK(!flag && deletes == 1, "delete_attr");
    MPI_Type_free(&dup);
    CHECK(deletes == 2, "free deletes attributes");
    MPI_Type_free_keyval(&key);

    /* Sizes, F90 types, external32. */
    MPI_Datatype m;
    MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &m);
    CHECK(m == MPI_DOUBLE, "match_size");
    MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &m);
    CHECK(m == MPI_INT, "match_size int");
    MPI_Datatype f;
    MPI_Type_create_f90_real(6, 30, &f);
    int fs;
    MPI_Type_size(f, &fs);
    MPI_Type_get_envelope(f, &ni, &na, &nd, &comb);
    CHECK(fs == 4 && comb == MPI_COMBINER_F90_REAL && ni == 2, "f90 real");
    MPI_Type_create_f90_integer(9, &f);
    MPI_Type_size(f, &fs);
    CHECK(fs == 4, "f90 integer");
    int word = 0x01020304, back = 0;
    unsigned char ext32[8];
    MPI_Aint epos = 0, esize;
    MPI_Pack_external_size("external32", 1, MPI_INT, &esize);
    MPI_Pack_external("external32", &word, 1, MPI_INT, ext32, sizeof ext32, &epos);
    CHECK(esize == 4 && epos == 4 && ext32[0] == 1 && ext32[3] == 4, "pack_external is big-endian");
    epos = 0;
    MPI_Unpack_external("external32", ext32, 4, &epos, &back, 1, MPI_INT);
    CHECK(back == word, "unpack_external");

    /* Local reductions. */
    int in[3] = {1, 2, 3}, io[3] = {10, 20, 30};
    MPI_Reduce_local(in, io, 3, MPI_INT, MPI_SUM);
    CHECK(io[0] == 11 && io[2] == 33, "reduce_local sum");
    MPI_Op op;
    MPI_Op_create(minus, 0, &op);
    MPI_Reduce_local(in, io, 3, MPI_INT, op);
    CHECK(io[0] == 10 && io[2] == 30, "reduce_local user op");
    int commute;
    MPI_Op_commutative(op, &commute);
    CHECK(!commute, "user op not commutative");
    MPI_Op_commutative(MPI_MAX, &commute);
    CHECK(commute, "max commutative");
    MPI_Op_free(&op);
    MPI_Type_free(&st);
    MPI_Type_free(&hb);
    done("datatypes");
}

/* The non-blocking v-, w-, scan and reduce-scatter collectives and
 * MPI_Comm_idup, several in flight at once. */
static void nonblocking(void) {
    MPI_Request r[10];
    int me = rank + 1, scan = 0, exscan = -1;
    MPI_Iscan(&me, &scan, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[0]);
    MPI_Iexscan(&me, &exscan, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[1]);
    int ones[64], block = 0, rs = 0, counts[64], displs[64];
    for (int i = 0; i < 64; i++) { ones[i] = i + 1; counts[i] = 1; displs[i] = i; }
    MPI_Ireduce_scatter_block(ones, &block, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[2]);
    MPI_Ireduce_scatter(ones, &rs, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[3]);
    int gathered[64], all[64], scattered = -1, a2a[64], w2w[64];
    MPI_Igatherv(&me, 1, MPI_INT, gathered, counts, displs, MPI_INT, 0, MPI_COMM_WORLD, &r[4]);
    MPI_Iscatterv(ones, counts, displs, MPI_INT, &scattered, 1, MPI_INT, size - 1, MPI_COMM_WORLD, &r[5]);
    MPI_Iallgatherv(&me, 1, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD, &r[6]);
    int mine[64], bdispls[64];
    MPI_Datatype types[64];
    for (int i = 0; i < size; i++) { mine[i] = 100 * rank + i; bdispls[i] = i * (int)sizeof(int); types[i] = MPI_INT; }
    MPI_Ialltoallv(mine, counts, displs, MPI_INT, a2a, counts, displs, MPI_INT, MPI_COMM_WORLD, &r[7]);
    MPI_Ialltoallw(mine, counts, bdispls, types, w2w, counts, bdispls, types, MPI_COMM_WORLD, &r[8]);
    MPI_Comm dup;
    MPI_Comm_idup(MPI_COMM_WORLD, &dup, &r[9]);
    MPI_Waitall(10, r, MPI_STATUSES_IGNORE);
    CHECK(scan == (rank + 1) * (rank + 2) / 2, "iscan");
    CHECK(rank == 0 || exscan == rank * (rank + 1) / 2, "iexscan");
    CHECK(block == size * (rank + 1) && rs == size * (rank + 1), "ireduce_scatter");
    for (int i = 0; i < size; i++) {
        CHECK(rank != 0 || gathered[i] == i + 1, "igatherv");
        CHECK(all[i] == i + 1, "iallgatherv");
        CHECK(a2a[i] == 100 * i + rank && w2w[i] == 100 * i + rank, "ialltoallv/w");
    }
    CHECK(scattered == rank + 1, "iscatterv");
    int result, dsize;
    MPI_Comm_compare(dup, MPI_COMM_WORLD, &result);
    MPI_Comm_size(dup, &dsize);
    CHECK(result == MPI_CONGRUENT && dsize == size, "comm_idup");
    MPI_Allreduce(MPI_IN_PLACE, &me, 1, MPI_INT, MPI_SUM, dup);
    CHECK(me == size * (size + 1) / 2, "idup communicator works");
    MPI_Comm_free(&dup);
    done("nonblocking");
}

/* Communicator odds and ends: MPI-1 names, info hints, added error classes,
 * group ranges, topology queries, request status without completion. */
static void communicators(void) {
    int key, flag, *v;
    static int value = 7;
    MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &key, NULL);
    MPI_Attr_put(MPI_COMM_WORLD, key, &value);
    MPI_Comm dup;
    MPI_Info hints, used, copy;
    MPI_Info_create(&hints);
    MPI_Info_set(hints, "mpi_assert_no_any_tag", "true");
    MPI_Info_set(hints, "alpha", "12345");
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, hints, &dup);
    MPI_Attr_get(dup, key, &v, &flag);
    CHECK(flag && *v == 7, "attribute copied by MPI_DUP_FN");
    MPI_Attr_delete(MPI_COMM_WORLD, key);
    MPI_Attr_get(MPI_COMM_WORLD, key, &v, &flag);
    CHECK(!flag, "attr_delete");
    MPI_Comm_get_info(dup, &used);
    int nkeys, len;
    char k[MPI_MAX_INFO_KEY + 1];
    MPI_Info_get_nkeys(used, &nkeys);
    MPI_Info_get_nthkey(used, 0, k);
    MPI_Info_get_valuelen(used, "alpha", &len, &flag);
    /* Only the hints the library understands are kept. */
    CHECK(nkeys == 1 && strcmp(k, "mpi_assert_no_any_tag") == 0 && !flag, "comm info");
    MPI_Info_dup(used, &copy);
    MPI_Info_delete(used, "mpi_assert_no_any_tag");
    MPI_Info_get_valuelen(copy, "mpi_assert_no_any_tag", &len, &flag);
    CHECK(flag && len == 4, "info_dup is a copy");
    MPI_Comm_set_info(dup, copy);
    MPI_Info_free(&hints);
    MPI_Info_free(&used);
    MPI_Info_free(&copy);
    MPI_Keyval_free(&key);

    MPI_Errhandler eh;
    MPI_Errhandler_set(dup, MPI_ERRORS_RETURN);
    MPI_Errhandler_get(dup, &eh);
    CHECK(eh == MPI_ERRORS_RETURN, "errhandler_set/get");
    int cls, code, got, last, *lastp;
    MPI_Add_error_class(&cls);
    MPI_Add_error_code(cls, &code);
    MPI_Add_error_string(code, "the frobnicator jammed");
    MPI_Error_class(code, &got);
    char text[MPI_MAX_ERROR_STRING];
    MPI_Error_string(code, text, &len);
    CHECK(got == cls && strcmp(text, "the frobnicator jammed") == 0, "added error code");
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &lastp, &flag);
    last = *lastp;
    CHECK(flag && last >= code, "lastusedcode");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Add_error_code(12345, &code);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Error_class(rc, &got);
    CHECK(got == MPI_ERR_ARG, "add_error_code to no class");

    MPI_Group world, evens, odds;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int ranges[1][3] = {{0, size - 1, 2}};
    MPI_Group_range_incl(world, 1, ranges, &evens);
    MPI_Group_range_excl(world, 1, ranges, &odds);
    int ne, no;
    MPI_Group_size(evens, &ne);
    MPI_Group_size(odds, &no);
    CHECK(ne == (size + 1) / 2 && no == size / 2, "group ranges");
    MPI_Group_free(&evens);
    if (no > 0) MPI_Group_free(&odds);
    MPI_Group_free(&world);

    int status, newrank, dims[1] = {size}, periods[1] = {0};
    MPI_Topo_test(MPI_COMM_WORLD, &status);
    CHECK(status == MPI_UNDEFINED, "no topology");
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
    MPI_Topo_test(cart, &status);
    CHECK(status == MPI_CART, "cartesian topology");
    MPI_Cart_map(MPI_COMM_WORLD, 1, dims, periods, &newrank);
    CHECK(newrank == rank, "cart_map");
    MPI_Comm_free(&cart);

    int x = rank, y = -1;
    MPI_Request r;
    MPI_Irecv(&y, 1, MPI_INT, rank, 9, dup, &r);
    MPI_Status s;
    MPI_Request_get_status(r, &flag, &s);
    CHECK(!flag && r != MPI_REQUEST_NULL, "get_status of a pending receive");
    MPI_Send(&x, 1, MPI_INT, rank, 9, dup);
    do MPI_Request_get_status(r, &flag, &s); while (!flag);
    CHECK(s.MPI_SOURCE == rank && s.MPI_TAG == 9 && r != MPI_REQUEST_NULL, "get_status keeps the request");
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(y == rank && r == MPI_REQUEST_NULL, "wait after get_status");
    MPI_Comm_free(&dup);
    done("communicators");
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsupported();
    conversions();
    datatypes();
    nonblocking();
    communicators();
    MPI_Finalize();
    return 0;
}
