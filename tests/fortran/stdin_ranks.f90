! Standard input goes to rank 0 only, through Fortran's READ(*) and READ(5)
! too. The other ranks read first, highest rank first, so that a rank sharing
! rank 0's input would take its lines (or leave unit 5 at end of file for
! rank 0); then rank 0 reads its three lines.
program stdin_ranks
  use mpi
  implicit none
  integer :: rank, size, ierr, r, ios1, ios2, n
  character(len=32) :: line

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  do r = size - 1, 0, -1
     if (r == rank) then
        line = 'none'
        n = -1
        read (*, '(A)', iostat=ios1) line
        read (5, *, iostat=ios2) n
        if (rank == 0) then
           print '(A,I0,A,A,A,I0,A,I0,A,I0)', 'rank ', rank, ' line ', trim(line), &
                ' ios ', ios1, ' n ', n, ' ios ', ios2
           ! A third read still works for rank 0 after the others' end of file.
           read (*, '(A)', iostat=ios1) line
           print '(A,I0,A,A,A,I0)', 'rank ', rank, ' then ', trim(line), ' ios ', ios1
        else
           print '(A,I0,A,A,A,L1,A,I0,A,L1)', 'rank ', rank, ' line ', trim(line), &
                ' end ', is_iostat_end(ios1), ' n ', n, ' end ', is_iostat_end(ios2)
        end if
        flush (6)
     end if
     call MPI_Barrier(MPI_COMM_WORLD, ierr)
  end do
  call MPI_Finalize(ierr)
end program stdin_ranks
