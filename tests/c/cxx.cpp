// C++ through mpcrs-cxx: static constructors run once per rank's copy, and
// standard containers work in ranks.
#include <mpi.h>
#include <cstdio>
#include <numeric>
#include <vector>

struct Counter {
    int constructed = 0;
    Counter() { constructed++; }
};
static Counter counter; // one per rank: each rank's image copy constructs its own

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<int> mine(4, rank), all(4 * size);
    MPI_Allgather(mine.data(), 4, MPI_INT, all.data(), 4, MPI_INT, MPI_COMM_WORLD);
    long sum = std::accumulate(all.begin(), all.end(), 0L);
    int ok = counter.constructed == 1 && sum == 4L * size * (size - 1) / 2, allok = 0;
    MPI_Allreduce(&ok, &allok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (rank == 0) std::printf("c++ ranks %d: %s\n", size, allok ? "ok" : "WRONG");
    MPI_Finalize();
    return allok ? 0 : 1;
}
