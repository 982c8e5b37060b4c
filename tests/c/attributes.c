/* Attribute caching: callbacks that fail, keyvals freed while attributes
 * still use them, and the deletion of MPI_COMM_SELF's and MPI_COMM_WORLD's
 * attributes at the start of MPI_Finalize, last set first. */
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

/* Callbacks that fail unless allowed. */
static int allow_delete = 0;
static int failing_copy(MPI_Comm c, int k, void *extra, void *in, void *out, int *flag) {
    (void)c; (void)k; (void)extra; (void)in; (void)out;
    *flag = 1;
    return MPI_ERR_OTHER;
}
static int failing_delete(MPI_Comm c, int k, void *v, void *extra) {
    (void)c; (void)k; (void)v; (void)extra;
    return allow_delete ? MPI_SUCCESS : MPI_ERR_OTHER;
}

/* Callbacks that count in the int the attribute points to. */
static int counting_copy(MPI_Comm c, int k, void *extra, void *in, void *out, int *flag) {
    (void)c; (void)k; (void)extra;
    *(void **)out = in;
    *(int *)in += 1;
    *flag = 1;
    return MPI_SUCCESS;
}
static int counting_delete(MPI_Comm c, int k, void *v, void *extra) {
    (void)c; (void)k; (void)extra;
    *(int *)v -= 1;
    return MPI_SUCCESS;
}

static void failing_callbacks(void) {
    MPI_Comm dup, d2;
    int key, rc, flag;
    void *v;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    MPI_Comm_create_keyval(failing_copy, failing_delete, &key, NULL);
    CHECK(MPI_Comm_set_attr(dup, key, (void *)1) == MPI_SUCCESS, "first set");
    rc = MPI_Comm_set_attr(dup, key, (void *)2);
    CHECK(rc != MPI_SUCCESS && class_of(rc) == MPI_ERR_OTHER, "replacing: delete callback's error");
    MPI_Comm_get_attr(dup, key, &v, &flag);
    CHECK(flag && v == (void *)1, "old value kept when its delete fails");
    rc = MPI_Comm_delete_attr(dup, key);
    CHECK(class_of(rc) == MPI_ERR_OTHER, "delete: callback's error");
    MPI_Comm_get_attr(dup, key, &v, &flag);
    CHECK(flag, "attribute kept when its delete fails");
    d2 = MPI_COMM_WORLD;
    rc = MPI_Comm_dup(dup, &d2);
    CHECK(rc != MPI_SUCCESS && class_of(rc) == MPI_ERR_OTHER, "dup: copy callback's error");
    CHECK(d2 == MPI_COMM_NULL, "no communicator from a failed dup");
    allow_delete = 1;
    CHECK(MPI_Comm_free(&dup) == MPI_SUCCESS, "free runs the delete callback");
    MPI_Comm_free_keyval(&key);

    /* The same for datatypes: their errors go to MPI_COMM_WORLD's handler. */
    MPI_Datatype t, t2;
    allow_delete = 0;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Type_dup(MPI_DOUBLE, &t);
    MPI_Type_create_keyval((MPI_Type_copy_attr_function *)failing_copy,
                           (MPI_Type_delete_attr_function *)failing_delete, &key, NULL);
    MPI_Type_set_attr(t, key, (void *)1);
    CHECK(MPI_Type_set_attr(t, key, (void *)2) != MPI_SUCCESS, "type replace fails");
    CHECK(MPI_Type_delete_attr(t, key) != MPI_SUCCESS, "type delete fails");
    rc = MPI_Type_dup(t, &t2);
    CHECK(class_of(rc) == MPI_ERR_OTHER && t2 == MPI_DATATYPE_NULL, "type dup fails");
    /* A type keyval is not a communicator keyval. */
    rc = MPI_Comm_set_attr(MPI_COMM_WORLD, key, NULL);
    CHECK(class_of(rc) == MPI_ERR_KEYVAL, "wrong kind of keyval");
    allow_delete = 1;
    CHECK(MPI_Type_free(&t) == MPI_SUCCESS, "type free");
    MPI_Type_free_keyval(&key);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    if (rank == 0)
        printf("failing callbacks ok\n");
}

static void freed_keyvals(void) {
    int count = 1, key, saved, filler[8], i;
    MPI_Comm base, dup;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &base);
    MPI_Comm_create_keyval(counting_copy, counting_delete, &key, NULL);
    saved = key;
    MPI_Comm_set_attr(base, key, &count);
    MPI_Comm_free_keyval(&key);
    CHECK(key == MPI_KEYVAL_INVALID, "freed keyval handle");
    /* New keyvals must not take the place of the one still in use. */
    for (i = 0; i < 8; i++)
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &filler[i], NULL);
    MPI_Comm_dup(base, &dup);
    CHECK(count == 2, "copy callback of a freed keyval");
    MPI_Comm_free(&dup);
    CHECK(count == 1, "delete callback of a freed keyval on free");
    MPI_Comm_free(&base);
    CHECK(count == 0, "delete callback of a freed keyval on the original");
    for (i = 0; i < 8; i++)
        MPI_Comm_free_keyval(&filler[i]);
    /* The attribute is gone, so is the keyval. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(class_of(MPI_Comm_set_attr(MPI_COMM_WORLD, saved, NULL)) == MPI_ERR_KEYVAL, "keyval gone");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    if (rank == 0)
        printf("freed keyvals ok\n");
}

/* Deletion at MPI_Finalize: the order seen, and whether MPI still worked. */
#define NKEYS 6
static int order[2 * NKEYS], ncalls = 0, mpi_usable = 1;
static int finalize_delete(MPI_Comm c, int k, void *v, void *extra) {
    int flag, size;
    (void)k; (void)extra;
    MPI_Finalized(&flag);
    if (flag || MPI_Comm_size(c, &size) != MPI_SUCCESS)
        mpi_usable = 0;
    order[ncalls++] = (int)(long)v;
    return MPI_SUCCESS;
}

int main(int argc, char **argv) {
    int keys[NKEYS], i;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    failing_callbacks();
    freed_keyvals();
    /* World attributes 100.., self attributes 0.., set interleaved; keyvals
     * freed at once. */
    for (i = 0; i < NKEYS; i++) {
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalize_delete, &keys[i], NULL);
        MPI_Comm_set_attr(i % 2 ? MPI_COMM_WORLD : MPI_COMM_SELF, keys[i],
                          (void *)(long)(i % 2 ? 100 + i : i));
    }
    for (i = 0; i < NKEYS; i++)
        MPI_Comm_free_keyval(&keys[i]);
    MPI_Finalize();
    if (rank == 0) {
        char seen[256] = "";
        for (i = 0; i < ncalls; i++)
            sprintf(seen + strlen(seen), "%s%d", i ? " " : "", order[i]);
        printf("finalize deletes: %s; MPI usable: %s\n", seen, mpi_usable ? "yes" : "no");
    }
    return 0;
}
