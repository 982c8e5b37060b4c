/* MPI-IO: opening and closing, explicit offsets, views with derived
 * filetypes, collective, non-blocking and split accesses, individual and
 * shared file pointers, atomic mode, file error handlers and classes.
 * Files go to $TMPDIR (or /tmp). Prints one line per part (rank 0) when
 * every check passed on every rank; a failed check prints what and exits 1. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int rank, size;
static char dir[512];

#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "rank %d: %s:%d: ", rank, __FILE__, __LINE__);   \
            fprintf(stderr, __VA_ARGS__);                                    \
            fprintf(stderr, "\n");                                           \
            MPI_Abort(MPI_COMM_WORLD, 1);                                    \
        }                                                                    \
    } while (0)

#define OK(call) CHECK((call) == MPI_SUCCESS, "%s failed", #call)

static void done(const char *part) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s ok\n", part);
    fflush(stdout);
}

static int class_of(int code) {
    int c;
    MPI_Error_class(code, &c);
    return c;
}

/* A name in the job's directory, the same on every rank. */
static void name(char *out, const char *what) {
    snprintf(out, 600, "%s/%s", dir, what);
}

enum { N = 64 };

/* Each rank writes its block at an explicit offset, reads its right
 * neighbour's; size, set_size, preallocate, delete on close. */
