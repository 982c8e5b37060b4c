// A thread libstdc++ starts (std::thread) calls MPI: libstdc++ is shared by
// the ranks and starts it through libc, so it acts for a rank only where the
// process holds one; with several, the job ends saying why.
#include <mpi.h>
#include <cstdio>
#include <thread>

int main(int argc, char **argv) {
    int provided, rank = -1, seen = -2;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::thread t([&] { MPI_Comm_rank(MPI_COMM_WORLD, &seen); });
    t.join();
    int bad = seen != rank, all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) std::printf("std::thread errors %d\n", all);
    MPI_Finalize();
    return 0;
}
