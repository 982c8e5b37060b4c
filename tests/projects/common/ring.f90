program ring
  use mpi
  implicit none
  integer :: ierr, rank, total
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Reduce(rank, total, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0)', 'sum ', total
  call MPI_Finalize(ierr)
end program ring
