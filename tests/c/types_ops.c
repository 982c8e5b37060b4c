/* Predefined datatypes and reduction operations: every (operation, type group)
 * pair MPI defines — long double and the complex types included — computed,
 * and pairs it does not define refused with MPI_ERR_OP; the (value, index)
 * pair types (sizes, extents, elements, MINLOC/MAXLOC); names; C alignment of
 * structures; external32; datatype handles freed and reused. Deterministic
 * output on rank 0; non-zero exit on failure. */
#include <mpi.h>
#include <complex.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;
#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "rank %d: FAILED ", rank); \
    fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); MPI_Abort(MPI_COMM_WORLD, 7); } } while (0)

/* Allreduce of one value, checked against the same reduction done here in C
 * over every rank's contribution (values chosen so every order is exact). */
#define REDUCE(ctype, mpitype, op, contrib, combine, what) do { \
    ctype mine_ = contrib(rank), got_, want_ = contrib(0); \
    for (int r_ = 1; r_ < size; r_++) { ctype x_ = contrib(r_); want_ = combine(want_, x_); } \
    int rc_ = MPI_Allreduce(&mine_, &got_, 1, mpitype, op, MPI_COMM_WORLD); \
    CHECK(rc_ == MPI_SUCCESS, "%s returned %d", what, rc_); \
    CHECK(got_ == want_, "%s", what); \
} while (0)

#define ADD(a, b) ((a) + (b))
#define MUL(a, b) ((a) * (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define LXOR(a, b) ((!(a)) != (!(b)))
#define LAND(a, b) ((a) && (b))
#define LOR(a, b) ((a) || (b))
#define BXOR(a, b) ((a) ^ (b))
#define BAND(a, b) ((a) & (b))
#define BOR(a, b) ((a) | (b))

/* i^r: products of units stay exact whatever the order. */
static double complex unit(int r) { static const double complex u[4] = {1, I, -1, -I}; return u[r % 4]; }
#define LD_SMALL(r) ((long double)(r) + 0.25L)
#define LD_TWO(r) ((r) % 2 ? 2.0L : 1.0L)
#define LD_HALF(r) ((long double)((r) * 37 % 11) * 0.5L)
#define LD_ODD(r) ((long double)((r) % 2))
#define FC_SUM(r) ((float)(r) - (float)(r) * 2 * I)
#define FC_PROD(r) ((float complex)unit(r))
#define DC_SUM(r) ((double)(r) + 0.5 * I)
#define DC_PROD(r) (unit(r))
#define LDC_SUM(r) ((long double)(r) - 0.75L * I)
#define LDC_PROD(r) ((long double complex)unit(r + 1))
#define BOOL_SOME(r) ((bool)((r) % 3 == 1))
#define BOOL_ALL(r) ((bool)true)
#define BYTE_OF(r) ((unsigned char)(0x11 << ((r) % 4)))
#define FLOG(r) ((int)((r) % 2))

struct ldi { long double v; int i; };
struct si { short v; int i; };
struct di { double v; int i; };
struct li { long v; int i; };

/* A user op on (double, int) pairs: the function sees them in their C
 * layout, padding included, whatever the library moves. */
static void pair_sum(void *in, void *inout, int *count, MPI_Datatype *t) {
    (void)t;
    struct di *a = in, *b = inout;
    for (int k = 0; k < *count; k++) { b[k].v += a[k].v; b[k].i += a[k].i; }
}

/* A user op on every other int (a vector type with gaps). */
static void strided_max(void *in, void *inout, int *count, MPI_Datatype *t) {
    (void)t;
    int *a = in, *b = inout;
    for (int k = 0; k < *count; k++)
        for (int j = 0; j < 3; j++) if (a[6 * k + 2 * j] > b[6 * k + 2 * j]) b[6 * k + 2 * j] = a[6 * k + 2 * j];
}