static void explicit_offsets(void) {
    char f[600];
    name(f, "explicit");
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, f, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    int out[N], in[N];
    for (int i = 0; i < N; i++)
        out[i] = rank * 1000 + i;
    MPI_Status st;
    OK(MPI_File_write_at(fh, (MPI_Offset)rank * sizeof out, out, N, MPI_INT, &st));
    int count;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == N, "wrote %d ints", count);
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_sync(fh));
    int right = (rank + 1) % size;
    OK(MPI_File_read_at(fh, (MPI_Offset)right * sizeof in, in, N, MPI_INT, &st));
    for (int i = 0; i < N; i++)
        CHECK(in[i] == right * 1000 + i, "read %d at %d from rank %d's block", in[i], i, right);
    MPI_Offset sz;
    OK(MPI_File_get_size(fh, &sz));
    CHECK(sz == (MPI_Offset)size * sizeof out, "size %lld", (long long)sz);
    /* Reading past the end: what is there. */
    OK(MPI_File_read_at(fh, sz - 8, in, N, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 2, "read %d ints at the end", count);
    OK(MPI_File_set_size(fh, 100));
    OK(MPI_File_get_size(fh, &sz));
    CHECK(sz == 100, "size after set_size %lld", (long long)sz);
    OK(MPI_File_preallocate(fh, 4096));
    OK(MPI_File_get_size(fh, &sz));
    CHECK(sz == 4096, "size after preallocate %lld", (long long)sz);
    OK(MPI_File_preallocate(fh, 10));
    OK(MPI_File_get_size(fh, &sz));
    CHECK(sz == 4096, "preallocate shrank the file to %lld", (long long)sz);
    int amode;
    MPI_File_get_amode(fh, &amode);
    CHECK(amode == (MPI_MODE_CREATE | MPI_MODE_RDWR), "amode %d", amode);
    MPI_Group g, wg;
    int cmp;
    MPI_File_get_group(fh, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_compare(g, wg, &cmp);
    CHECK(cmp == MPI_IDENT, "file group compares %d", cmp);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    OK(MPI_File_close(&fh));
    CHECK(fh == MPI_FILE_NULL, "closed handle");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        OK(MPI_File_delete(f, MPI_INFO_NULL));
    /* Delete on close. */
    name(f, "doomed");
    OK(MPI_File_open(MPI_COMM_WORLD, f, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE,
                     MPI_INFO_NULL, &fh));
    OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(access(f, F_OK) != 0, "%s still exists after a close with MPI_MODE_DELETE_ON_CLOSE", f);
    done("explicit offsets");
}

/* Block-cyclic views: rank r owns ints r*B..r*B+B-1 of every size*B. */
static void views(void) {
    enum { B = 3, ROUNDS = 5 };
    char f[600];
    name(f, "views");
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, f, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_Datatype contig, filetype;
    MPI_Type_contiguous(B, MPI_INT, &contig);
    MPI_Type_create_resized(contig, 0, (MPI_Aint)size * B * sizeof(int), &filetype);
    MPI_Type_commit(&filetype);
    OK(MPI_File_set_view(fh, (MPI_Offset)rank * B * sizeof(int), MPI_INT, filetype, "native", MPI_INFO_NULL));
    int out[B * ROUNDS];
    for (int i = 0; i < B * ROUNDS; i++)
        out[i] = rank * 1000 + i;
    /* Individual pointer: two writes continue one another. */
    OK(MPI_File_write(fh, out, 4, MPI_INT, MPI_STATUS_IGNORE));
    MPI_Offset pos;
    MPI_File_get_position(fh, &pos);
    CHECK(pos == 4, "position %lld after 4 ints", (long long)pos);
    OK(MPI_File_write_all(fh, out + 4, B * ROUNDS - 4, MPI_INT, MPI_STATUS_IGNORE));
    MPI_Offset byte;
    MPI_File_get_byte_offset(fh, B + 1, &byte);
    CHECK(byte == ((MPI_Offset)size * B + rank * B + 1) * sizeof(int), "byte offset %lld", (long long)byte);
    /* The view's types come back; a derived one as a new handle. */
    MPI_Offset disp;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_File_get_view(fh, &disp, &et, &ft, rep);
    CHECK(disp == (MPI_Offset)rank * B * sizeof(int) && et == MPI_INT && strcmp(rep, "native") == 0,
          "view %lld %s", (long long)disp, rep);
    MPI_Aint lb, ext;
    MPI_Type_get_extent(ft, &lb, &ext);
    CHECK(ext == (MPI_Aint)size * B * sizeof(int), "filetype extent %ld", (long)ext);
    MPI_Type_free(&ft);
    /* The end of the file in the view's etypes. */
    OK(MPI_File_seek(fh, 0, MPI_SEEK_END));
    MPI_File_get_position(fh, &pos);
    CHECK(pos == B * ROUNDS, "end of file at %lld etypes", (long long)pos);
    OK(MPI_File_seek(fh, -2, MPI_SEEK_CUR));
    int two[2];
    OK(MPI_File_read(fh, two, 2, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(two[0] == out[B * ROUNDS - 2] && two[1] == out[B * ROUNDS - 1], "read back %d %d", two[0], two[1]);
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_sync(fh));
    /* The whole file through the byte view: every rank's blocks interleaved. */
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    int total = size * B * ROUNDS;
    int *all = malloc(total * sizeof(int));
    OK(MPI_File_read_at_all(fh, 0, all, total, MPI_INT, MPI_STATUS_IGNORE));
    for (int i = 0; i < total; i++) {
        int owner = (i / B) % size, k = (i / (B * size)) * B + i % B;
        CHECK(all[i] == owner * 1000 + k, "int %d is %d, not rank %d's %d", i, all[i], owner, k);
    }
    free(all);
    MPI_Type_free(&contig);
    MPI_Type_free(&filetype);
    OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_File_delete(f, MPI_INFO_NULL);
    done("views");
}

/* Collective accesses from strided memory, non-blocking and split. */
static void collective(void) {
    char f[600];
    name(f, "collective");
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, f, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    /* Memory: every other int of a 2N array. */
    int mem[2 * N], back[2 * N];
    for (int i = 0; i < 2 * N; i++)
        mem[i] = i % 2 ? -1 : rank * 1000 + i / 2;
    MPI_Datatype every_other;
    MPI_Type_vector(N, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    MPI_Offset at = (MPI_Offset)rank * N * sizeof(int);
    MPI_Status st;
    OK(MPI_File_write_at_all(fh, at, mem, 1, every_other, &st));
    int count;
    MPI_Get_count(&st, every_other, &count);
    CHECK(count == 1, "count %d", count);
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_sync(fh));
    int right = (rank + 1) % size, in[N];
    OK(MPI_File_read_at_all(fh, (MPI_Offset)right * N * sizeof(int), in, N, MPI_INT, MPI_STATUS_IGNORE));
    for (int i = 0; i < N; i++)
        CHECK(in[i] == right * 1000 + i, "collective read %d at %d", in[i], i);
    /* Non-blocking collective and independent, completed together. */
    MPI_Request rq[2];
    int second[N];
    for (int i = 0; i < N; i++)
        second[i] = rank * 7 + i;
    MPI_Offset tail = (MPI_Offset)size * N * sizeof(int);
    OK(MPI_File_iwrite_at_all(fh, tail + at, second, N, MPI_INT, &rq[0]));
    OK(MPI_File_iwrite_at(fh, at, mem, 1, every_other, &rq[1]));
    OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_sync(fh));
    memset(back, 0, sizeof back);
    OK(MPI_File_iread_at_all(fh, tail + at, back, 1, every_other, &rq[0]));
    OK(MPI_Wait(&rq[0], &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == N, "iread_at_all count %d", count);
    for (int i = 0; i < N; i++)
        CHECK(back[2 * i] == second[i] && back[2 * i + 1] == 0, "iread_at_all into strided memory at %d", i);
    /* Split collective. */
    OK(MPI_File_read_at_all_begin(fh, at, in, N, MPI_INT));
    CHECK(MPI_File_read_at_all_begin(fh, at, in, N, MPI_INT) != MPI_SUCCESS, "two split collectives at once");
    OK(MPI_File_read_at_all_end(fh, in, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == N && in[5] == rank * 1000 + 5, "split read %d %d", count, in[5]);
    OK(MPI_File_seek(fh, at, MPI_SEEK_SET));
    OK(MPI_File_write_all_begin(fh, second, N, MPI_INT));
    OK(MPI_File_write_all_end(fh, second, MPI_STATUS_IGNORE));
    OK(MPI_File_read_at(fh, at, in, N, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(in[3] == second[3], "split write landed: %d", in[3]);
    MPI_Type_free(&every_other);
    OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_File_delete(f, MPI_INFO_NULL);
    done("collective");
}

/* Shared file pointer: unordered records, then ordered ones. */
static void shared_pointers(void) {
    char f[600];
    name(f, "shared");
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, f, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    int rec[2] = {rank, rank * rank};
    for (int k = 0; k < 3; k++)
        OK(MPI_File_write_shared(fh, rec, 2, MPI_INT, MPI_STATUS_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Offset pos;
    OK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == (MPI_Offset)size * 6 * sizeof(int), "shared position %lld", (long long)pos);
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_sync(fh));
    /* Each rank's record three times, whole, somewhere. */
    int *all = malloc(size * 6 * sizeof(int)), *seen = calloc(size, sizeof(int));
    OK(MPI_File_read_at(fh, 0, all, size * 6, MPI_INT, MPI_STATUS_IGNORE));
    for (int i = 0; i < size * 3; i++) {
        int r = all[2 * i];
        CHECK(r >= 0 && r < size && all[2 * i + 1] == r * r, "record %d: %d %d", i, r, all[2 * i + 1]);
        seen[r]++;
    }
    for (int r = 0; r < size; r++)
        CHECK(seen[r] == 3, "rank %d's record seen %d times", r, seen[r]);
    /* Ordered: rank r writes r+1 ints after the ranks before it. */
    OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    int mine[64];
    for (int i = 0; i <= rank; i++)
        mine[i] = rank;
    OK(MPI_File_write_ordered(fh, mine, rank + 1, MPI_INT, MPI_STATUS_IGNORE));
    OK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == (MPI_Offset)size * (size + 1) / 2 * sizeof(int), "after ordered %lld", (long long)pos);
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_sync(fh));
    OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    int got[64];
    OK(MPI_File_read_ordered(fh, got, rank + 1, MPI_INT, MPI_STATUS_IGNORE));
    for (int i = 0; i <= rank; i++)
        CHECK(got[i] == rank, "ordered read %d at %d", got[i], i);
    OK(MPI_File_read_ordered_begin(fh, got, 1, MPI_INT));
    OK(MPI_File_read_ordered_end(fh, got, MPI_STATUS_IGNORE));
    free(all);
    free(seen);
    OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_File_delete(f, MPI_INFO_NULL);
    done("shared pointers");
}

/* Atomic mode: every rank writes whole records over the same place; each
 * record read back is one rank's, whole. */
static void atomicity(void) {
    enum { R = 4096 };
    char f[600];
    name(f, "atomic");
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, f, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_atomicity(fh, 1));
    int flag;
    MPI_File_get_atomicity(fh, &flag);
    CHECK(flag == 1, "atomicity %d", flag);
    int *rec = malloc(R * sizeof(int)), *got = malloc(R * sizeof(int));
    for (int k = 0; k < 20; k++) {
        for (int i = 0; i < R; i++)
            rec[i] = rank;
        OK(MPI_File_write_at(fh, 0, rec, R, MPI_INT, MPI_STATUS_IGNORE));
        OK(MPI_File_read_at(fh, 0, got, R, MPI_INT, MPI_STATUS_IGNORE));
        for (int i = 1; i < R; i++)
            CHECK(got[i] == got[0], "torn record: int %d is %d, int 0 is %d", i, got[i], got[0]);
    }
    free(rec);
    free(got);
    OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_File_delete(f, MPI_INFO_NULL);
    done("atomicity");
}

static int handled, handled_class;
static void on_file_error(MPI_File *fh, int *code, ...) {
    (void)fh;
    handled++;
    handled_class = class_of(*code);
}

/* Classes of the errors MPI-IO defines; handlers on files and on MPI_FILE_NULL. */
static void errors(void) {
    char f[600], missing[600];
    name(f, "errors");
    name(missing, "no/such/file");
    MPI_File fh;
    /* Files return errors by default. */
    int rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(class_of(rc) == MPI_ERR_NO_SUCH_FILE, "open of a missing file: class %d", class_of(rc));
    rc = MPI_File_open(MPI_COMM_WORLD, f, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh);
    CHECK(class_of(rc) == MPI_ERR_AMODE, "RDONLY|CREATE: class %d", class_of(rc));
    rc = MPI_File_open(MPI_COMM_WORLD, f, MPI_MODE_RDWR | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    CHECK(class_of(rc) == MPI_ERR_AMODE, "RDWR|WRONLY: class %d", class_of(rc));
    OK(MPI_File_open(MPI_COMM_WORLD, f, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    OK(MPI_File_close(&fh));
    rc = MPI_File_open(MPI_COMM_WORLD, f, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    CHECK(class_of(rc) == MPI_ERR_FILE_EXISTS, "EXCL on an existing file: class %d", class_of(rc));
    /* A user handler on MPI_FILE_NULL sees open's errors. */
    MPI_Errhandler eh;
    MPI_File_create_errhandler(on_file_error, &eh);
    MPI_File_set_errhandler(MPI_FILE_NULL, eh);
    rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(handled == 1 && handled_class == MPI_ERR_NO_SUCH_FILE, "handler on MPI_FILE_NULL: %d %d", handled,
          handled_class);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    /* Wrong access for the mode; the file's own handler. */
    OK(MPI_File_open(MPI_COMM_WORLD, f, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    int x = 0;
    rc = MPI_File_read_at(fh, 0, &x, 1, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(class_of(rc) == MPI_ERR_ACCESS, "read on WRONLY: class %d", class_of(rc));
    MPI_File_set_errhandler(fh, eh);
    MPI_Errhandler got;
    MPI_File_get_errhandler(fh, &got);
    CHECK(got == eh, "file error handler");
    rc = MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "no-such-representation", MPI_INFO_NULL);
    CHECK(handled == 2 && handled_class == MPI_ERR_UNSUPPORTED_DATAREP, "unknown datarep: %d %d", handled,
          handled_class);
    MPI_File_call_errhandler(fh, MPI_ERR_IO);
    CHECK(handled == 3 && handled_class == MPI_ERR_IO, "call_errhandler: %d %d", handled, handled_class);
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    rc = MPI_File_seek(fh, -1, MPI_SEEK_SET);
    CHECK(class_of(rc) != MPI_SUCCESS, "seek before the start succeeded");
    OK(MPI_File_close(&fh));
    OK(MPI_File_open(MPI_COMM_WORLD, f, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    rc = MPI_File_write_at(fh, 0, &x, 1, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(class_of(rc) == MPI_ERR_READ_ONLY, "write on RDONLY: class %d", class_of(rc));
    MPI_Info info;
    OK(MPI_File_get_info(fh, &info));
    int nkeys;
    MPI_Info_get_nkeys(info, &nkeys);
    CHECK(nkeys > 0, "no hints");
    MPI_Info_free(&info);
    OK(MPI_File_close(&fh));
    rc = MPI_File_read_at(fh, 0, &x, 1, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(class_of(rc) == MPI_ERR_FILE, "access to a closed file: class %d", class_of(rc));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        OK(MPI_File_delete(f, MPI_INFO_NULL));
        rc = MPI_File_delete(f, MPI_INFO_NULL);
        CHECK(class_of(rc) == MPI_ERR_NO_SUCH_FILE, "second delete: class %d", class_of(rc));
    }
    MPI_Errhandler_free(&eh);
    done("errors");
}

/* external32: big-endian in the file, native in memory. */
static void external32(void) {
    char f[600];
    name(f, "external32");
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, f, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
    int v[2] = {0x01020304, rank}, w[2];
    OK(MPI_File_write_at_all(fh, 2 * rank, v, 2, MPI_INT, MPI_STATUS_IGNORE));
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_sync(fh));
    OK(MPI_File_read_at(fh, 2 * rank, w, 2, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(w[0] == v[0] && w[1] == rank, "external32 read back %x %d", w[0], w[1]);
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    unsigned char raw[8];
    OK(MPI_File_read_at(fh, 8 * rank, raw, 8, MPI_BYTE, MPI_STATUS_IGNORE));
    CHECK(raw[0] == 1 && raw[3] == 4 && raw[7] == (unsigned char)rank, "external32 bytes %d %d %d", raw[0], raw[3],
          raw[7]);
    /* MPI_LONG has 4 bytes in external32: refused, named. */
    int rc = MPI_File_set_view(fh, 0, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL);
    CHECK(class_of(rc) == MPI_ERR_UNSUPPORTED_DATAREP, "external32 MPI_LONG: class %d", class_of(rc));
    OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_File_delete(f, MPI_INFO_NULL);
    done("external32");
}

/* Each rank its own file on MPI_COMM_SELF, with MPI_MODE_APPEND. */
static void self_files(void) {
    char f[600], what[64];
    snprintf(what, sizeof what, "self-%d", rank);
    name(f, what);
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_SELF, f, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    OK(MPI_File_write(fh, "abc", 3, MPI_CHAR, MPI_STATUS_IGNORE));
    OK(MPI_File_close(&fh));
    OK(MPI_File_open(MPI_COMM_SELF, f, MPI_MODE_WRONLY | MPI_MODE_APPEND, MPI_INFO_NULL, &fh));
    OK(MPI_File_write(fh, "de", 2, MPI_CHAR, MPI_STATUS_IGNORE));
    OK(MPI_File_close(&fh));
    OK(MPI_File_open(MPI_COMM_SELF, f, MPI_MODE_RDONLY | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    char got[8] = {0};
    MPI_Status st;
    OK(MPI_File_read(fh, got, 8, MPI_CHAR, &st));
    int count;
    MPI_Get_count(&st, MPI_CHAR, &count);
    CHECK(count == 5 && memcmp(got, "abcde", 5) == 0, "appended file holds %d bytes: %.5s", count, got);
    OK(MPI_File_close(&fh));
    done("self files");
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* One directory per job: rank 0's pid names it. */
    const char *tmp = getenv("TMPDIR");
    int pid = getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(dir, sizeof dir, "%s/mpcrs-io-test-%d", tmp && *tmp ? tmp : "/tmp", pid);
    if (rank == 0)
        CHECK(mkdir(dir, 0700) == 0, "mkdir %s", dir);
    MPI_Barrier(MPI_COMM_WORLD);
    explicit_offsets();
    views();
    collective();
    shared_pointers();
    atomicity();
    errors();
    external32();
    self_files();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        rmdir(dir);
    MPI_Finalize();
    return 0;
}
