/* Info objects: key order, MPI_Info_get_string, MPI_Info_create_env, info
 * calls before MPI_Init and after MPI_Finalize, the hints a communicator
 * keeps. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;
#define CHECK(cond, what) do { if (!(cond)) { fprintf(stderr, "rank %d: FAILED %s (line %d)\n", rank, what, __LINE__); MPI_Abort(MPI_COMM_WORLD, 8); } } while (0)

static void same_env(MPI_Info a, MPI_Info b) {
    const char *keys[] = {"command", "argv", "maxprocs", "wdir"};
    char va[MPI_MAX_INFO_VAL], vb[MPI_MAX_INFO_VAL];
    for (int i = 0; i < 4; i++) {
        int la = MPI_MAX_INFO_VAL, lb = MPI_MAX_INFO_VAL, fa, fb;
        MPI_Info_get_string(a, keys[i], &la, va, &fa);
        MPI_Info_get_string(b, keys[i], &lb, vb, &fb);
        CHECK(fa && fb && strcmp(va, vb) == 0, keys[i]);
    }
}

int main(int argc, char **argv) {
    MPI_Info early, env_early, env;
    char key[MPI_MAX_INFO_KEY + 1], value[MPI_MAX_INFO_VAL];
    int flag, len, n, i;

    /* Before MPI_Init. */
    MPI_Info_create(&early);
    MPI_Info_set(early, "phase", "before");
    MPI_Info_create_env(argc, argv, &env_early);

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    /* Keys in the order first set; a new value keeps its place. */
    MPI_Info info;
    MPI_Info_create(&info);
    for (i = 0; i < 12; i++) {
        char k[32];
        sprintf(k, "key0-%d", i);
        MPI_Info_set(info, k, "v");
    }
    MPI_Info_set(info, "key0-0", "again");
    MPI_Info_delete(info, "key0-1");
    MPI_Info_set(info, "key0-1", "back");
    MPI_Info_get_nkeys(info, &n);
    CHECK(n == 12, "nkeys");
    char order[512] = "";
    for (i = 0; i < n; i++) {
        MPI_Info_get_nthkey(info, i, key);
        sprintf(order + strlen(order), "%s%s", i ? "," : "", key + 5);
    }
    if (rank == 0)
        printf("key order: %s\n", order);

    /* MPI_Info_get_string: the length with its NUL; truncated copies. */
    MPI_Info_set(info, "file", "runfile.txt");
    value[0] = 'C';
    len = 10;
    MPI_Info_get_string(info, "missing", &len, value, &flag);
    CHECK(!flag && value[0] == 'C' && len == 10, "missing key leaves value");
    len = 0;
    MPI_Info_get_string(info, "file", &len, value, &flag);
    CHECK(flag && len == 12 && value[0] == 'C', "zero buflen asks the size");
    len = 2;
    MPI_Info_get_string(info, "file", &len, value, &flag);
    CHECK(flag && len == 12 && value[0] == 'r' && value[1] == '\0', "truncated");
    len = MPI_MAX_INFO_VAL;
    MPI_Info_get_string(info, "file", &len, value, &flag);
    CHECK(flag && len == 12 && strcmp(value, "runfile.txt") == 0, "whole value");

    /* Errors go to MPI_COMM_WORLD's handler. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Info_delete(info, "missing"), cls;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_INFO_NOKEY, "delete of a missing key");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    if (rank == 0)
        printf("get_string ok\n");

    /* A communicator keeps the hints it understands. */
    MPI_Comm dup;
    MPI_Info hints, used;
    MPI_Info_create(&hints);
    MPI_Info_set(hints, "invalid_test_key", "true");
    MPI_Info_set(hints, "mpi_assert_no_any_source", "true");
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_info(dup, hints);
    MPI_Comm_get_info(dup, &used);
    MPI_Info_get(used, "invalid_test_key", MPI_MAX_INFO_VAL - 1, value, &flag);
    CHECK(!flag, "unknown hint ignored");
    MPI_Info_get(used, "mpi_assert_no_any_source", MPI_MAX_INFO_VAL - 1, value, &flag);
    CHECK(flag && strcmp(value, "true") == 0, "assertion kept");
    MPI_Info_free(&used);
    MPI_Info_free(&hints);
    MPI_Comm_free(&dup);
    if (rank == 0)
        printf("communicator hints ok\n");

    /* Info made before MPI_Init is usable, and the environment is the same. */
    MPI_Info_get(early, "phase", MPI_MAX_INFO_VAL - 1, value, &flag);
    CHECK(flag && strcmp(value, "before") == 0, "info from before MPI_Init");
    MPI_Info_create_env(argc, argv, &env);
    same_env(env, env_early);
    same_env(MPI_INFO_ENV, env);
    MPI_Info_get_string(env, "maxprocs", &(int){MPI_MAX_INFO_VAL}, value, &flag);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(atoi(value) == size, "maxprocs");
    MPI_Info_free(&env);
    MPI_Info_free(&info);
    MPI_Finalize();

    /* And after MPI_Finalize. */
    MPI_Info_create_env(argc, argv, &env);
    same_env(env, env_early);
    MPI_Info_set(early, "phase", "after");
    MPI_Info_get(early, "phase", MPI_MAX_INFO_VAL - 1, value, &flag);
    CHECK(flag && strcmp(value, "after") == 0, "info after MPI_Finalize");
    MPI_Info_free(&env);
    MPI_Info_free(&env_early);
    MPI_Info_free(&early);
    if (rank == 0)
        printf("before init and after finalize ok\n");
    return 0;
}