static void user_ops_on_types_with_gaps(void) {
    MPI_Op op;
    MPI_Op_create(pair_sum, 1, &op);
    struct di p[5], q[5];
    for (int k = 0; k < 5; k++) { p[k].v = rank + 0.5 * k; p[k].i = k; }
    MPI_Allreduce(p, q, 5, MPI_DOUBLE_INT, op, MPI_COMM_WORLD);
    for (int k = 0; k < 5; k++)
        CHECK(q[k].v == size * (size - 1) / 2.0 + size * 0.5 * k && q[k].i == size * k, "user op on double int %d", k);
    MPI_Op_free(&op);
    MPI_Datatype v;
    MPI_Type_vector(3, 1, 2, MPI_INT, &v);
    MPI_Datatype vr;
    MPI_Type_create_resized(v, 0, 6 * sizeof(int), &vr);
    MPI_Type_commit(&vr);
    MPI_Op_create(strided_max, 1, &op);
    int x[24], y[24];
    for (int k = 0; k < 24; k++) { x[k] = (k % 2) ? -7 : (rank * 31 + k) % 17; y[k] = -7; }
    MPI_Allreduce(x, y, 4, vr, op, MPI_COMM_WORLD);
    for (int k = 0; k < 24; k += 2) {
        int want = 0;
        for (int r = 0; r < size; r++) if ((r * 31 + k) % 17 > want) want = (r * 31 + k) % 17;
        CHECK(y[k] == want && y[k + 1] == -7, "user op on a vector type %d", k);
    }
    MPI_Op_free(&op);
    MPI_Type_free(&vr);
    MPI_Type_free(&v);
}

static void reductions(void) {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    REDUCE(long double, MPI_LONG_DOUBLE, MPI_SUM, LD_SMALL, ADD, "long double sum");
    REDUCE(long double, MPI_LONG_DOUBLE, MPI_PROD, LD_TWO, MUL, "long double prod");
    REDUCE(long double, MPI_LONG_DOUBLE, MPI_MAX, LD_HALF, MAX, "long double max");
    REDUCE(long double, MPI_LONG_DOUBLE, MPI_MIN, LD_HALF, MIN, "long double min");
    REDUCE(long double, MPI_LONG_DOUBLE, MPI_LXOR, LD_ODD, LXOR, "long double lxor");
    REDUCE(float complex, MPI_C_FLOAT_COMPLEX, MPI_SUM, FC_SUM, ADD, "float complex sum");
    REDUCE(float complex, MPI_C_FLOAT_COMPLEX, MPI_PROD, FC_PROD, MUL, "float complex prod");
    REDUCE(double complex, MPI_C_DOUBLE_COMPLEX, MPI_SUM, DC_SUM, ADD, "double complex sum");
    REDUCE(double complex, MPI_C_DOUBLE_COMPLEX, MPI_PROD, DC_PROD, MUL, "double complex prod");
    REDUCE(double complex, MPI_DOUBLE_COMPLEX, MPI_PROD, DC_PROD, MUL, "Fortran double complex prod");
    REDUCE(long double complex, MPI_C_LONG_DOUBLE_COMPLEX, MPI_SUM, LDC_SUM, ADD, "long double complex sum");
    REDUCE(long double complex, MPI_C_LONG_DOUBLE_COMPLEX, MPI_PROD, LDC_PROD, MUL, "long double complex prod");
    REDUCE(bool, MPI_C_BOOL, MPI_LOR, BOOL_SOME, LOR, "bool lor");
    REDUCE(bool, MPI_C_BOOL, MPI_LAND, BOOL_ALL, LAND, "bool land");
    REDUCE(bool, MPI_C_BOOL, MPI_LXOR, BOOL_SOME, LXOR, "bool lxor");
    REDUCE(unsigned char, MPI_BYTE, MPI_BXOR, BYTE_OF, BXOR, "byte bxor");
    REDUCE(unsigned char, MPI_BYTE, MPI_BOR, BYTE_OF, BOR, "byte bor");
    REDUCE(unsigned char, MPI_BYTE, MPI_BAND, BYTE_OF, BAND, "byte band");
    REDUCE(int, MPI_LOGICAL, MPI_LXOR, FLOG, LXOR, "Fortran logical lxor");

    /* MINLOC/MAXLOC on the pair types, padding and all: values with ties so
     * the smaller index must win. */
    {
        struct ldi a[2] = {{(long double)(rank % 3), rank}, {-(long double)(rank % 3), rank}}, b[2];
        CHECK(MPI_Allreduce(a, b, 2, MPI_LONG_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD) == MPI_SUCCESS, "ldi maxloc");
        int top = size > 2 ? 2 : size - 1;
        CHECK(b[0].v == (long double)top && b[0].i == top && b[1].v == 0 && b[1].i == 0, "long double int maxloc");
        struct si c[3], d[3];
        for (int k = 0; k < 3; k++) { c[k].v = (short)((rank + k) % 4); c[k].i = rank; }
        CHECK(MPI_Allreduce(c, d, 3, MPI_SHORT_INT, MPI_MINLOC, MPI_COMM_WORLD) == MPI_SUCCESS, "si minloc");
        for (int k = 0; k < 3; k++) {
            int best = 0;
            for (int r = 1; r < size; r++) if ((r + k) % 4 < (best + k) % 4) best = r;
            CHECK(d[k].v == (best + k) % 4 && d[k].i == best, "short int minloc %d", k);
        }
        struct di e = {(double)((rank * 5) % 7), rank}, f;
        CHECK(MPI_Allreduce(&e, &f, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD) == MPI_SUCCESS, "di maxloc");
        int best = 0;
        for (int r = 1; r < size; r++) if ((r * 5) % 7 > (best * 5) % 7) best = r;
        CHECK(f.v == (best * 5) % 7 && f.i == best, "double int maxloc");
        struct li g = {-(long)rank, rank}, h;
        CHECK(MPI_Reduce(&g, &h, 1, MPI_LONG_INT, MPI_MINLOC, 0, MPI_COMM_WORLD) == MPI_SUCCESS, "li minloc");
        CHECK(rank != 0 || (h.v == -(long)(size - 1) && h.i == size - 1), "long int minloc");
    }

    /* Pairs MPI does not define fail with MPI_ERR_OP and name the pair. */
    {
        double complex z = 1, zr;
        double x = 1, xr;
        bool t = true, tr;
        unsigned char y = 1, yr;
        wchar_t w = L'a', wr;
        int cls;
        int rc = MPI_Allreduce(&z, &zr, 1, MPI_C_DOUBLE_COMPLEX, MPI_MAX, MPI_COMM_WORLD);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_OP, "MPI_MAX on complex: class %d", cls);
        rc = MPI_Allreduce(&x, &xr, 1, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_OP, "MPI_BAND on double: class %d", cls);
        rc = MPI_Allreduce(&t, &tr, 1, MPI_C_BOOL, MPI_SUM, MPI_COMM_WORLD);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_OP, "MPI_SUM on bool: class %d", cls);
        rc = MPI_Allreduce(&y, &yr, 1, MPI_BYTE, MPI_MAX, MPI_COMM_WORLD);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_OP, "MPI_MAX on byte: class %d", cls);
        rc = MPI_Allreduce(&w, &wr, 1, MPI_WCHAR, MPI_SUM, MPI_COMM_WORLD);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_OP, "MPI_SUM on wchar: class %d", cls);
        rc = MPI_Allreduce(&x, &xr, 1, MPI_DOUBLE, MPI_MINLOC, MPI_COMM_WORLD);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_OP, "MPI_MINLOC on double: class %d", cls);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    user_ops_on_types_with_gaps();
    if (rank == 0) printf("reductions ok\n");
}

