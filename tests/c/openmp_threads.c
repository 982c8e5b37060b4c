/* OpenMP threads of a rank call MPI under MPI_THREAD_MULTIPLE: each thread of
 * the team exchanges with the same thread of the neighbouring ranks on its own
 * tag and checks MPI_Comm_rank. With the argument "funneled" the team only
 * computes and the rank alone calls MPI. */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

static int funneled(int rank, int size) {
    enum { N = 1 << 16 };
    static double v[N];
    double local = 0, total = 0;
    int errs = 0;
    for (int round = 0; round < 20; round++) {
#pragma omp parallel for num_threads(4) reduction(+ : local)
        for (int i = 0; i < N; i++) {
            v[i] = rank + i % 7 + round;
            local += v[i];
        }
        MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        double expect = 0;
        for (int r = 0; r < size; r++)
            for (int i = 0; i < N; i++) expect += r + i % 7 + round;
        if (total != expect) errs++;
        local = 0;
    }
    return errs;
}

int main(int argc, char **argv) {
    int provided, rank, size, errs = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && strcmp(argv[1], "funneled") == 0) {
        errs = funneled(rank, size);
        if (rank == 0) printf("openmp funneled errors %d\n", errs);
        MPI_Finalize();
        return 0;
    }
    if (provided != MPI_THREAD_MULTIPLE) errs++;
#pragma omp parallel num_threads(4) reduction(+ : errs)
    {
        int t = omp_get_thread_num(), r = -1;
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
        if (r != rank) errs++;
        int to = (rank + 1) % size, from = (rank + size - 1) % size;
        int out = rank * 100 + t, in = -1;
        MPI_Sendrecv(&out, 1, MPI_INT, to, t, &in, 1, MPI_INT, from, t, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        if (in != from * 100 + t) errs++;
    }
    int all = 0;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("openmp threads errors %d\n", all);
    MPI_Finalize();
    return 0;
}
