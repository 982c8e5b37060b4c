/* MPI_THREAD_MULTIPLE: each rank starts THREADS pthreads that call MPI at once:
 * blocking sends and receives between the same thread of neighbouring ranks
 * (tag = thread), on one shared communicator and on a communicator of the
 * thread's own, and allreduces on the thread's own communicator. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

#define THREADS 4
#define ROUNDS 2000
static int rank, size;
static MPI_Comm own[THREADS];
static int failures;

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "rank %d: FAILED ", rank); \
    fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); MPI_Abort(MPI_COMM_WORLD, 6); } } while (0)

static void *worker(void *arg) {
    int t = (int)(long)arg, flag = 1;
    MPI_Is_thread_main(&flag);
    CHECK(!flag, "thread %d says it is the main thread", t);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int i = 0; i < ROUNDS; i++) {
        int out = rank * 100000 + t * 10000 + i, in = -1;
        MPI_Comm c = i % 2 ? own[t] : MPI_COMM_WORLD;
        if (rank % 2 == 0) {
            MPI_Send(&out, 1, MPI_INT, right, t, c);
            MPI_Recv(&in, 1, MPI_INT, left, t, c, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&in, 1, MPI_INT, left, t, c, MPI_STATUS_IGNORE);
            MPI_Send(&out, 1, MPI_INT, right, t, c);
        }
        CHECK(in == left * 100000 + t * 10000 + i, "thread %d round %d got %d", t, i, in);
        if (i % 100 == 0) {
            int one = t + 1, sum = 0;
            MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, own[t]);
            CHECK(sum == size * (t + 1), "thread %d allreduce %d", t, sum);
        }
    }
    return NULL;
}

int main(int argc, char **argv) {
    int provided = -1, level = -1, flag = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_Query_thread(&level);
    CHECK(level == MPI_THREAD_MULTIPLE, "query_thread %d", level);
    MPI_Is_thread_main(&flag);
    CHECK(flag, "the main thread is not the main thread");
    for (int t = 0; t < THREADS; t++) MPI_Comm_dup(MPI_COMM_WORLD, &own[t]);
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++) pthread_create(&th[t], NULL, worker, (void *)(long)t);
    for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    for (int t = 0; t < THREADS; t++) MPI_Comm_free(&own[t]);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("thread multiple ok %d\n", failures);
    MPI_Finalize();
    return 0;
}