/* The pair types: MPI_Type_size counts the data, the extent is the C
 * struct's; a pair moves as its two basic elements. */
static void pairs(void) {
    struct { MPI_Datatype t; int size; MPI_Aint extent; } p[] = {
        {MPI_FLOAT_INT, 8, 8}, {MPI_DOUBLE_INT, 12, sizeof(struct di)},
        {MPI_LONG_INT, 12, sizeof(struct li)}, {MPI_SHORT_INT, 6, sizeof(struct si)},
        {MPI_2INT, 8, 8}, {MPI_LONG_DOUBLE_INT, 20, sizeof(struct ldi)},
    };
    for (size_t k = 0; k < sizeof p / sizeof p[0]; k++) {
        int sz;
        MPI_Aint lb, ext;
        MPI_Type_size(p[k].t, &sz);
        MPI_Type_get_extent(p[k].t, &lb, &ext);
        CHECK(sz == p[k].size && lb == 0 && ext == p[k].extent, "pair %zu: size %d extent %ld", k, sz, (long)ext);
    }
    /* Two (double, int) pairs sent as a struct of four members arrive as two
     * MPI_DOUBLE_INT: four basic elements. */
    struct { double a; int b; double c; int d; } s = {1.5, 7, -2.5, 9};
    struct di r[2];
    int bl[4] = {1, 1, 1, 1};
    MPI_Aint disp[4] = {0, offsetof(struct di, i), sizeof(struct di), sizeof(struct di) + offsetof(struct di, i)};
    MPI_Datatype ty[4] = {MPI_DOUBLE, MPI_INT, MPI_DOUBLE, MPI_INT}, st;
    MPI_Type_create_struct(4, bl, disp, ty, &st);
    MPI_Type_commit(&st);
    MPI_Status status;
    MPI_Sendrecv(&s, 1, st, 0, 0, r, 2, MPI_DOUBLE_INT, 0, 0, MPI_COMM_SELF, &status);
    int count;
    MPI_Get_elements(&status, MPI_DOUBLE_INT, &count);
    CHECK(count == 4, "elements of two pairs: %d", count);
    MPI_Get_count(&status, MPI_DOUBLE_INT, &count);
    CHECK(count == 2, "count of two pairs: %d", count);
    CHECK(r[0].v == 1.5 && r[0].i == 7 && r[1].v == -2.5 && r[1].i == 9, "pair contents");
    MPI_Type_free(&st);
    /* Between ranks: a ring of MPI_SHORT_INT pairs (6 bytes each on the wire). */
    struct si out[2] = {{(short)rank, rank * 10}, {(short)-rank, rank * 20}}, in[2];
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Sendrecv(out, 2, MPI_SHORT_INT, next, 1, in, 2, MPI_SHORT_INT, prev, 1, MPI_COMM_WORLD, &status);
    MPI_Get_count(&status, MPI_BYTE, &count);
    CHECK(count == 12, "bytes of two short-int pairs: %d", count);
    CHECK(in[0].v == prev && in[0].i == prev * 10 && in[1].v == -prev && in[1].i == prev * 20, "short int ring");
    if (rank == 0) printf("pairs ok\n");
}

