/* Bad input to CRaaS: each call answers with its named error code (and one
 * line naming the call and rank), never a crash; then a good commit and its
 * restore still work. Prints "codes ok" (rank 0) when every code matched. */
#include <craas.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int bad = 0;
static void expect(const char *what, long got, long want) {
    if (got != want) {
        printf("%s: %ld, expected %ld\n", what, got, want);
        bad = 1;
    }
}

int main(int argc, char **argv) {
    double x[4] = {1, 2, 3, 4}, y[4] = {0}, z[3];
    char longname[CRAAS_MAX_NAME + 2];
    expect("before MPI_Init", CRaaS_Commit("c"), CRAAS_ERR_NOT_RANK);
    MPI_Init(&argc, &argv);
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    expect("NULL data", CRaaS_Ckpt_array("c", "x", NULL, 8), CRAAS_ERR_ARG);
    expect("NULL checkpoint", CRaaS_Ckpt_array(NULL, "x", x, 8), CRAAS_ERR_ARG);
    expect("long name", CRaaS_Ckpt_array("c", longname, x, 8), CRAAS_ERR_NAME);
    expect("long checkpoint", CRaaS_Commit(longname), CRAAS_ERR_NAME);
    expect("bad checkpoint", CRaaS_Commit("../up"), CRAAS_ERR_NAME);
    expect("unknown checkpoint", CRaaS_Rst_array("none", "x", y, sizeof y), CRAAS_ERR_NO_CKPT);
    expect("no index yet", CRaaS_Rst_index("none", "i"), 0);
    expect("exists before", CRaaS_Exists("c"), 0);
    expect("stage", CRaaS_Ckpt_array("c", "x", x, sizeof x), CRAAS_SUCCESS);
    expect("index", CRaaS_Ckpt_index("c", "i", 41), CRAAS_SUCCESS);
    expect("commit", CRaaS_Commit("c"), CRAAS_SUCCESS);
    expect("exists", CRaaS_Exists("c"), 1);
    expect("unknown name", CRaaS_Rst_array("c", "w", y, sizeof y), CRAAS_ERR_NO_NAME);
    expect("wrong size", CRaaS_Rst_array("c", "x", z, sizeof z), CRAAS_ERR_SIZE);
    expect("NULL buffer", CRaaS_Rst_array("c", "x", NULL, sizeof y), CRAAS_ERR_ARG);
    expect("restore", CRaaS_Rst_array("c", "x", y, sizeof y), CRAAS_SUCCESS);
    expect("restored", (long)(y[3] * 10), 40);
    expect("index back", CRaaS_Rst_index("c", "i"), 41);
    expect("delete", CRaaS_Delete("c"), CRAAS_SUCCESS);
    expect("exists after delete", CRaaS_Exists("c"), 0);
    int rank, all = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Reduce(&bad, &all, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0 && !all) printf("codes ok\n");
    MPI_Finalize();
    return 0;
}
