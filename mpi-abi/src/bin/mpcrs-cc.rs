//! mpcrs-cc: compiles and links C MPI programs against mpcrs (see mpi::wrapper).
fn main() -> std::process::ExitCode {
    mpi::wrapper::main()
}
