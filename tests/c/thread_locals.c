/* The program's own thread-local variables in ranks run as threads: initial
 * values on the rank's thread and on threads the rank starts, each thread
 * with its own copy, each rank with its own across calls that run other ranks
 * on its worker, and a large block next to them. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static __thread int counter = 42;
static __thread double weights[4] = {1.5, 2.5, 3.5, 4.5};
static __thread char scratch[4096];
static __thread const char *label = "initial";
#ifdef TOO_BIG
/* More than ranks run as threads can hold: the job must refuse it by name. */
__thread char huge[128 * 1024];
#endif

static int check_initial(void) {
    int errs = 0;
    if (counter != 42) errs++;
    for (int i = 0; i < 4; i++)
        if (weights[i] != 1.5 + i) errs++;
    for (int i = 0; i < 4096; i++)
        if (scratch[i] != 0) { errs++; break; }
    if (label == NULL || strcmp(label, "initial") != 0) errs++;
#ifdef TOO_BIG
    huge[counter] = 1;
    errs += huge[counter + 1];
#endif
    return errs;
}

static void *worker(void *arg) {
    int *errs = arg;
    *errs += check_initial();
    counter = 7;
    memset(scratch, 0x5a, sizeof scratch);
    label = "thread";
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (counter != 7 || scratch[4095] != 0x5a) (*errs)++;
    return NULL;
}

int main(int argc, char **argv) {
    int provided, rank, errs = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    errs += check_initial();
    int thread_errs[3] = {0, 0, 0};
    pthread_t t[3];
    for (int i = 0; i < 3; i++) pthread_create(&t[i], NULL, worker, &thread_errs[i]);
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < 3; i++) errs += thread_errs[i];
    /* The threads wrote their own copies, not this one. */
    if (counter != 42 || scratch[0] != 0 || strcmp(label, "initial") != 0) errs++;
    /* Each rank has its own: values set before calls that let the worker run
     * other ranks are still the rank's after them. */
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int round = 0; round < 50; round++) {
        counter = rank * 1000 + round;
        scratch[rank % 4096] = (char)(rank + round);
        label = (rank % 2) ? "odd" : "even";
        MPI_Barrier(MPI_COMM_WORLD);
        int token = rank;
        MPI_Sendrecv_replace(&token, 1, MPI_INT, (rank + 1) % size, 0, (rank + size - 1) % size, 0,
                             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (counter != rank * 1000 + round || scratch[rank % 4096] != (char)(rank + round) ||
            strcmp(label, (rank % 2) ? "odd" : "even") != 0)
            errs++;
    }
    int all = 0;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("thread locals errors %d\n", all);
    MPI_Finalize();
    return 0;
}
