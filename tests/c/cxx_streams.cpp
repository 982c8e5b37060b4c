// std::cout from every rank, and throw/catch of a standard and a user-defined
// exception per rank: the program's copy of std::cout and of the typeinfo of
// std::runtime_error (copy relocations) must agree with libstdc++'s.
#include <mpi.h>
#include <iostream>
#include <stdexcept>
#include <string>

struct RankError {
    int rank;
};

static void fail(int rank) {
    if (rank >= 0) throw std::runtime_error("boom-" + std::to_string(rank));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::cout << "rank " << rank << " of " << size << " says hello" << std::endl;
    try {
        fail(rank);
    } catch (const std::exception &e) {
        std::cout << "rank " << rank << " caught " << e.what() << std::endl;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    try {
        throw RankError{rank};
    } catch (const RankError &e) {
        std::cout << "rank " << rank << " caught RankError " << e.rank << std::endl;
    }
    MPI_Finalize();
    return 0;
}
