//! mpcrs-fort (installed also as mpifort, mpif90, mpif77): compiles and links
//! Fortran MPI programs against mpcrs's mpif.h, `mpi` module and libmpi (see
//! mpi::wrapper).
fn main() -> std::process::ExitCode {
    mpi::wrapper::main()
}
