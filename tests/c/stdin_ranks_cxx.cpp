// Standard input goes to rank 0 only, through std::cin too: each rank in
// turn reads a word and a number; the others find end of file.
#include <mpi.h>
#include <iostream>
#include <string>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int r = 0; r < size; r++) {
        if (r == rank) {
            std::string word = "none";
            int n = -1;
            bool ok = static_cast<bool>(std::cin >> word >> n);
            std::cout << "rank " << rank << " cin " << (ok ? "ok" : "eof") << " " << word << " " << n
                      << std::endl;
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