/* MPI_Type_get_name of predefined types, synonyms by their MPI names. */
static void names(void) {
    struct { MPI_Datatype t; const char *name; } n[] = {
        {MPI_COMPLEX, "MPI_COMPLEX"}, {MPI_LB, "MPI_LB"}, {MPI_UB, "MPI_UB"},
        {MPI_2REAL, "MPI_2REAL"}, {MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX"},
        {MPI_CXX_BOOL, "MPI_CXX_BOOL"}, {MPI_LOGICAL, "MPI_LOGICAL"}, {MPI_INTEGER8, "MPI_INTEGER8"},
        {MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT"}, {MPI_COUNT, "MPI_COUNT"},
        {MPI_C_FLOAT_COMPLEX, "MPI_C_COMPLEX"}, {MPI_LONG_LONG, "MPI_LONG_LONG_INT"},
    };
    for (size_t k = 0; k < sizeof n / sizeof n[0]; k++) {
        char got[MPI_MAX_OBJECT_NAME];
        int len;
        MPI_Type_get_name(n[k].t, got, &len);
        CHECK(strcmp(got, n[k].name) == 0 && len == (int)strlen(n[k].name), "name of %s: %s", n[k].name, got);
    }
    if (rank == 0) printf("names ok\n");
}

/* A structure's extent is padded to its widest member's C alignment: complex
 * numbers align as their parts, long double to 16. */
#define ALIGNED(T, MPIT) do { \
    struct s_ { char a; T b; }; \
    int bl_[2] = {1, 1}; \
    MPI_Aint d_[2] = {0, offsetof(struct s_, b)}, lb_, ext_; \
    MPI_Datatype t_[2] = {MPI_CHAR, MPI_DATATYPE_NULL}, st_; \
    MPI_Type_dup(MPIT, &t_[1]); \
    MPI_Type_create_struct(2, bl_, d_, t_, &st_); \
    MPI_Type_get_extent(st_, &lb_, &ext_); \
    CHECK(ext_ == sizeof(struct s_), "struct {char; %s}: extent %ld, C says %zu", #T, (long)ext_, sizeof(struct s_)); \
    MPI_Type_free(&t_[1]); \
    MPI_Type_free(&st_); \
} while (0)

static void alignment(void) {
    ALIGNED(float complex, MPI_C_FLOAT_COMPLEX);
    ALIGNED(double complex, MPI_C_DOUBLE_COMPLEX);
    ALIGNED(long double complex, MPI_C_LONG_DOUBLE_COMPLEX);
    ALIGNED(long double, MPI_LONG_DOUBLE);
    ALIGNED(double, MPI_DOUBLE);
    ALIGNED(short, MPI_SHORT);
    ALIGNED(bool, MPI_C_BOOL);
    ALIGNED(struct di, MPI_DOUBLE_INT);
    /* A derived type of complex numbers sent between ranks keeps its layout. */
    struct zc { char c; double complex z; } a[3], b[3];
    int bl[2] = {1, 1};
    MPI_Aint d[2] = {offsetof(struct zc, c), offsetof(struct zc, z)}, lb, ext;
    MPI_Datatype t[2] = {MPI_CHAR, MPI_C_DOUBLE_COMPLEX}, st;
    MPI_Type_create_struct(2, bl, d, t, &st);
    MPI_Type_commit(&st);
    MPI_Type_get_extent(st, &lb, &ext);
    CHECK(ext == sizeof(struct zc), "struct zc extent %ld", (long)ext);
    for (int k = 0; k < 3; k++) { a[k].c = (char)('a' + rank % 26); a[k].z = rank + k * I; }
    memset(b, 0, sizeof b);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Sendrecv(a, 3, st, next, 2, b, 3, st, prev, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int k = 0; k < 3; k++)
        CHECK(b[k].c == 'a' + prev % 26 && b[k].z == prev + k * I, "complex struct %d", k);
    MPI_Type_free(&st);
    if (rank == 0) printf("alignment ok\n");
}

/* external32: big-endian, long in 4 bytes, long double as IEEE binary128,
 * each part of a complex number on its own. */
static void external32(void) {
    long l[2] = {1, -2};
    unsigned char buf[64];
    MPI_Aint pos = 0, sz;
    MPI_Pack_external_size("external32", 2, MPI_LONG, &sz);
    CHECK(sz == 8, "external size of 2 longs: %ld", (long)sz);
    MPI_Pack_external("external32", l, 2, MPI_LONG, buf, sizeof buf, &pos);
    const unsigned char lw[8] = {0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe};
    CHECK(pos == 8 && memcmp(buf, lw, 8) == 0, "external longs");
    long lb[2];
    pos = 0;
    MPI_Unpack_external("external32", buf, sizeof buf, &pos, lb, 2, MPI_LONG);
    CHECK(pos == 8 && lb[0] == 1 && lb[1] == -2, "longs back");

    long double ld[2] = {1.0L, -2.5L}, ldb[2];
    pos = 0;
    MPI_Pack_external("external32", ld, 2, MPI_LONG_DOUBLE, buf, sizeof buf, &pos);
    const unsigned char one[16] = {0x3f, 0xff}, m25[16] = {0xc0, 0x00, 0x40};
    CHECK(pos == 32 && memcmp(buf, one, 16) == 0 && memcmp(buf + 16, m25, 16) == 0, "external long doubles");
    pos = 0;
    MPI_Unpack_external("external32", buf, sizeof buf, &pos, ldb, 2, MPI_LONG_DOUBLE);
    CHECK(ldb[0] == 1.0L && ldb[1] == -2.5L, "long doubles back");

    float complex fc = 1.0f + 2.0f * I, fcb;
    pos = 0;
    MPI_Pack_external("external32", &fc, 1, MPI_C_FLOAT_COMPLEX, buf, sizeof buf, &pos);
    const unsigned char fw[8] = {0x3f, 0x80, 0, 0, 0x40, 0, 0, 0};
    CHECK(pos == 8 && memcmp(buf, fw, 8) == 0, "external float complex");
    pos = 0;
    MPI_Unpack_external("external32", buf, sizeof buf, &pos, &fcb, 1, MPI_C_FLOAT_COMPLEX);
    CHECK(fcb == fc, "float complex back");

    /* A pair of (long, int): 4 + 4 bytes. */
    struct li p = {-3, 5}, pb;
    MPI_Pack_external_size("external32", 1, MPI_LONG_INT, &sz);
    CHECK(sz == 8, "external size of a long-int pair: %ld", (long)sz);
    pos = 0;
    MPI_Pack_external("external32", &p, 1, MPI_LONG_INT, buf, sizeof buf, &pos);
    pos = 0;
    MPI_Unpack_external("external32", buf, sizeof buf, &pos, &pb, 1, MPI_LONG_INT);
    CHECK(pb.v == -3 && pb.i == 5, "long int pair back");
    if (rank == 0) printf("external32 ok\n");
}

/* Derived datatype handles: a freed handle goes to the next new type (last
 * freed first, as MPICH does: programs rely on it), without its name; a type
 * freed after MPI_Send_init/MPI_Recv_init serves the persistent request for
 * as long as it lives, its handle not given to another type meanwhile. */
static void handles(void) {
    MPI_Datatype a, b, c;
    MPI_Type_contiguous(2, MPI_INT, &a);
    MPI_Type_contiguous(3, MPI_INT, &b);
    MPI_Type_set_name(b, "three ints");
    MPI_Datatype was_a = a, was_b = b;
    MPI_Type_free(&a);
    MPI_Type_free(&b);
    CHECK(a == MPI_DATATYPE_NULL && b == MPI_DATATYPE_NULL, "freed handles are nulled");
    MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &c);
    CHECK(c == was_b, "the last freed handle is reused");
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Type_get_name(c, name, &len);
    CHECK(len == 0, "a reused handle has no name: %s", name);
    MPI_Type_free(&c);
    (void)was_a;

    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Datatype st, rt;
    MPI_Type_dup(MPI_INT, &st);
    MPI_Type_contiguous(2, MPI_SHORT, &rt);
    MPI_Type_commit(&rt);
    int v[2] = {0, 0};
    short w[4] = {0, 0, 0, 0};
    MPI_Request req[2];
    MPI_Send_init(v, 2, st, next, 5, MPI_COMM_WORLD, &req[0]);
    MPI_Recv_init(w, 2, rt, prev, 5, MPI_COMM_WORLD, &req[1]);
    MPI_Datatype held_s = st, held_r = rt;
    MPI_Type_free(&st);
    MPI_Type_free(&rt);
    MPI_Datatype other;
    MPI_Type_contiguous(4, MPI_CHAR, &other);
    CHECK(other != held_s && other != held_r, "a handle a persistent request holds is not reused");
    for (int it = 0; it < 3; it++) {
        v[0] = rank * 100 + it;
        v[1] = -v[0];
        MPI_Startall(2, req);
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
        int got[2];
        memcpy(got, w, sizeof got);
        CHECK(got[0] == prev * 100 + it && got[1] == -got[0], "persistent round %d", it);
    }
    MPI_Request_free(&req[0]);
    MPI_Request_free(&req[1]);
    MPI_Type_free(&other);
    if (rank == 0) printf("handles ok\n");
}

/* MPI-4's large-count (_c) calls: types of more than INT_MAX bytes described
 * exactly; counts within int through the ordinary paths; MPI_Type_size says
 * MPI_UNDEFINED where an int cannot hold the size. */
static void large_count(void) {
    const MPI_Count big = (MPI_Count)5 << 30;
    MPI_Datatype t;
    MPI_Count sz, lb, ext;
    MPI_Type_contiguous_c(big, MPI_CHAR, &t);
    MPI_Type_commit(&t);
    MPI_Type_size_c(t, &sz);
    MPI_Type_get_true_extent_c(t, &lb, &ext);
    CHECK(sz == big && lb == 0 && ext == big, "contiguous_c: size %lld extent %lld", (long long)sz, (long long)ext);
    int isz;
    MPI_Type_size(t, &isz);
    CHECK(isz == MPI_UNDEFINED, "MPI_Type_size beyond int: %d", isz);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int ni, na, nd, comb, cls;
    int rc = MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TYPE, "envelope of a count beyond int: class %d", cls);
    MPI_Datatype bad;
    rc = MPI_Type_contiguous_c(-1, MPI_INT, &bad);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COUNT, "negative count: class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Type_free(&t);

    MPI_Count bl[3] = {0, 7, ((MPI_Count)3 << 30) + 1}, d[3] = {0, 0, 7};
    MPI_Type_create_hindexed_c(3, bl, d, MPI_CHAR, &t);
    MPI_Type_size_c(t, &sz);
    MPI_Type_get_extent_c(t, &lb, &ext);
    CHECK(sz == bl[1] + bl[2] && lb == 0 && ext == sz, "hindexed_c: size %lld", (long long)sz);
    MPI_Type_free(&t);
    MPI_Count ds[4] = {0, 1 << 28, 2 << 28, 3 << 28};
    MPI_Type_create_indexed_block_c(4, 1 << 28, ds, MPI_INT, &t);
    MPI_Type_size_c(t, &sz);
    CHECK(sz == (MPI_Count)4 << 30, "indexed_block_c: size %lld", (long long)sz);
    MPI_Type_free(&t);
    /* Within int: the envelope is the ordinary constructor's. */
    MPI_Type_contiguous_c(3, MPI_DOUBLE, &t);
    MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
    int ints[1];
    MPI_Aint aints[1];
    MPI_Datatype types[1];
    MPI_Type_get_contents(t, 1, 0, 1, ints, aints, types);
    CHECK(comb == MPI_COMBINER_CONTIGUOUS && ni == 1 && ints[0] == 3 && types[0] == MPI_DOUBLE, "envelope of contiguous_c");
    MPI_Type_free(&t);

    /* Point-to-point, broadcast and alltoallv with MPI_Count arguments. */
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    double out[100], in[100];
    for (int k = 0; k < 100; k++) out[k] = rank * 1000 + k;
    MPI_Request r;
    MPI_Irecv(in, 100, MPI_DOUBLE, prev, 9, MPI_COMM_WORLD, &r);
    MPI_Send_c(out, 100, MPI_DOUBLE, next, 9, MPI_COMM_WORLD);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    for (int k = 0; k < 100; k++) CHECK(in[k] == prev * 1000 + k, "send_c %d", k);
    MPI_Status st;
    MPI_Isend(out, 50, MPI_DOUBLE, next, 10, MPI_COMM_WORLD, &r);
    MPI_Recv_c(in, 100, MPI_DOUBLE, prev, 10, MPI_COMM_WORLD, &st);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Count got;
    MPI_Get_count_c(&st, MPI_DOUBLE, &got);
    CHECK(got == 50 && in[49] == prev * 1000 + 49, "recv_c count %lld", (long long)got);
    long v[3] = {rank, rank, rank};
    MPI_Bcast_c(v, 3, MPI_LONG, size - 1, MPI_COMM_WORLD);
    CHECK(v[0] == size - 1 && v[2] == size - 1, "bcast_c");
    MPI_Count *cnt = malloc(size * sizeof *cnt);
    MPI_Aint *dsp = malloc(size * sizeof *dsp);
    int *sb = malloc(3 * size * sizeof *sb), *rb = malloc(3 * size * sizeof *rb);
    for (int j = 0; j < size; j++) {
        cnt[j] = 2;
        dsp[j] = 3 * j;
        sb[3 * j] = rank * 100 + j;
        sb[3 * j + 1] = -(rank * 100 + j);
        rb[3 * j] = rb[3 * j + 1] = rb[3 * j + 2] = -1;
    }
    MPI_Alltoallv_c(sb, cnt, dsp, MPI_INT, rb, cnt, dsp, MPI_INT, MPI_COMM_WORLD);
    for (int j = 0; j < size; j++)
        CHECK(rb[3 * j] == j * 100 + rank && rb[3 * j + 1] == -(j * 100 + rank) && rb[3 * j + 2] == -1, "alltoallv_c %d", j);
    free(cnt); free(dsp); free(sb); free(rb);
    if (rank == 0) printf("large count ok\n");
}

/* A message of more than INT_MAX elements, rank 0 to rank 1 (about 2 GiB at
 * each end: run only when asked, with two ranks). */
static void huge_message(void) {
    const MPI_Count n = (MPI_Count)INT_MAX + 4097;
    if (rank < 2) {
        unsigned char *b = malloc(n);
        CHECK(b != NULL, "2 GiB buffer");
        if (rank == 0) {
            for (MPI_Count k = 0; k < n; k += 4096) b[k] = (unsigned char)(k >> 12);
            b[n - 1] = 0xab;
            MPI_Send_c(b, n, MPI_BYTE, 1, 11, MPI_COMM_WORLD);
        } else {
            memset(b, 0, n);
            MPI_Status st;
            MPI_Recv_c(b, n, MPI_BYTE, 0, 11, MPI_COMM_WORLD, &st);
            MPI_Count got;
            MPI_Get_count_c(&st, MPI_BYTE, &got);
            CHECK(got == n, "received %lld bytes", (long long)got);
            for (MPI_Count k = 0; k < n; k += 4096) CHECK(b[k] == (unsigned char)(k >> 12), "byte %lld", (long long)k);
            CHECK(b[n - 1] == 0xab, "last byte");
        }
        free(b);
    }
    if (rank == 0) printf("huge message ok\n");
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    reductions();
    pairs();
    names();
    alignment();
    external32();
    handles();
    large_count();
    if (argc > 1 && strcmp(argv[1], "huge") == 0) huge_message();
    MPI_Finalize();
    return 0;
}
